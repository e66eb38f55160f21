# A float FULLY_CONNECTED of one row: XNNPACK's operator as Kiln's fast path used it, Kiln's own AVX2/FMA GEMV
# (ops/simd/float_gemv.h), and a plain loop.
if(KILN_HAVE_XNNPACK)
  kiln_add_benchmark(float_gemv_bench SOURCES float_gemv_bench.cc LIBS kiln_ops_simd kiln_xnnpack)
endif()
