# Long runs (issue 14, item 6): the same interpreter invoked 100000 times per case (builtin ops, and a kilnc kernel
# op on the CPU driver and on Vulkan), its resident memory read after a warm-up and at the end; a growth above
# 1 MiB is an error. ctest soak_short runs it for 2000 invocations per case.
if(TARGET kilnc AND TARGET kiln_vulkan)
  set(_soak_kmod_dir ${CMAKE_CURRENT_BINARY_DIR}/soak_kmod)
  kiln_add_benchmark(soak_bench SOURCES soak_bench.cc LIBS kiln DEPENDS kiln_vulkan)
  kiln_compile_kernels(soak_bench OUTPUT_DIR ${_soak_kmod_dir} SOURCES ${CMAKE_SOURCE_DIR}/examples/atan/atan_op.rs)
  target_compile_definitions(soak_bench PRIVATE KILN_BENCH_KMOD_DIR="${_soak_kmod_dir}"
                                                KILN_VULKAN_DRIVER="$<TARGET_FILE:kiln_vulkan>")
  if(KILN_BUILD_TESTS)
    add_test(NAME soak_short COMMAND soak_bench)
    set_tests_properties(soak_short PROPERTIES LABELS slow TIMEOUT 600
      ENVIRONMENT "KILN_SOAK_RUNS=2000;KILN_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
  endif()
endif()
