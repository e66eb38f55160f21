// rsRand on every device (issue #12): on the CPU a per-script counter stream, on the GPU a counter-based
// generator keyed by a per-launch seed (compute_test.cc, RandomStreams).
#pragma version(1)
#pragma rs java_package_name(com.kiln.tests)

float2 RS_KERNEL two_units(uint32_t x) { return (float2){rsRand(1.0f), rsRand(1.0f)}; }
int RS_KERNEL ints(uint32_t x) { return rsRand(-7, 1000); }
// Empty ranges: rsRand(0) and rsRand(-3) are 0, rsRand(5, 5) and rsRand(9, 2) their minimum.
int RS_KERNEL empty_ranges(uint32_t x) { return rsRand(0) + rsRand(-3) + rsRand(5, 5) + 10 * rsRand(9, 2); }
// The whole int range: rsRand(INT_MIN, INT_MAX) must neither overflow nor leave it.
int RS_KERNEL whole_range(uint32_t x) { return rsRand((int)0x80000000u, 0x7fffffff); }
