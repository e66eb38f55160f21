# The kernel math library's vectorized loops against libm (helper "math").
if(TARGET kiln_rslib_native AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  kiln_add_benchmark(rslib_bench SOURCES rslib_bench.cc rslib_loops.c)
  target_include_directories(rslib_bench PRIVATE ${CMAKE_SOURCE_DIR}/compiler/prelude)
  # Both sides of the comparison get the host CPU, as the CPU driver's JIT does for kernels.
  set_source_files_properties(rslib_loops.c PROPERTIES COMPILE_OPTIONS
    "-O3;-march=native;-Wno-invalid-feature-combination;-ffreestanding;-fno-math-errno;-std=c99")
  set_source_files_properties(rslib_bench.cc PROPERTIES COMPILE_OPTIONS
    "-O3;-march=native;-Wno-invalid-feature-combination")
endif()
