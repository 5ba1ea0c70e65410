// error: 5:25: expected `;`
control Ing(inout headers_t hdr, inout meta_t meta) {
    action set_port(bit<9> port) {
        meta.a = 1;
        meta.port = port
    }
    apply { }
}
