// The special parameters x, y and z (uint32_t, and the int spelling), with and without inputs.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.coords)

uint RS_KERNEL coord_x(uint in, uint32_t x) { return in + x * 3u; }

int RS_KERNEL coord_xy(int in, uint32_t x, uint32_t y) { return in ^ (int)(x * 1000u + y); }

uint4 RS_KERNEL coord_xyz(uint32_t x, uint32_t y, uint32_t z) { return (uint4){x, y, z, x * y + z}; }

int2 RS_KERNEL coord_int(short in, int x, int y) { return (int2){in - x, y - in}; }
