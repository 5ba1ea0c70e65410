// error: 7:19: expected `;`
control Ing(inout headers_t hdr, inout meta_t meta) {
    action drop() { }
    table t {
        key = { hdr.ipv4.dst_addr: exact; }
        actions = { drop; }
        size = 512
    }
    apply {
        t.apply();
    }
}
