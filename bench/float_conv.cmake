# A float CONV_2D over 3 input channels (an image model's first layer): XNNPACK's operator as Kiln's fast path used
# it, Kiln's own AVX2/FMA direct convolution (ops/simd/float_conv.h), and a plain loop.
if(KILN_HAVE_XNNPACK)
  kiln_add_benchmark(float_conv_bench SOURCES float_conv_bench.cc LIBS kiln_ops_simd kiln_xnnpack)
endif()
