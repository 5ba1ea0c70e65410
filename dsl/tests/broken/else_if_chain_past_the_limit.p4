// error: 272:14: statements are nested more than 256 levels deep (the compiler's limit; each `if`, `else if`, `switch` and inner block is a level)
header eth_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { eth_h eth; }
struct meta_t { bit<8> a; bit<16> b; bit<32> c; }
parser IP(packet_in pkt, out headers_t hdr, out meta_t meta,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control Ing(inout headers_t hdr, inout meta_t meta,
            in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        // 257 `if`s: each `else if` is an `if` inside the `else` before it.
        if (meta.a == 0) { meta.b = 0; }
        else if (meta.a == 1) { meta.b = 0; }
        else if (meta.a == 2) { meta.b = 1; }
        else if (meta.a == 3) { meta.b = 2; }
        else if (meta.a == 4) { meta.b = 3; }
        else if (meta.a == 5) { meta.b = 4; }
        else if (meta.a == 6) { meta.b = 5; }
        else if (meta.a == 7) { meta.b = 6; }
        else if (meta.a == 8) { meta.b = 7; }
        else if (meta.a == 9) { meta.b = 8; }
        else if (meta.a == 10) { meta.b = 9; }
        else if (meta.a == 11) { meta.b = 10; }
        else if (meta.a == 12) { meta.b = 11; }
        else if (meta.a == 13) { meta.b = 12; }
        else if (meta.a == 14) { meta.b = 13; }
        else if (meta.a == 15) { meta.b = 14; }
        else if (meta.a == 16) { meta.b = 15; }
        else if (meta.a == 17) { meta.b = 16; }
        else if (meta.a == 18) { meta.b = 17; }
        else if (meta.a == 19) { meta.b = 18; }
        else if (meta.a == 20) { meta.b = 19; }
        else if (meta.a == 21) { meta.b = 20; }
        else if (meta.a == 22) { meta.b = 21; }
        else if (meta.a == 23) { meta.b = 22; }
        else if (meta.a == 24) { meta.b = 23; }
        else if (meta.a == 25) { meta.b = 24; }
        else if (meta.a == 26) { meta.b = 25; }
        else if (meta.a == 27) { meta.b = 26; }
        else if (meta.a == 28) { meta.b = 27; }
        else if (meta.a == 29) { meta.b = 28; }
        else if (meta.a == 30) { meta.b = 29; }
        else if (meta.a == 31) { meta.b = 30; }
        else if (meta.a == 32) { meta.b = 31; }
        else if (meta.a == 33) { meta.b = 32; }
        else if (meta.a == 34) { meta.b = 33; }
        else if (meta.a == 35) { meta.b = 34; }
        else if (meta.a == 36) { meta.b = 35; }
        else if (meta.a == 37) { meta.b = 36; }
        else if (meta.a == 38) { meta.b = 37; }
        else if (meta.a == 39) { meta.b = 38; }
        else if (meta.a == 40) { meta.b = 39; }
        else if (meta.a == 41) { meta.b = 40; }
        else if (meta.a == 42) { meta.b = 41; }
        else if (meta.a == 43) { meta.b = 42; }
        else if (meta.a == 44) { meta.b = 43; }
        else if (meta.a == 45) { meta.b = 44; }
        else if (meta.a == 46) { meta.b = 45; }
        else if (meta.a == 47) { meta.b = 46; }
        else if (meta.a == 48) { meta.b = 47; }
        else if (meta.a == 49) { meta.b = 48; }
        else if (meta.a == 50) { meta.b = 49; }
        else if (meta.a == 51) { meta.b = 50; }
        else if (meta.a == 52) { meta.b = 51; }
        else if (meta.a == 53) { meta.b = 52; }
        else if (meta.a == 54) { meta.b = 53; }
        else if (meta.a == 55) { meta.b = 54; }
        else if (meta.a == 56) { meta.b = 55; }
        else if (meta.a == 57) { meta.b = 56; }
        else if (meta.a == 58) { meta.b = 57; }
        else if (meta.a == 59) { meta.b = 58; }
        else if (meta.a == 60) { meta.b = 59; }
        else if (meta.a == 61) { meta.b = 60; }
        else if (meta.a == 62) { meta.b = 61; }
        else if (meta.a == 63) { meta.b = 62; }
        else if (meta.a == 64) { meta.b = 63; }
        else if (meta.a == 65) { meta.b = 64; }
        else if (meta.a == 66) { meta.b = 65; }
        else if (meta.a == 67) { meta.b = 66; }
        else if (meta.a == 68) { meta.b = 67; }
        else if (meta.a == 69) { meta.b = 68; }
        else if (meta.a == 70) { meta.b = 69; }
        else if (meta.a == 71) { meta.b = 70; }
        else if (meta.a == 72) { meta.b = 71; }
        else if (meta.a == 73) { meta.b = 72; }
        else if (meta.a == 74) { meta.b = 73; }
        else if (meta.a == 75) { meta.b = 74; }
        else if (meta.a == 76) { meta.b = 75; }
        else if (meta.a == 77) { meta.b = 76; }
        else if (meta.a == 78) { meta.b = 77; }
        else if (meta.a == 79) { meta.b = 78; }
        else if (meta.a == 80) { meta.b = 79; }
        else if (meta.a == 81) { meta.b = 80; }
        else if (meta.a == 82) { meta.b = 81; }
        else if (meta.a == 83) { meta.b = 82; }
        else if (meta.a == 84) { meta.b = 83; }
        else if (meta.a == 85) { meta.b = 84; }
        else if (meta.a == 86) { meta.b = 85; }
        else if (meta.a == 87) { meta.b = 86; }
        else if (meta.a == 88) { meta.b = 87; }
        else if (meta.a == 89) { meta.b = 88; }
        else if (meta.a == 90) { meta.b = 89; }
        else if (meta.a == 91) { meta.b = 90; }
        else if (meta.a == 92) { meta.b = 91; }
        else if (meta.a == 93) { meta.b = 92; }
        else if (meta.a == 94) { meta.b = 93; }
        else if (meta.a == 95) { meta.b = 94; }
        else if (meta.a == 96) { meta.b = 95; }
        else if (meta.a == 97) { meta.b = 96; }
        else if (meta.a == 98) { meta.b = 97; }
        else if (meta.a == 99) { meta.b = 98; }
        else if (meta.a == 100) { meta.b = 99; }
        else if (meta.a == 101) { meta.b = 100; }
        else if (meta.a == 102) { meta.b = 101; }
        else if (meta.a == 103) { meta.b = 102; }
        else if (meta.a == 104) { meta.b = 103; }
        else if (meta.a == 105) { meta.b = 104; }
        else if (meta.a == 106) { meta.b = 105; }
        else if (meta.a == 107) { meta.b = 106; }
        else if (meta.a == 108) { meta.b = 107; }
        else if (meta.a == 109) { meta.b = 108; }
        else if (meta.a == 110) { meta.b = 109; }
        else if (meta.a == 111) { meta.b = 110; }
        else if (meta.a == 112) { meta.b = 111; }
        else if (meta.a == 113) { meta.b = 112; }
        else if (meta.a == 114) { meta.b = 113; }
        else if (meta.a == 115) { meta.b = 114; }
        else if (meta.a == 116) { meta.b = 115; }
        else if (meta.a == 117) { meta.b = 116; }
        else if (meta.a == 118) { meta.b = 117; }
        else if (meta.a == 119) { meta.b = 118; }
        else if (meta.a == 120) { meta.b = 119; }
        else if (meta.a == 121) { meta.b = 120; }
        else if (meta.a == 122) { meta.b = 121; }
        else if (meta.a == 123) { meta.b = 122; }
        else if (meta.a == 124) { meta.b = 123; }
        else if (meta.a == 125) { meta.b = 124; }
        else if (meta.a == 126) { meta.b = 125; }
        else if (meta.a == 127) { meta.b = 126; }
        else if (meta.a == 128) { meta.b = 127; }
        else if (meta.a == 129) { meta.b = 128; }
        else if (meta.a == 130) { meta.b = 129; }
        else if (meta.a == 131) { meta.b = 130; }
        else if (meta.a == 132) { meta.b = 131; }
        else if (meta.a == 133) { meta.b = 132; }
        else if (meta.a == 134) { meta.b = 133; }
        else if (meta.a == 135) { meta.b = 134; }
        else if (meta.a == 136) { meta.b = 135; }
        else if (meta.a == 137) { meta.b = 136; }
        else if (meta.a == 138) { meta.b = 137; }
        else if (meta.a == 139) { meta.b = 138; }
        else if (meta.a == 140) { meta.b = 139; }
        else if (meta.a == 141) { meta.b = 140; }
        else if (meta.a == 142) { meta.b = 141; }
        else if (meta.a == 143) { meta.b = 142; }
        else if (meta.a == 144) { meta.b = 143; }
        else if (meta.a == 145) { meta.b = 144; }
        else if (meta.a == 146) { meta.b = 145; }
        else if (meta.a == 147) { meta.b = 146; }
        else if (meta.a == 148) { meta.b = 147; }
        else if (meta.a == 149) { meta.b = 148; }
        else if (meta.a == 150) { meta.b = 149; }
        else if (meta.a == 151) { meta.b = 150; }
        else if (meta.a == 152) { meta.b = 151; }
        else if (meta.a == 153) { meta.b = 152; }
        else if (meta.a == 154) { meta.b = 153; }
        else if (meta.a == 155) { meta.b = 154; }
        else if (meta.a == 156) { meta.b = 155; }
        else if (meta.a == 157) { meta.b = 156; }
        else if (meta.a == 158) { meta.b = 157; }
        else if (meta.a == 159) { meta.b = 158; }
        else if (meta.a == 160) { meta.b = 159; }
        else if (meta.a == 161) { meta.b = 160; }
        else if (meta.a == 162) { meta.b = 161; }
        else if (meta.a == 163) { meta.b = 162; }
        else if (meta.a == 164) { meta.b = 163; }
        else if (meta.a == 165) { meta.b = 164; }
        else if (meta.a == 166) { meta.b = 165; }
        else if (meta.a == 167) { meta.b = 166; }
        else if (meta.a == 168) { meta.b = 167; }
        else if (meta.a == 169) { meta.b = 168; }
        else if (meta.a == 170) { meta.b = 169; }
        else if (meta.a == 171) { meta.b = 170; }
        else if (meta.a == 172) { meta.b = 171; }
        else if (meta.a == 173) { meta.b = 172; }
        else if (meta.a == 174) { meta.b = 173; }
        else if (meta.a == 175) { meta.b = 174; }
        else if (meta.a == 176) { meta.b = 175; }
        else if (meta.a == 177) { meta.b = 176; }
        else if (meta.a == 178) { meta.b = 177; }
        else if (meta.a == 179) { meta.b = 178; }
        else if (meta.a == 180) { meta.b = 179; }
        else if (meta.a == 181) { meta.b = 180; }
        else if (meta.a == 182) { meta.b = 181; }
        else if (meta.a == 183) { meta.b = 182; }
        else if (meta.a == 184) { meta.b = 183; }
        else if (meta.a == 185) { meta.b = 184; }
        else if (meta.a == 186) { meta.b = 185; }
        else if (meta.a == 187) { meta.b = 186; }
        else if (meta.a == 188) { meta.b = 187; }
        else if (meta.a == 189) { meta.b = 188; }
        else if (meta.a == 190) { meta.b = 189; }
        else if (meta.a == 191) { meta.b = 190; }
        else if (meta.a == 192) { meta.b = 191; }
        else if (meta.a == 193) { meta.b = 192; }
        else if (meta.a == 194) { meta.b = 193; }
        else if (meta.a == 195) { meta.b = 194; }
        else if (meta.a == 196) { meta.b = 195; }
        else if (meta.a == 197) { meta.b = 196; }
        else if (meta.a == 198) { meta.b = 197; }
        else if (meta.a == 199) { meta.b = 198; }
        else if (meta.a == 200) { meta.b = 199; }
        else if (meta.a == 201) { meta.b = 200; }
        else if (meta.a == 202) { meta.b = 201; }
        else if (meta.a == 203) { meta.b = 202; }
        else if (meta.a == 204) { meta.b = 203; }
        else if (meta.a == 205) { meta.b = 204; }
        else if (meta.a == 206) { meta.b = 205; }
        else if (meta.a == 207) { meta.b = 206; }
        else if (meta.a == 208) { meta.b = 207; }
        else if (meta.a == 209) { meta.b = 208; }
        else if (meta.a == 210) { meta.b = 209; }
        else if (meta.a == 211) { meta.b = 210; }
        else if (meta.a == 212) { meta.b = 211; }
        else if (meta.a == 213) { meta.b = 212; }
        else if (meta.a == 214) { meta.b = 213; }
        else if (meta.a == 215) { meta.b = 214; }
        else if (meta.a == 216) { meta.b = 215; }
        else if (meta.a == 217) { meta.b = 216; }
        else if (meta.a == 218) { meta.b = 217; }
        else if (meta.a == 219) { meta.b = 218; }
        else if (meta.a == 220) { meta.b = 219; }
        else if (meta.a == 221) { meta.b = 220; }
        else if (meta.a == 222) { meta.b = 221; }
        else if (meta.a == 223) { meta.b = 222; }
        else if (meta.a == 224) { meta.b = 223; }
        else if (meta.a == 225) { meta.b = 224; }
        else if (meta.a == 226) { meta.b = 225; }
        else if (meta.a == 227) { meta.b = 226; }
        else if (meta.a == 228) { meta.b = 227; }
        else if (meta.a == 229) { meta.b = 228; }
        else if (meta.a == 230) { meta.b = 229; }
        else if (meta.a == 231) { meta.b = 230; }
        else if (meta.a == 232) { meta.b = 231; }
        else if (meta.a == 233) { meta.b = 232; }
        else if (meta.a == 234) { meta.b = 233; }
        else if (meta.a == 235) { meta.b = 234; }
        else if (meta.a == 236) { meta.b = 235; }
        else if (meta.a == 237) { meta.b = 236; }
        else if (meta.a == 238) { meta.b = 237; }
        else if (meta.a == 239) { meta.b = 238; }
        else if (meta.a == 240) { meta.b = 239; }
        else if (meta.a == 241) { meta.b = 240; }
        else if (meta.a == 242) { meta.b = 241; }
        else if (meta.a == 243) { meta.b = 242; }
        else if (meta.a == 244) { meta.b = 243; }
        else if (meta.a == 245) { meta.b = 244; }
        else if (meta.a == 246) { meta.b = 245; }
        else if (meta.a == 247) { meta.b = 246; }
        else if (meta.a == 248) { meta.b = 247; }
        else if (meta.a == 249) { meta.b = 248; }
        else if (meta.a == 250) { meta.b = 249; }
        else if (meta.a == 1) { meta.b = 250; }
        else if (meta.a == 2) { meta.b = 251; }
        else if (meta.a == 3) { meta.b = 252; }
        else if (meta.a == 4) { meta.b = 253; }
        else if (meta.a == 5) { meta.b = 254; }
        else if (meta.a == 6) { meta.b = 255; }
    }
}
control ID(packet_out pkt, inout headers_t hdr, in meta_t meta,
           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr.eth); }
}
parser EP(packet_in pkt, out headers_t hdr, out meta_t meta,
          out egress_intrinsic_metadata_t eg_intr_md) {
    state start { transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t meta, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}
control ED(packet_out pkt, inout headers_t hdr, in meta_t meta,
           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
