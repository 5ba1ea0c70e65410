// Included by the tests of `#include` (tests/dsl/includes.rs): headers shared by programs.
#include <tna.p4>

header tunnel_h {
    bit<16> id;
    bit<16> ether_type;
}
