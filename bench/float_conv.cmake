# Float CONV_2D over 3 input channels (an image model's first layer) and DEPTHWISE_CONV_2D: XNNPACK's operators as
# Kiln's engine defines them, Kiln's own AVX2/FMA kernels (ops/simd/float_conv.h, float_depthwise.h), a plain loop.
if(KILN_HAVE_XNNPACK)
  kiln_add_benchmark(float_conv_bench SOURCES float_conv_bench.cc LIBS kiln_ops_simd kiln_xnnpack)
endif()
