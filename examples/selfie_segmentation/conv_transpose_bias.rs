// MediaPipe's custom op Convolution2DTransposeBias (a 2-D transposed convolution plus bias) as one RS kernel:
// each kernel cell computes one output element, reading the activation and weights through pointer globals.
#pragma version(1)
#pragma rs java_package_name(com.kiln.examples.selfie)

// Bound to the op's inputs (KilnOperatorSetKernelInputGlobal), NHWC like every .tflite tensor.
float* gInput;   // [batch, in_height, in_width, in_channels]
float* gWeights; // [out_channels, kernel_height, kernel_width, in_channels]
float* gBias;    // [out_channels]

// Set by the op's prepare from the shapes and the custom options (KilnOpaqueNodeSetKernelGlobal).
int gInHeight = 1;
int gInWidth = 1;
int gInChannels = 1;
int gOutHeight = 1;
int gKernelHeight = 1;
int gKernelWidth = 1;
int gStrideHeight = 1;
int gStrideWidth = 1;
int gPadTop = 0;
int gPadLeft = 0;

// The output [batch, out_height, out_width, out_channels] maps to cells as x = out channel, y = out column,
// z = batch * out_height + out row (kiln/compute.h). An input pixel (iy, ix) reaches output row
// iy * stride - pad + ky, so an output cell gathers the pixels with oy + pad - ky a multiple of the stride.
// Pixels are summed in ascending (iy, ix, channel) order, the order MediaPipe's scatter adds them in.
float RS_KERNEL conv_transpose_bias(uint32_t x, uint32_t y, uint32_t z) {
  const int oc = (int)x;
  const int ox = (int)y;
  const int batch = (int)z / gOutHeight;
  const int oy = (int)z % gOutHeight;
  float sum = gBias[oc];
  for (int ky = gKernelHeight - 1; ky >= 0; --ky) {
    const int ty = oy + gPadTop - ky;
    if (ty < 0 || ty % gStrideHeight != 0 || ty / gStrideHeight >= gInHeight) continue;
    const int iy = ty / gStrideHeight;
    for (int kx = gKernelWidth - 1; kx >= 0; --kx) {
      const int tx = ox + gPadLeft - kx;
      if (tx < 0 || tx % gStrideWidth != 0 || tx / gStrideWidth >= gInWidth) continue;
      const int ix = tx / gStrideWidth;
      const int in_base = ((batch * gInHeight + iy) * gInWidth + ix) * gInChannels;
      const int w_base = ((oc * gKernelHeight + ky) * gKernelWidth + kx) * gInChannels;
      for (int c = 0; c < gInChannels; ++c) sum += gInput[in_base + c] * gWeights[w_base + c];
    }
  }
  return sum;
}
