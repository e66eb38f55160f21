// The reduction the reduce benchmark measures: a float sum accumulated in float, and a float max.
#pragma version(1)
#pragma rs java_package_name(com.kiln.bench.sum)

#pragma rs reduce(sum_float) accumulator(sumAccum)
static void sumAccum(float* accum, float value) { *accum += value; }

#pragma rs reduce(max_float) initializer(maxInit) accumulator(maxAccum) combiner(maxCombine)
static void maxInit(float* accum) { *accum = -INFINITY; }
static void maxAccum(float* accum, float value) { *accum = fmax(*accum, value); }
static void maxCombine(float* accum, const float* other) { *accum = fmax(*accum, *other); }
