// error: 2:25: expected a binary digit
const bit<4> MASK = 0b1021;
