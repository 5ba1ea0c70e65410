// error: 2:36: expected a hexadecimal digit
const bit<16> ETHERTYPE_IPV4 = 0x08G0;
