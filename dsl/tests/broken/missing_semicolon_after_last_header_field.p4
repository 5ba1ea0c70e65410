// error: 4:20: expected `;`
header ipv4_h {
    bit<8> ttl;
    bit<8> protocol
}
