// The shortest old-style kernel: root(const T* in, U* out), changing the element type.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.rootplain)

void root(const short* in, int* out) { *out = (int)*in * 3 - 1; }
