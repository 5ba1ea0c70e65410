// error: 3:15: expected `;`
header ipv4_h {
    bit<8> ttl
    bit<8> protocol;
}
