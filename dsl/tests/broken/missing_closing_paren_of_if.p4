// error: 4:24: expected `)`
control Ing(inout headers_t hdr, inout meta_t meta) {
    apply {
        if (meta.a == 1 {
            meta.b = 2;
        }
    }
}
