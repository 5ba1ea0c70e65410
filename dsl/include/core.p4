// core.p4: P4_16's core library, as this compiler has it.
//
// Everything core.p4 declares is built into the compiler, so this file declares nothing and
// exists so that programs written for p4c, which start with `#include <core.p4>`, compile
// unchanged: `packet_in` and `packet_out` (`extract`, `advance`, `lookahead`, `emit`),
// `NoAction`, the match kinds `exact`, `ternary`, `lpm` and `range`, and `accept` and
// `reject`. The `error` type and `verify` are not supported.
