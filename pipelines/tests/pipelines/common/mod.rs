//! Hand-built programs for the pipe's tests: a PHV allocator, a router-like parser
//! (Ethernet, IPv4) and helpers to add tables, actions and externs, so every primitive can
//! be tested without the compiler.

use pipelines::pipe::{GressInputs, LoadedGress};
use pipelines::program::*;
use pipelines::spec::*;
use pipelines::time::Clock;

/// A teaching-like pipe (latencies 4 / 2 (+1 TCAM, +1 stateful, +1 meter) / 4), roomy PHV.
pub fn spec() -> PipeSpec {
    PipeSpec {
        stages: 8,
        stage: StageResources {
            sram_blocks: 8,
            sram_depth: 256,
            sram_width_bits: 64,
            tcam_blocks: 2,
            tcam_depth: 64,
            tcam_width_bits: 32,
            logical_tables: 4,
            stateful_alus: 1,
            meter_alus: 1,
            stats_alus: 2,
            hash_bits: 64,
            gateways: 4,
            vliw_slots: 48,
        },
        phv: PhvSpec {
            b8: 32,
            b16: 32,
            b32: 64,
        },
        latency: LatencySpec {
            parser_cycles: 4,
            deparser_cycles: 4,
            stage_base_cycles: 2,
            tcam_extra_cycles: 1,
            stateful_extra_cycles: 1,
            meter_extra_cycles: 1,
        },
        parser: ParserSpec {
            max_states: 16,
            max_depth: 8,
        },
        salu: SaluSpec {
            conditions: 2,
            updates: 2,
            outputs: 1,
            max_width_bits: 32,
            minmax: true,
        },
        meter: MeterSpec {
            byte_count_adjust_bits: 14,
        },
    }
}

/// 1 GHz: cycle n starts at n ns.
pub fn clock() -> Clock {
    Clock::new(1_000_000_000)
}

/// Builds a gress program field by field.
pub struct Builder {
    pub g: GressProgram,
    next: [u16; 3],
    base: [u16; 3],
}

/// Field ids of the router-like headers.
#[derive(Clone, Copy, Debug)]
pub struct Hdr {
    pub eth: HeaderId,
    pub eth_dst: FieldId,
    pub eth_src: FieldId,
    pub eth_type: FieldId,
    pub ipv4: HeaderId,
    pub ver_ihl: FieldId,
    pub ttl: FieldId,
    pub proto: FieldId,
    pub ip_src: FieldId,
    pub ip_dst: FieldId,
    pub port: FieldId,
    pub port_valid: FieldId,
    pub drop: FieldId,
    pub ingress_port: FieldId,
    pub pkt_len: FieldId,
    pub parser_error: FieldId,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    pub fn new() -> Builder {
        let p = spec().phv;
        Builder {
            g: GressProgram {
                phv: PhvLayout::default(),
                parser: ParserProgram::default(),
                control: ControlProgram::default(),
                deparser: DeparserProgram::default(),
            },
            next: [0, p.b8, p.b8 + p.b16],
            base: [0, p.b8, p.b8 + p.b16],
        }
    }

    fn take(&mut self, class: usize) -> u16 {
        let c = self.next[class];
        self.next[class] += 1;
        c
    }

    /// A field in fresh containers: 8/16-bit containers for narrow fields, 32-bit ones
    /// (most significant slice first) for wider ones.
    pub fn field(&mut self, name: &str, width: u16) -> FieldId {
        let mut slices = vec![];
        if width <= 8 {
            slices.push(PhvSlice {
                container: self.take(0),
                lsb: 0,
                width: width as u8,
            });
        } else if width <= 16 {
            slices.push(PhvSlice {
                container: self.take(1),
                lsb: 0,
                width: width as u8,
            });
        } else {
            let mut left = width;
            let first = width % 32;
            if first != 0 {
                slices.push(PhvSlice {
                    container: self.take(2),
                    lsb: 0,
                    width: first as u8,
                });
                left -= first;
            }
            while left > 0 {
                slices.push(PhvSlice {
                    container: self.take(2),
                    lsb: 0,
                    width: 32,
                });
                left -= 32;
            }
        }
        let _ = self.base;
        self.g.phv.fields.push(Field {
            name: name.into(),
            width,
            slices,
        });
        (self.g.phv.fields.len() - 1) as FieldId
    }

    pub fn header(&mut self, name: &str, fields: &[(&str, u16)]) -> (HeaderId, Vec<FieldId>) {
        let ids: Vec<FieldId> = fields
            .iter()
            .map(|(n, w)| self.field(&format!("{name}.{n}"), *w))
            .collect();
        let valid = self.field(&format!("{name}.$valid"), 1);
        self.g.phv.headers.push(Header {
            name: name.into(),
            fields: ids.clone(),
            valid,
        });
        ((self.g.phv.headers.len() - 1) as HeaderId, ids)
    }

    pub fn intrinsic(&mut self, name: &str, width: u16, i: Intrinsic) -> FieldId {
        let f = self.field(name, width);
        self.g.phv.intrinsics.push((i, f));
        f
    }

    /// Ethernet then IPv4 (on EtherType 0x0800); ingress intrinsics; deparser emitting both
    /// with the IPv4 checksum; a control with `stages` stages and nothing in it.
    pub fn router(stages: u16) -> (Builder, Hdr) {
        let mut b = Builder::new();
        let (eth, e) = b.header(
            "hdr.ethernet",
            &[("dst_addr", 48), ("src_addr", 48), ("ether_type", 16)],
        );
        let (ipv4, ip) = b.header(
            "hdr.ipv4",
            &[
                ("version_ihl", 8),
                ("diffserv", 8),
                ("total_len", 16),
                ("identification", 16),
                ("flags_frag", 16),
                ("ttl", 8),
                ("protocol", 8),
                ("hdr_checksum", 16),
                ("src_addr", 32),
                ("dst_addr", 32),
            ],
        );
        let port = b.intrinsic("ig_tm_md.ucast_egress_port", 9, Intrinsic::UcastEgressPort);
        let port_valid = b.intrinsic("$port_valid", 1, Intrinsic::UcastEgressPortValid);
        let drop = b.intrinsic("ig_dprsr_md.drop_ctl", 3, Intrinsic::DropCtl);
        let ingress_port = b.intrinsic("ig_intr_md.ingress_port", 9, Intrinsic::IngressPort);
        let pkt_len = b.intrinsic("$pkt_length", 16, Intrinsic::PacketLength);
        let parser_error = b.intrinsic("ig_prsr_md.parser_err", 16, Intrinsic::ParserError);
        b.g.parser = ParserProgram {
            states: vec![
                ParserState {
                    name: "start".into(),
                    ops: vec![ParserOp::Extract(eth)],
                    transition: Transition::Select {
                        keys: vec![SelectKey::Field {
                            field: e[2],
                            hi: 15,
                            lo: 0,
                        }],
                        cases: vec![SelectCase {
                            pattern: CasePattern::Masked {
                                value: 0x0800,
                                mask: 0xffff,
                            },
                            next: Next::State(1),
                        }],
                        default: Next::Accept,
                    },
                },
                ParserState {
                    name: "parse_ipv4".into(),
                    ops: vec![ParserOp::Extract(ipv4)],
                    transition: Transition::Direct(Next::Accept),
                },
            ],
            start: 0,
            on_error: ParserErrorPolicy::Drop,
        };
        let mut sources = ip.clone();
        sources.remove(7); // the checksum itself
        b.g.deparser = DeparserProgram {
            emit: vec![eth, ipv4],
            checksums: vec![ChecksumUpdate {
                dst: ip[7],
                sources,
                when_valid: ipv4,
            }],
            mirror_emit: Vec::new(),
        };
        b.g.control.stages = stages;
        let hdr = Hdr {
            eth,
            eth_dst: e[0],
            eth_src: e[1],
            eth_type: e[2],
            ipv4,
            ver_ihl: ip[0],
            ttl: ip[5],
            proto: ip[6],
            ip_src: ip[8],
            ip_dst: ip[9],
            port,
            port_valid,
            drop,
            ingress_port,
            pkt_len,
            parser_error,
        };
        (b, hdr)
    }

    pub fn action(&mut self, name: &str, params: &[(&str, u16)], ops: Vec<Op>) -> ActionId {
        self.action_x(name, params, ops, vec![])
    }

    pub fn action_x(
        &mut self,
        name: &str,
        params: &[(&str, u16)],
        ops: Vec<Op>,
        externs: Vec<ExternCall>,
    ) -> ActionId {
        self.g.control.actions.push(Action {
            name: name.into(),
            params: params
                .iter()
                .map(|(n, w)| ActionParam {
                    name: n.to_string(),
                    width: *w,
                })
                .collect(),
            ops,
            externs,
        });
        (self.g.control.actions.len() - 1) as ActionId
    }

    /// A table; `next` defaults to `Always(None)`.
    #[allow(clippy::too_many_arguments)]
    pub fn table(
        &mut self,
        name: &str,
        stage: u16,
        keys: &[(FieldId, MatchKind)],
        actions: &[ActionId],
        default: ActionId,
        default_args: Vec<u128>,
        size: u32,
    ) -> TableId {
        self.g.control.tables.push(Table {
            name: name.into(),
            stage,
            keys: keys
                .iter()
                .map(|&(field, kind)| TableKey {
                    field,
                    kind,
                    name: format!("k{field}"),
                    slice: None,
                })
                .collect(),
            actions: actions.to_vec(),
            default_action: ActionCall {
                action: default,
                args: default_args,
            },
            size,
            const_entries: vec![],
            next: TableNext::Always(None),
            direct_counter: None,
            parts: Vec::new(),
        });
        (self.g.control.tables.len() - 1) as TableId
    }

    /// Chain tables in order with `Always` edges and make the first the entry.
    pub fn chain(&mut self, nodes: &[Node]) {
        self.g.control.entry = nodes.first().copied();
        for w in nodes.windows(2) {
            match w[0] {
                Node::Table(t) => {
                    self.g.control.tables[t as usize].next = TableNext::Always(Some(w[1]))
                }
                Node::Gateway(g) => {
                    let gw = &mut self.g.control.gateways[g as usize];
                    gw.on_true = Some(w[1]);
                    gw.on_false = Some(w[1]);
                }
            }
        }
    }

    pub fn load(&self) -> LoadedGress {
        self.load_with(&spec())
    }

    pub fn load_with(&self, spec: &PipeSpec) -> LoadedGress {
        LoadedGress::load(Gress::Ingress, self.g.clone(), spec, clock(), 7)
            .unwrap_or_else(|e| panic!("program loads: {e}"))
    }
}

pub fn set(dst: FieldId, a: Operand) -> Op {
    Op {
        dst,
        dst_slice: None,
        alu: AluOp::Set,
        a,
        b: Operand::Const(0),
    }
}

pub fn op(dst: FieldId, alu: AluOp, a: Operand, b: Operand) -> Op {
    Op {
        dst,
        dst_slice: None,
        alu,
        a,
        b,
    }
}

pub fn call(action: ActionId, args: &[u128]) -> ActionCall {
    ActionCall {
        action,
        args: args.to_vec(),
    }
}

pub fn entry(key: Vec<KeyMatch>, action: ActionId, args: &[u128], priority: u32) -> Entry {
    Entry {
        key,
        action: call(action, args),
        priority,
    }
}

/// An Ethernet + IPv4 + 8 payload bytes frame (header checksum correct).
pub fn ipv4_frame(dst: [u8; 4], ttl: u8) -> Vec<u8> {
    let mut f = vec![
        0x02, 0, 0, 0, 0, 0x02, // dst mac
        0x02, 0, 0, 0, 0, 0x01, // src mac
        0x08, 0x00, // IPv4
        0x45, 0x00, 0x00, 28, // version/ihl, tos, total length 20 + 8
        0x00, 0x01, 0x00, 0x00, // id, flags/frag
        ttl, 17, 0x00, 0x00, // ttl, udp, checksum (filled below)
        10, 0, 0, 1, // src
    ];
    f.extend_from_slice(&dst);
    f.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe, 0xba, 0xbe]);
    let sum = ipv4_checksum(&f[14..34]);
    f[24..26].copy_from_slice(&sum.to_be_bytes());
    f
}

/// RFC 1071 over a header whose checksum field is taken as zero.
pub fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for (i, w) in h.chunks(2).enumerate() {
        if i == 5 {
            continue;
        }
        sum += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Inputs for a packet issued at `cycle` on port `port`.
pub fn at(cycle: u64, port: u16) -> GressInputs {
    GressInputs {
        issue_cycle: cycle,
        ingress_port: port,
        ..GressInputs::default()
    }
}

/// Field `f` as the last packet through `g` left it.
pub fn get(g: &LoadedGress, f: FieldId) -> u128 {
    g.phv().get(&g.program().phv.fields[f as usize])
}
