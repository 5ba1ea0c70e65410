// error: 4:20: expected a statement or `}`, found keyword `else`
control Ing(inout headers_t hdr, inout meta_t meta) {
    apply {
        meta.a = 1;
        else { meta.b = 2; }
    }
}
