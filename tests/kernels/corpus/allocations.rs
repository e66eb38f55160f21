// rs_allocation globals: typed element reads and writes in 1, 2 and 3 dimensions (rsGetElementAt_<T>,
// rsSetElementAt_<T>) and their extents (rsAllocationGetDimX/Y/Z; an absent dimension is 0).
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.alloc)

rs_allocation gMatrix; /* float [rows][cols] */
rs_allocation gLut;    /* uchar [256] */
rs_allocation gVolume; /* int [z][y][x] */
rs_allocation gPairs;  /* short2 [rows][cols] */
rs_allocation gQuads;  /* float4 [n] */

float RS_KERNEL transpose(uint32_t x, uint32_t y) { return rsGetElementAt_float(gMatrix, y, x); }

uchar RS_KERNEL lookup(uchar in) { return rsGetElementAt_uchar(gLut, in); }

int RS_KERNEL volume_add(int in, uint32_t x, uint32_t y, uint32_t z) {
  return in + rsGetElementAt_int(gVolume, x, y, z);
}

void RS_KERNEL store_swapped(short2 in, uint32_t x, uint32_t y) { rsSetElementAt_short2(gPairs, in.yx, x, y); }

float4 RS_KERNEL quad_neighbours(float4 in, uint32_t x) {
  const uint32_t n = rsAllocationGetDimX(gQuads);
  return in + rsGetElementAt_float4(gQuads, (x + 1u) % n);
}

uint4 RS_KERNEL extents(uchar in) {
  return (uint4){rsAllocationGetDimX(gVolume), rsAllocationGetDimY(gVolume), rsAllocationGetDimZ(gVolume),
                 rsAllocationGetDimY(gLut)};
}
