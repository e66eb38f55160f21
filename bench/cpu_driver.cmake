# The CPU driver against hand-written native code and memory bandwidth.
if(TARGET kiln_cpu_driver)
  set(_kernel_dir ${CMAKE_CURRENT_BINARY_DIR}/cpu_kernels)
  kiln_cpu_kernel_bitcode(kiln_cpu_bench_kernels OUTPUT_DIR ${_kernel_dir}
    SOURCES ${CMAKE_SOURCE_DIR}/tests/cpu/kernels/atan_op.c)
  kiln_add_benchmark(cpu_driver_bench
    SOURCES cpu_driver_bench.cc native_atan_baseline.cc
    LIBS kiln_cpu_driver
    DEPENDS kiln_cpu_bench_kernels)
  target_compile_definitions(cpu_driver_bench PRIVATE KILN_CPU_BENCH_KERNEL_DIR="${_kernel_dir}")
  # The honest baseline: what a C++ programmer gets from the compiler for the same loop on this machine.
  set_source_files_properties(native_atan_baseline.cc PROPERTIES COMPILE_OPTIONS "-O3;-march=native;-Wno-invalid-feature-combination")
endif()
