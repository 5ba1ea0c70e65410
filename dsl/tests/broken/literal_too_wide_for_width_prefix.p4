// error: 2:20: 8w300 does not fit in 8 bits
const bit<8> TTL = 8w300;
