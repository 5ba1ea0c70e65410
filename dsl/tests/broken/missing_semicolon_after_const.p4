// error: 2:38: expected `;`
const bit<16> ETHERTYPE_IPV4 = 0x0800
header eth_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
