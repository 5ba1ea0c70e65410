// error: 4:17: expected an expression
control Ing(inout headers_t hdr, inout meta_t meta) {
    apply {
        meta.a = ;
    }
}
