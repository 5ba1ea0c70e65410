// Included by cycle_a.p4, which it includes in turn.
#include "cycle_a.p4"
const bit<8> FROM_B = 2;
