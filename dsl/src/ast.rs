//! The typed syntax tree: what the source says, with a span on everything an error may point
//! at. It is built by [`crate::parse`] and never mutated; later passes resolve names against
//! it ([`crate::check`]) and translate it ([`crate::lower`]).

/// A byte range in the source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A name as written, with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it is.
    pub span: Span,
}

/// A whole source file.
#[derive(Clone, Debug)]
pub struct Program {
    /// Top-level declarations in source order.
    pub decls: Vec<Decl>,
}

/// A top-level declaration.
#[derive(Clone, Debug)]
pub enum Decl {
    /// `const bit<16> NAME = 0x0800;`
    Const(ConstDecl),
    /// `typedef bit<48> mac_addr_t;`
    Typedef(TypedefDecl),
    /// `header NAME { ... }`
    Header(AggregateDecl),
    /// `struct NAME { ... }`
    Struct(AggregateDecl),
    /// `parser NAME(...) { ... }`
    Parser(ParserDecl),
    /// `control NAME(...) { ... }`
    Control(ControlDecl),
    /// `Pipeline(...) pipe;` and `Switch(pipe) main;`
    Instance(Instantiation),
    /// `enum bit<8> NAME { A = 1, ... }`
    Enum(EnumDecl),
}

/// `enum bit<W> NAME { MEMBER = value, ... }` (members without values are rejected).
#[derive(Clone, Debug)]
pub struct EnumDecl {
    /// The underlying type (`None` for a plain enum, which is not supported).
    pub ty: Option<TypeRef>,
    /// Name.
    pub name: Ident,
    /// Members with their values.
    pub members: Vec<(Ident, Option<Expr>)>,
}

/// A type as written.
#[derive(Clone, Debug)]
pub enum TypeRef {
    /// `bit<N>`.
    Bit(u16, Span),
    /// `bool`.
    Bool(Span),
    /// A header, struct, typedef or built-in type name.
    Named(Ident),
}

impl TypeRef {
    /// Where the type is written.
    pub fn span(&self) -> Span {
        match self {
            TypeRef::Bit(_, s) | TypeRef::Bool(s) => *s,
            TypeRef::Named(i) => i.span,
        }
    }
}

/// `const T NAME = value;`
#[derive(Clone, Debug)]
pub struct ConstDecl {
    /// Declared type.
    pub ty: TypeRef,
    /// Name.
    pub name: Ident,
    /// Value expression (must be a constant).
    pub value: Expr,
}

/// `typedef T NAME;`
#[derive(Clone, Debug)]
pub struct TypedefDecl {
    /// Aliased type.
    pub ty: TypeRef,
    /// New name.
    pub name: Ident,
}

/// A header or struct declaration.
#[derive(Clone, Debug)]
pub struct AggregateDecl {
    /// Type name.
    pub name: Ident,
    /// Fields in declaration (= wire) order.
    pub fields: Vec<FieldDecl>,
}

/// One field of a header or struct.
#[derive(Clone, Debug)]
pub struct FieldDecl {
    /// Field type.
    pub ty: TypeRef,
    /// Field name.
    pub name: Ident,
}

/// Parameter direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// No direction (extern objects such as `packet_in`).
    None,
    /// `in`.
    In,
    /// `out`.
    Out,
    /// `inout`.
    InOut,
}

/// A parameter of a parser, control or action.
#[derive(Clone, Debug)]
pub struct Param {
    /// Direction.
    pub dir: Direction,
    /// Type.
    pub ty: TypeRef,
    /// Name.
    pub name: Ident,
}

/// `parser NAME(params) { states }`
#[derive(Clone, Debug)]
pub struct ParserDecl {
    /// Name.
    pub name: Ident,
    /// Parameters.
    pub params: Vec<Param>,
    /// States in source order.
    pub states: Vec<StateDecl>,
}

/// `state NAME { stmts transition }`
#[derive(Clone, Debug)]
pub struct StateDecl {
    /// Name.
    pub name: Ident,
    /// Statements before the transition.
    pub stmts: Vec<Stmt>,
    /// The transition, if written (a state without one is an error).
    pub transition: Option<TransitionDecl>,
    /// The whole state.
    pub span: Span,
}

/// `transition NAME;` or `transition select(...) { ... }`
#[derive(Clone, Debug)]
pub enum TransitionDecl {
    /// To a state, `accept` or `reject`.
    Direct(Ident),
    /// A select over key expressions.
    Select {
        /// Key expressions.
        keys: Vec<Expr>,
        /// Cases in order.
        cases: Vec<SelectCaseDecl>,
        /// The whole select.
        span: Span,
    },
}

/// `keyset : NAME;`
#[derive(Clone, Debug)]
pub struct SelectCaseDecl {
    /// One pattern per key (a single `default` stands for all).
    pub keyset: Vec<Pattern>,
    /// Next state.
    pub next: Ident,
    /// The whole case.
    pub span: Span,
}

/// One element of a keyset (select case or table entry).
#[derive(Clone, Debug)]
pub enum Pattern {
    /// An exact value.
    Value(Expr),
    /// `value &&& mask`.
    Mask(Expr, Expr),
    /// `lo .. hi`.
    Range(Expr, Expr),
    /// `default` or `_`.
    Any(Span),
}

impl Pattern {
    /// Where the pattern is written.
    pub fn span(&self) -> Span {
        match self {
            Pattern::Value(e) => e.span,
            Pattern::Mask(a, b) | Pattern::Range(a, b) => a.span.to(b.span),
            Pattern::Any(s) => *s,
        }
    }
}

/// `control NAME(params) { locals apply { ... } }`
#[derive(Clone, Debug)]
pub struct ControlDecl {
    /// Name.
    pub name: Ident,
    /// Parameters.
    pub params: Vec<Param>,
    /// Actions.
    pub actions: Vec<ActionDecl>,
    /// Tables.
    pub tables: Vec<TableDecl>,
    /// Extern instances (`Checksum() c;`, `Register<...>(...) r;`).
    pub instances: Vec<Instantiation>,
    /// Local variables declared among the control's locals (`bit<16> tmp;`).
    pub locals: Vec<VarDecl>,
    /// The apply block.
    pub apply: Block,
}

/// `Type<args>(ctor args) name;`
#[derive(Clone, Debug)]
pub struct Instantiation {
    /// Type name (generic arguments are rejected when checked).
    pub type_name: Ident,
    /// Whether `<...>` type arguments were written.
    pub generic: bool,
    /// The `<...>` type arguments.
    pub type_args: Vec<TypeRef>,
    /// Constructor arguments.
    pub args: Vec<Expr>,
    /// Instance name.
    pub name: Ident,
    /// Functions of an initializer block (`= { void apply(...) { ... } }`).
    pub functions: Vec<ExternFn>,
    /// The whole declaration.
    pub span: Span,
}

/// A function in an extern's initializer block (a `RegisterAction`'s `apply`).
#[derive(Clone, Debug)]
pub struct ExternFn {
    /// The return type (`None` for `void`).
    pub ret: Option<TypeRef>,
    /// Name.
    pub name: Ident,
    /// Parameters.
    pub params: Vec<Param>,
    /// Body.
    pub body: Block,
}

/// `T name;` or `T name = init;`
#[derive(Clone, Debug)]
pub struct VarDecl {
    /// Type.
    pub ty: TypeRef,
    /// Name.
    pub name: Ident,
    /// Initial value.
    pub init: Option<Expr>,
    /// The whole declaration.
    pub span: Span,
}

/// One `label: { ... }` of a `switch`.
#[derive(Clone, Debug)]
pub struct SwitchCase {
    /// The action named, or `None` for `default`.
    pub label: Option<Ident>,
    /// The block (`None`: falls through to the next case's block).
    pub body: Option<Block>,
    /// The whole case.
    pub span: Span,
}

/// An annotation written before a table or an action: `@name("...")`, `@stage(2, 1024)`, or
/// a P4_14-style pragma, `@pragma stage 2 1024`, which runs to the end of its line.
#[derive(Clone, Debug)]
pub struct Annotation {
    /// Its name (`stage` for both `@stage(...)` and `@pragma stage ...`).
    pub name: Ident,
    /// Whether it is written as `@pragma NAME ...`.
    pub pragma: bool,
    /// Its arguments as written, trimmed: separated by commas between the parentheses, by
    /// blanks after a pragma's name.
    pub args: Vec<String>,
    /// The whole annotation.
    pub span: Span,
}

/// `action NAME(params) { body }`
#[derive(Clone, Debug)]
pub struct ActionDecl {
    /// Annotations written before it.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// Parameters (all directionless: action data).
    pub params: Vec<Param>,
    /// Body.
    pub body: Block,
}

/// `table NAME { properties }`
#[derive(Clone, Debug)]
pub struct TableDecl {
    /// Annotations written before it.
    pub annotations: Vec<Annotation>,
    /// Name.
    pub name: Ident,
    /// `key = { ... }`.
    pub keys: Vec<KeyElem>,
    /// `actions = { ... }`.
    pub actions: Vec<Ident>,
    /// `default_action = call;`.
    pub default_action: Option<Expr>,
    /// `size = N;`.
    pub size: Option<Expr>,
    /// `const entries = { ... }`.
    pub entries: Vec<EntryDecl>,
    /// `counters = direct_counter;`.
    pub counters: Option<Ident>,
}

/// `expr : kind;`
#[derive(Clone, Debug)]
pub struct KeyElem {
    /// Key expression (a field).
    pub expr: Expr,
    /// Match kind name (`exact`, `lpm`, `ternary`, `range`).
    pub kind: Ident,
}

/// `keyset : action(args);`
#[derive(Clone, Debug)]
pub struct EntryDecl {
    /// One pattern per key.
    pub keyset: Vec<Pattern>,
    /// The action call.
    pub action: Expr,
    /// The whole entry.
    pub span: Span,
}

/// `{ stmts }`
#[derive(Clone, Debug)]
pub struct Block {
    /// Statements.
    pub stmts: Vec<Stmt>,
    /// The braces and everything between.
    pub span: Span,
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `lhs = rhs;`
    Assign {
        /// Destination.
        lhs: Expr,
        /// Source.
        rhs: Expr,
        /// The whole statement.
        span: Span,
    },
    /// `expr;` where expr is a call.
    Call(Expr),
    /// `if (cond) then else els`
    If {
        /// Condition.
        cond: Expr,
        /// Then branch.
        then: Block,
        /// Else branch (an else-if is a block holding one `If`).
        els: Option<Block>,
        /// The whole statement.
        span: Span,
    },
    /// A nested block.
    Block(Block),
    /// A local variable declaration.
    VarDecl(VarDecl),
    /// `switch (t.apply().action_run) { ... }`
    Switch {
        /// The switched expression.
        expr: Expr,
        /// Cases in order.
        cases: Vec<SwitchCase>,
        /// The whole statement.
        span: Span,
    },
}

/// An expression with its span.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it is.
    pub span: Span,
}

/// Expression forms.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An integer literal, with its width if written as `8w5`.
    Int {
        /// Value.
        value: u128,
        /// Width prefix.
        width: Option<u16>,
    },
    /// `true` / `false`.
    Bool(bool),
    /// A plain name.
    Name(Ident),
    /// `base.member`.
    Member(Box<Expr>, Ident),
    /// `callee(args)`.
    Call(Box<Expr>, Vec<Expr>),
    /// `{a, b, c}`.
    List(Vec<Expr>),
    /// `op a`.
    Unary(UnOp, Box<Expr>),
    /// `a op b`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `(bit<N>) a` or `(bool) a`.
    Cast(TypeRef, Box<Expr>),
    /// `a[hi:lo]`.
    Slice(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `callee<types>(args)` (only `pkt.lookahead<T>()` is supported).
    GenericCall(Box<Expr>, Vec<TypeRef>, Vec<Expr>),
}

impl Expr {
    /// The dotted name `a.b.c` this expression spells, if it is one.
    pub fn path(&self) -> Option<Vec<&Ident>> {
        match &self.kind {
            ExprKind::Name(i) => Some(vec![i]),
            ExprKind::Member(base, m) => {
                let mut p = base.path()?;
                p.push(m);
                Some(p)
            }
            _ => None,
        }
    }

    /// If this is a method call `target.method(args)`: the target, method name and arguments.
    pub fn method_call(&self) -> Option<(&Expr, &Ident, &[Expr])> {
        match &self.kind {
            ExprKind::Call(callee, args) => match &callee.kind {
                ExprKind::Member(target, method) => Some((target, method, args)),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `!` (boolean).
    Not,
    /// `~` (bitwise).
    BitNot,
    /// `-` (negation; not supported).
    Neg,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `||`
    Or,
    /// `&&`
    And,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `&`
    BitAnd,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `|+|`
    AddSat,
    /// `|-|`
    SubSat,
    /// `++` (concatenation).
    Concat,
    /// `*`, `/`, `%` (parsed so they can be rejected by name).
    Unsupported(&'static str),
}
