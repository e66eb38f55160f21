// Kernels that return void: they write through an rs_allocation global (a reversing scatter) or update
// globals with atomics.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.voids)

rs_allocation gScattered; /* int, same length as the input */
int32_t gEvenCount;
uint32_t gMaxSeen;
int32_t gMinSeen = 2147483647;

void RS_KERNEL scatter_reversed(int in, uint32_t x) {
  rsSetElementAt_int(gScattered, in * 3, rsAllocationGetDimX(gScattered) - 1u - x);
}

void RS_KERNEL count_even(int in) {
  if ((in & 1) == 0) rsAtomicInc(&gEvenCount);
  rsAtomicMax(&gMaxSeen, (uint32_t)in);
  rsAtomicMin(&gMinSeen, in);
}
