// Invokables that launch kernels of their script with rsForEach and rsForEachWithOptions (a sub-range).
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.foreach)

rs_allocation gIn;
rs_allocation gTmp;
rs_allocation gOut;
float gBias;

float RS_KERNEL add_bias(float in) { return in + gBias; }

float RS_KERNEL square(float in) { return in * in; }

void pipeline(float bias) {
  gBias = bias;
  rsForEach(add_bias, gIn, gTmp);
  rsForEach(square, gTmp, gOut);
}

void square_range(uint32_t start, uint32_t end) {
  rs_script_call_t options = {0};
  options.xStart = start;
  options.xEnd = end;
  rsForEachWithOptions(square, &options, gIn, gOut);
}
