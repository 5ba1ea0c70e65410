// error: 5:6: expected `}`
control Ing(inout headers_t hdr, inout meta_t meta) {
    apply {
        meta.a = 1;
    }
