// Min and max with the index where each first occurs (lowest y, then lowest x), whatever order the driver's
// per-thread accumulators combine in; the outconverter returns the four coordinates.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.minmax)

typedef struct Extreme {
  float value;
  uint x;
  uint y;
} Extreme;

typedef struct MinMax {
  Extreme min;
  Extreme max;
} MinMax;

static bool earlier(uint x, uint y, const Extreme* e) { return y < e->y || (y == e->y && x < e->x); }

static void takeMin(Extreme* e, float value, uint x, uint y) {
  if (value < e->value || (value == e->value && earlier(x, y, e))) {
    e->value = value;
    e->x = x;
    e->y = y;
  }
}
static void takeMax(Extreme* e, float value, uint x, uint y) {
  if (value > e->value || (value == e->value && earlier(x, y, e))) {
    e->value = value;
    e->x = x;
    e->y = y;
  }
}

#pragma rs reduce(minmax_index) initializer(mmInit) accumulator(mmAccum) combiner(mmCombine) outconverter(mmOut)

static void mmInit(MinMax* a) {
  a->min.value = INFINITY;
  a->max.value = -INFINITY;
  a->min.x = a->min.y = a->max.x = a->max.y = 0xffffffffu;
}
static void mmAccum(MinMax* a, float value, uint32_t x, uint32_t y) {
  takeMin(&a->min, value, x, y);
  takeMax(&a->max, value, x, y);
}
static void mmCombine(MinMax* a, const MinMax* b) {
  takeMin(&a->min, b->min.value, b->min.x, b->min.y);
  takeMax(&a->max, b->max.value, b->max.x, b->max.y);
}
static void mmOut(uint4* result, const MinMax* a) { *result = (uint4){a->min.x, a->min.y, a->max.x, a->max.y}; }

#pragma rs reduce(max_uchar) accumulator(maxAccum) combiner(maxCombine)

static void maxAccum(uchar* a, uchar value) { *a = max(*a, value); }
static void maxCombine(uchar* a, const uchar* b) { *a = max(*a, *b); }
