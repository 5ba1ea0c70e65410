// Included by error_in_included_file.p4: a header field of a type nobody declared.
header vxlan_h {
    bit<8>   flags;
    vni_t    vni;
    bit<8>   reserved;
}
