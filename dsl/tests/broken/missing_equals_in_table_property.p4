// error: 6:13: expected `=`
control Ing(inout headers_t hdr, inout meta_t meta) {
    action drop() { }
    table t {
        actions = { drop; }
        size 1024;
    }
    apply { t.apply(); }
}
