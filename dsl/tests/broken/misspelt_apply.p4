// error: 3:9: expected `(`, `<` or a name
control Ing(inout headers_t hdr, inout meta_t meta) {
    aply {
        meta.a = 1;
    }
}
