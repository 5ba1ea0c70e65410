// error: 2:22: number does not fit in 128 bits
const bit<128> BIG = 0x1_0000_0000_0000_0000_0000_0000_0000_0000;
