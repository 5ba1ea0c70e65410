// error: 4:18: expected `;`
control Ing(inout headers_t hdr, inout meta_t meta) {
    apply {
        t.apply()
    }
}
