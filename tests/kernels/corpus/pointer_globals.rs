// Pointer globals bound to allocations: read by index from a kernel, and written (atomically) from another.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.pointers)

float* gWeights;
int32_t* gCounts; /* 16 bins */
int gNumWeights = 1;

float RS_KERNEL weighted(float in, uint32_t x) { return in * gWeights[x % (uint32_t)gNumWeights]; }

void RS_KERNEL tally(uchar in) { rsAtomicInc(&gCounts[in & 15]); }
