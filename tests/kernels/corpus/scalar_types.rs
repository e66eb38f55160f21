// Every integer scalar type (and bool) as a kernel element, with wrapping arithmetic, shifts, division and
// bit operations that a C++ reference reproduces exactly. Signed values are never shifted left or allowed to
// overflow (undefined in C): those steps go through the unsigned type.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.types)

char RS_KERNEL mix_char(char in) { return (char)((in ^ 0x5a) + (in >> 2) - in / 3); }

uchar RS_KERNEL mix_uchar(uchar in) { return (uchar)(in * 3u + 7u) ^ (uchar)(in >> 5); }

short RS_KERNEL mix_short(short in) { return (short)((((ushort)in) << 1) ^ (in >> 3)) + (short)(in % 7); }

ushort RS_KERNEL mix_ushort(ushort in) { return (ushort)((uint)in * in + 1u) | (ushort)(in / 255u); }

int RS_KERNEL mix_int(int in) { return (int)((uint)in * 2654435761u) ^ (in >> 7) ^ (in % 1000); }

uint RS_KERNEL mix_uint(uint in) { return ((in >> 3) | (in << 29)) + 0x9e3779b9u - in / 17u; }

long RS_KERNEL mix_long(long in) {
  return (long)((ulong)in * 6364136223846793005ul + 1442695040888963407ul) ^ (in >> 17) ^ (in / 12345);
}

ulong RS_KERNEL mix_ulong(ulong in) { return in ^ (in >> 31) ^ (in << 7) ^ (in % 1000003ul); }

bool RS_KERNEL is_multiple_of_3(int in) { return in % 3 == 0; }
