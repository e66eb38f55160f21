# The Vulkan driver on whatever device the machine has (lavapipe on CI): time per launch and per batch of ten
# launches, against memcpy bandwidth and a plain host loop doing the same work, measured in the same run.
if(TARGET kiln_vulkan AND TARGET kiln_vulkan_test_support)
  kiln_add_benchmark(vulkan_bench
    SOURCES vulkan_bench.cc
    LIBS kiln_vulkan_test_support
    DEPENDS kiln_vulkan)
endif()
if(TARGET vulkan_bench)
  # The host-loop baseline must be optimised even in a Debug tree, or the ratio flatters the driver.
  set_source_files_properties(vulkan_bench.cc PROPERTIES COMPILE_OPTIONS "-O2")
endif()
