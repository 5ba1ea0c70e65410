// error: 2:22: expected `;`
typedef bit<48> mac_t
header eth_h { mac_t dst; mac_t src; bit<16> ether_type; }
