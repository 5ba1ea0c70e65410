// error: 4:28: expected `;`
control Ing(inout headers_t hdr, inout meta_t meta) {
    apply {
        bit<8> tmp = meta.a
        meta.b = tmp;
    }
}
