// error: 2:7: expected `(` or `<`
contrl Ing(inout headers_t hdr, inout meta_t meta) {
    apply { }
}
