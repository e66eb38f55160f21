// Sum reductions: with all four functions, with two inputs (a dot product), with an outconverter that turns
// the accumulator into a mean, and the shortest form where the accumulator doubles as the combiner.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.sum)

#pragma rs reduce(sum_long) initializer(sumInit) accumulator(sumAccum) combiner(sumCombine) outconverter(sumOut)

static void sumInit(long* accum) { *accum = 0; }
static void sumAccum(long* accum, int value) { *accum += value; }
static void sumCombine(long* accum, const long* other) { *accum += *other; }
static void sumOut(long* result, const long* accum) { *result = *accum; }

#pragma rs reduce(dot_int) accumulator(dotAccum) combiner(dotCombine)

static void dotAccum(long* accum, int a, int b) { *accum += (long)a * b; }
static void dotCombine(long* accum, const long* other) { *accum += *other; }

typedef struct MeanAccum {
  double sum;
  long count;
} MeanAccum;

#pragma rs reduce(mean) accumulator(meanAccum) combiner(meanCombine) outconverter(meanOut)

static void meanAccum(MeanAccum* accum, float value) {
  accum->sum += value;
  accum->count += 1;
}
static void meanCombine(MeanAccum* accum, const MeanAccum* other) {
  accum->sum += other->sum;
  accum->count += other->count;
}
static void meanOut(float* result, const MeanAccum* accum) {
  *result = accum->count ? (float)(accum->sum / (double)accum->count) : 0.0f;
}

#pragma rs reduce(wrapping_sum) accumulator(wrapAccum)

static void wrapAccum(uint* accum, uint value) { *accum += value; }
