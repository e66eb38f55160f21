// Kernels that read only through bound tensors, an rs_allocation and a pointer global, for the tests of how
// long a binding lasts (compute_test.cc: a deleted tensor leaves its globals unbound).
#pragma version(1)
#pragma rs java_package_name(com.kiln.tests)

rs_allocation gTable;
float *gWeights;

float RS_KERNEL lookup(uint index) { return rsGetElementAt_float(gTable, index); }

float RS_KERNEL weigh(uint index) { return gWeights[index]; }

// Whether gWeights is bound, without reading through it: a pointer's accesses are not checked on the CPU, so
// reading through an unbound one is not something a test can do.
int RS_KERNEL weights_bound(uint index) { return gWeights != NULL ? 1 : 0; }
