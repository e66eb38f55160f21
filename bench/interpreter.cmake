# The interpreter with the reference kernels: elementwise throughput against a hand-written loop and memory
# bandwidth, per-op overhead against a direct call, and a real network.
kiln_add_benchmark(interpreter_bench SOURCES interpreter_bench.cc LIBS kiln_core)
