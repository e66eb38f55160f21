# y = atan(x + offset) over 16M floats as an ML op: a kilnc kernel op, a C callback op, a hand-written loop and
# memory bandwidth, all in one run.
if(TARGET kilnc)
  set(_kmod_dir ${CMAKE_CURRENT_BINARY_DIR}/kernel_op_kmod)
  kiln_add_benchmark(kernel_op_bench
    SOURCES kernel_op_bench.cc native_atan_baseline.cc
    LIBS kiln_core kiln_atan_model kiln_atan_op)
  kiln_compile_kernels(kernel_op_bench OUTPUT_DIR ${_kmod_dir}
    SOURCES ${CMAKE_SOURCE_DIR}/examples/atan/atan_op.rs)
  target_compile_definitions(kernel_op_bench PRIVATE KILN_BENCH_KMOD_DIR="${_kmod_dir}")
endif()
