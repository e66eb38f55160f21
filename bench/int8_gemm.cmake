# int8 1x1 convolutions of mobilenet_v2's shapes (M pixels, K input channels, N output channels), one thread:
# XNNPACK's qc8 convolution as Kiln's fast path used it, against Kiln's own AVX-512 VNNI GEMM (ops/simd).
if(KILN_HAVE_XNNPACK)
  kiln_add_benchmark(int8_gemm_bench SOURCES int8_gemm_bench.cc LIBS kiln_ops_simd kiln_ops_reference kiln_xnnpack)
endif()
