// Reductions in RenderScript's pragma form: a plain sum (accumulator doubles as combiner) and a
// min/max with every function given.
#pragma version(1)
#pragma rs java_package_name(com.example.reduce)

#pragma rs reduce(addint) accumulator(addintAccum)

static void addintAccum(int *accum, int val) { *accum += val; }

typedef struct {
  float min_value;
  float max_value;
  uint count;
} MinMax;

#pragma rs reduce(minmax) initializer(mmInit) accumulator(mmAccum) combiner(mmCombine) \
    outconverter(mmOut)

static void mmInit(MinMax *a) {
  a->min_value = 3.402823466e+38f;
  a->max_value = -3.402823466e+38f;
  a->count = 0;
}

static void mmAccum(MinMax *a, float v, uint32_t x) {
  a->min_value = v < a->min_value ? v : a->min_value;
  a->max_value = v > a->max_value ? v : a->max_value;
  a->count += 1;
}

static void mmCombine(MinMax *a, const MinMax *b) {
  a->min_value = b->min_value < a->min_value ? b->min_value : a->min_value;
  a->max_value = b->max_value > a->max_value ? b->max_value : a->max_value;
  a->count += b->count;
}

static void mmOut(float2 *result, const MinMax *a) {
  *result = (float2){a->min_value, a->max_value};
}
