// Included by include_cycle.p4; includes cycle_b.p4, which includes this file again.
#include "cycle_b.p4"
const bit<8> FROM_A = 1;
