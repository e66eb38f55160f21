// A 256-bucket histogram of the luma of RGBA pixels, and its mode through an outconverter.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.histogram)

#define BUCKETS 256
typedef uint32_t Histogram[BUCKETS];

static uchar luma(uchar4 px) { return (uchar)((px.r * 77u + px.g * 151u + px.b * 28u) >> 8); }

#pragma rs reduce(histogram) accumulator(histAccum) combiner(histCombine)

static void histAccum(Histogram* h, uchar4 px) { ++(*h)[luma(px)]; }
static void histCombine(Histogram* h, const Histogram* other) {
  for (int i = 0; i < BUCKETS; ++i) (*h)[i] += (*other)[i];
}

#pragma rs reduce(mode) accumulator(histAccum) combiner(histCombine) outconverter(modeOut)

static void modeOut(int2* result, const Histogram* h) {
  uint32_t best = 0;
  for (int i = 1; i < BUCKETS; ++i) {
    if ((*h)[i] > (*h)[best]) best = i;
  }
  *result = (int2){(int)best, (int)(*h)[best]};
}
