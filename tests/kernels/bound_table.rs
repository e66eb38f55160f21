// Kernels that read only through bound tensors, an rs_allocation and a pointer global, for the tests of how
// long a binding lasts (compute_test.cc: a deleted tensor leaves its globals unbound) and of launches that
// would read a pointer global with no tensor bound (the runtime refuses them).
#pragma version(1)
#pragma rs java_package_name(com.kiln.tests)

rs_allocation gTable;
float *gWeights;
float gLastWeight;

float RS_KERNEL lookup(uint index) { return rsGetElementAt_float(gTable, index); }

float RS_KERNEL weigh(uint index) { return gWeights[index]; }

// Whether gWeights is bound, without reading through it: comparing a pointer global with NULL is not a use
// that needs a tensor bound (kilnc leaves it out of the kernel's pointer globals), so this runs either way.
int RS_KERNEL weights_bound(uint index) { return gWeights != NULL ? 1 : 0; }

// The same read from a reduction and an invokable.
#pragma rs reduce(weight_sum) accumulator(weightSumAccum) combiner(weightSumCombine)
static void weightSumAccum(float *sum, uint index) { *sum += gWeights[index]; }
static void weightSumCombine(float *sum, const float *other) { *sum += *other; }

void read_weight(uint index) { gLastWeight = gWeights[index]; }
