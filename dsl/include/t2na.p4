// t2na.p4: the Tofino 2 Native Architecture as this compiler knows it.
//
// The intrinsic metadata are TNA's (tna.p4). T2NA's addition the compiler has is the
// stateful ALU's min/max unit, `MinMaxAction` (built in, on chips whose profile has
// `salu.minmax`), whose word `bit<128>` is searched 8 or 16 bits at a time.

#include <tna.p4>
