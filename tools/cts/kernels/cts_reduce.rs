// Reductions: a plain int sum (the accumulator doubles as combiner), min/max over floats with every function
// given, and a long sum that reads the coordinates.
#pragma version(1)
#pragma rs java_package_name(com.kiln.cts)

#pragma rs reduce(addint) accumulator(addintAccum)
static void addintAccum(int *accum, int value) { *accum += value; }

typedef struct {
  float min_value;
  float max_value;
  uint count;
} MinMax;

#pragma rs reduce(minmax) initializer(mmInit) accumulator(mmAccum) combiner(mmCombine) outconverter(mmOut)
static void mmInit(MinMax *a) {
  a->min_value = 3.402823466e+38f;
  a->max_value = -3.402823466e+38f;
  a->count = 0;
}
static void mmAccum(MinMax *a, float v) {
  a->min_value = v < a->min_value ? v : a->min_value;
  a->max_value = v > a->max_value ? v : a->max_value;
  a->count += 1;
}
static void mmCombine(MinMax *a, const MinMax *b) {
  a->min_value = b->min_value < a->min_value ? b->min_value : a->min_value;
  a->max_value = b->max_value > a->max_value ? b->max_value : a->max_value;
  a->count += b->count;
}
static void mmOut(float3 *result, const MinMax *a) {
  *result = (float3){a->min_value, a->max_value, (float)a->count};
}

#pragma rs reduce(weighted) accumulator(weightedAccum) combiner(weightedCombine)
static void weightedAccum(long *accum, long value, uint32_t x, uint32_t y, uint32_t z) {
  *accum += value * (long)(x + 1) + (long)(y * 7 + z * 13);
}
static void weightedCombine(long *accum, const long *other) { *accum += *other; }
