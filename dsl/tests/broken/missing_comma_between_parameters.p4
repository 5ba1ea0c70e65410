// error: 2:32: expected `)` or `,`
control Ing(inout headers_t hdr inout meta_t meta) {
    apply { }
}
