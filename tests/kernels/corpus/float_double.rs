// float and double elements: IEEE arithmetic without contractible a * b + c patterns, so the results are exact
// (the C++ reference performs the same correctly rounded operations).
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.fp)

float RS_KERNEL rational_float(float in) { return (in + 3.0f) * (in - 0.5f) / ((in - 2.0f) * (in + 1.0f)); }

double RS_KERNEL square_exact(float in) { return (double)in * (double)in; }

double RS_KERNEL rational_double(double in) { return (in + 0.25) / (in - 3.0); }

float RS_KERNEL narrow(double in) { return (float)in; }
