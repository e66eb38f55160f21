# A float sum and a float max (bench/kernels/sum.rs) over 1M and 16M floats through KilnScriptReduce, on the CPU
# driver and on the Vulkan driver, against the same operation written well in C++ and memcpy, measured in the
# same run.
if(TARGET kilnc AND TARGET kiln_vulkan)
  set(_reduce_kmod_dir ${CMAKE_CURRENT_BINARY_DIR}/reduce_kmod)
  kiln_add_benchmark(reduce_bench
    SOURCES reduce_bench.cc
    LIBS kiln_core
    DEPENDS kiln_vulkan)
  kiln_compile_kernels(reduce_bench OUTPUT_DIR ${_reduce_kmod_dir}
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/kernels/sum.rs)
  target_compile_definitions(reduce_bench PRIVATE KILN_BENCH_KMOD_DIR="${_reduce_kmod_dir}"
                                                  KILN_BENCH_VULKAN_DRIVER="$<TARGET_FILE:kiln_vulkan>")
  # The C++ baseline must be optimised even in a Debug tree, or the ratio flatters Kiln.
  set_source_files_properties(reduce_bench.cc PROPERTIES COMPILE_OPTIONS "-O2")
endif()
