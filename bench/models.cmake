# Real models: Kiln's fast path at 1 and 2 threads, its reference kernels, and the XNNPACK runtimes alone.
kiln_add_benchmark(models_bench SOURCES models_bench.cc LIBS kiln_core)
