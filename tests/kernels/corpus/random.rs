// rsRand in its four forms. Values are not reproducible across thread interleavings, so the test checks
// ranges and statistics only.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.random)

int gMin = -50;
int gMax = 50;

int RS_KERNEL rand_below(uchar in) { return rsRand(10); }
int RS_KERNEL rand_between(uchar in) { return rsRand(gMin, gMax); }
float RS_KERNEL rand_unit(uchar in) { return rsRand(1.0f); }
float RS_KERNEL rand_range(uchar in) { return rsRand(-2.0f, 6.0f); }
