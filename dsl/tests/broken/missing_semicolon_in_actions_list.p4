// error: 7:30: expected `;`
control Ing(inout headers_t hdr, inout meta_t meta) {
    action drop() { }
    action fwd() { }
    table t {
        key = { hdr.ipv4.dst_addr: exact; }
        actions = { drop; fwd }
    }
    apply { t.apply(); }
}
