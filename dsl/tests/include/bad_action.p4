// Included by the tests of `#include` (tests/dsl/includes.rs): line 5 uses a constant
// nobody declared.

const bit<8> MARK = 3;
const bit<8> BAD = no_such_constant;
