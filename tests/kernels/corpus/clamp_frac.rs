// rsClamp on every integer type it has (char, uchar, short, ushort, int, uint) and rsFrac.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.rsclamp)

char gLowChar = -20;
char gHighChar = 90;

char RS_KERNEL clamp_char(char in) { return rsClamp(in, gLowChar, gHighChar); }
uchar RS_KERNEL clamp_uchar(uchar in) { return rsClamp(in, (uchar)16, (uchar)235); }
short RS_KERNEL clamp_short(short in) { return rsClamp(in, (short)-1000, (short)1000); }
ushort RS_KERNEL clamp_ushort(ushort in) { return rsClamp(in, (ushort)300, (ushort)60000); }
int RS_KERNEL clamp_int(int in) { return rsClamp(in, -123456, 654321); }
uint RS_KERNEL clamp_uint(uint in) { return rsClamp(in, 1000u, 4000000000u); }
float RS_KERNEL frac(float in) { return rsFrac(in); }
