// The host engine (XNNPACK) inside the interpreter, through the public C API: which nodes it takes and why it
// refuses the others (the decision log), that a refused node between two runs still gives the right answer,
// that a run's edges never share memory, and that the reference kernels can be asked for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "ops/simd/cpu.h"
#include "runtime/core.h"
#include "runtime/interpreter.h"
#include "runtime/model/model_writer.h"
#include "tests/test_util.h"

namespace kiln {
namespace {

struct Result {
  std::vector<float> y;
  std::vector<std::string> nodes;  // the node decisions, in node order
  std::string errors;
};

Result RunModel(const std::vector<uint8_t>& bytes, const std::vector<float>& x, bool reference,
                int threads = 1) {
  Result r;
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, testing::CollectErrors, &r.errors);
  KilnInterpreterOptionsSetUseReferenceKernels(options, reference);
  KilnInterpreterOptionsSetNumThreads(options, threads);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  if (interpreter != nullptr && KilnInterpreterAllocateTensors(interpreter) == kKilnOk &&
      KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), x.data(), x.size() * 4) ==
          kKilnOk &&
      KilnInterpreterInvoke(interpreter) == kKilnOk) {
    const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
    const float* data = static_cast<const float*>(KilnTensorData(out));
    r.y.assign(data, data + KilnTensorByteSize(out) / 4);
    for (int i = 0; i < KilnInterpreterGetDecisionCount(interpreter); ++i) {
      KilnDecisionKind kind;
      const char* message = nullptr;
      KilnInterpreterGetDecision(interpreter, i, &kind, nullptr, &message);
      if (kind == kKilnDecisionNode) r.nodes.push_back(message);
    }
  }
  KilnInterpreterDelete(interpreter);
  KilnModelDelete(model);
  return r;
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4f * std::fabs(want[i]) + 1e-6f) << "element " << i;
  }
}

// Whether Kiln's own AVX2/FMA float kernels (ops/simd) run here: an x86-64 CPU with AVX2 and FMA, and not turned off
// through `disable_env`.
bool Avx2KernelExpected(const char* disable_env) {
#if KILN_SIMD_X86_BUILD
  return ops::simd::Avx2FmaKernelEnabled(disable_env);
#else
  (void)disable_env;
  return false;
#endif
}

// Whether this CPU has AVX-512F: the host engine then gives each of Kiln's own float convolutions only the nodes
// where it was measured faster than XNNPACK's AVX-512 kernels (ops/xnnpack/xnnpack_engine.cc's rules, mirrored
// below), and runs the GEMM's AVX-512 form.
bool Avx512() {
#if KILN_SIMD_X86_BUILD
  return ops::simd::HasAvx512f();
#else
  return false;
#endif
}

// The --explain suffix of a float CONV_2D over few input channels: Kiln's direct convolution, but on an AVX-512 CPU
// only to at most 8 output channels.
std::string DirectConvKernel(int64_t in_c, int64_t out_c) {
  const bool own = Avx2KernelExpected("KILN_DISABLE_CONV") && (!Avx512() || out_c <= 8);
  return own ? ", on kiln-conv float" : "";
}

// A depthwise convolution's: Kiln's; on an AVX-512 CPU its AVX2 form over at most 8 channels (or more than 9 taps
// over at most 24), its AVX-512 form for at most 9 taps over more, XNNPACK the rest.
std::string DepthwiseKernel(int64_t channels, int64_t taps) {
  if (!Avx2KernelExpected("KILN_DISABLE_DEPTHWISE")) return "";
  if (!Avx512() || channels <= 8 || (taps > 9 && channels <= 24)) return ", on kiln-depthwise float";
  return taps <= 9 ? ", on kiln-depthwise float avx512" : "";
}

// A 1x1 convolution's: Kiln's GEMM, its AVX-512 form on an AVX-512 CPU.
std::string GemmKernel() {
  if (!Avx2KernelExpected("KILN_DISABLE_GEMM")) return "";
  return Avx512() ? ", on kiln-gemm float avx512" : ", on kiln-gemm float";
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

bool HasEngine(const Result& r) {
  for (const std::string& node : r.nodes) {
    if (node.find("no host engine in this build") != std::string::npos) return false;
  }
  return true;
}

// x[1,8,8,4] -> CONV_2D (SAME, RELU6) -> TANH -> ADD x (RELU): XNNPACK here has no TANH, so the graph runs as
// host run 0, the reference TANH, host run 1.
std::vector<uint8_t> ConvTanhAdd() {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {1, 8, 8, 4}, "x");
  const int filter = w.AddConstTensor(kKilnFloat32, {4, 3, 3, 4}, "filter", Random(4 * 3 * 3 * 4, 7));
  const int bias = w.AddConstTensor(kKilnFloat32, {4}, "bias", Random(4, 8));
  const int c = w.AddTensor(kKilnFloat32, {1, 8, 8, 4}, "c");
  const int t = w.AddTensor(kKilnFloat32, {1, 8, 8, 4}, "t");
  const int y = w.AddTensor(kKilnFloat32, {1, 8, 8, 4}, "y");
  w.AddOp(kKilnBuiltinConv2d, {x, filter, bias}, {c},
          KilnConvParams{kKilnPaddingSame, 1, 1, 1, 1, kKilnActRelu6});
  w.AddOp(kKilnBuiltinTanh, {c}, {t});
  w.AddOp(kKilnBuiltinAdd, {t, x}, {y}, KilnAddParams{kKilnActRelu, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  return w.Finish();
}

// Through the interpreter's internals: the arena ranges of the tensors crossing each host run's edge.
void ExpectRunEdgesApart(const std::vector<uint8_t>& bytes) {
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  KilnInterpreter* handle = KilnInterpreterCreate(model, nullptr);
  ASSERT_EQ(KilnInterpreterAllocateTensors(handle), kKilnOk);
  const Interpreter& interpreter = *handle->impl;
  for (const Interpreter::HostPartition& run : interpreter.host_partitions()) {
    std::set<int> edge;
    for (int n = run.first; n <= run.last; ++n) {
      for (int t : interpreter.nodes()[n].inputs) edge.insert(t);
      for (int t : interpreter.nodes()[n].outputs) edge.insert(t);
    }
    std::vector<std::pair<const uint8_t*, const uint8_t*>> ranges;
    for (int t : edge) {
      const KilnTensor* tensor = interpreter.tensor(t);
      if (tensor == nullptr || tensor->data == nullptr || tensor->allocation != kKilnArenaRw) continue;
      const uint8_t* begin = static_cast<const uint8_t*>(tensor->data);
      for (const auto& other : ranges) {
        EXPECT_TRUE(begin + tensor->bytes <= other.first || other.second <= begin)
            << "run of nodes " << run.first << " to " << run.last << ": tensor '" << tensor->name
            << "' shares memory with another tensor crossing the run's edge";
      }
      ranges.push_back({begin, begin + tensor->bytes});
    }
  }
  KilnInterpreterDelete(handle);
  KilnModelDelete(model);
}

TEST(HostEngine, RefusedNodeRunsOnItsReferenceKernelWithTheReason) {
  const std::vector<uint8_t> model = ConvTanhAdd();
  ASSERT_FALSE(model.empty());
  const std::vector<float> x = Random(8 * 8 * 4, 1);
  const Result fast = RunModel(model, x, false);
  ASSERT_FALSE(fast.y.empty()) << fast.errors;
  if (!HasEngine(fast)) GTEST_SKIP() << "this build has no XNNPACK";
  ASSERT_EQ(fast.nodes.size(), 3u);
  // Its 4 input channels make it Kiln's direct convolution's where the CPU has AVX2 and FMA.
  const std::string conv_kernel = DirectConvKernel(4, 4);
  EXPECT_EQ(fast.nodes[0], "node 0 (CONV_2D) runs on the host: builtin op, xnnpack, in host run 0" + conv_kernel);
  EXPECT_EQ(
      fast.nodes[1],
      "node 1 (TANH) runs on the host: builtin op, reference kernel (xnnpack: XNNPACK has no TANH here)");
  EXPECT_EQ(fast.nodes[2], "node 2 (ADD) runs on the host: builtin op, xnnpack, in host run 1");
  const Result reference = RunModel(model, x, true);
  ExpectClose(fast.y, reference.y);
  ExpectClose(RunModel(model, x, false, 2).y, reference.y);
}

TEST(HostEngine, ReferenceKernelsOnRequest) {
  const Result r = RunModel(ConvTanhAdd(), Random(8 * 8 * 4, 2), true);
  ASSERT_EQ(r.nodes.size(), 3u) << r.errors;
  for (const std::string& node : r.nodes) {
    EXPECT_NE(node.find("reference kernel (reference kernels asked for)"), std::string::npos) << node;
  }
}

// An option XNNPACK cannot fuse keeps the node on its reference kernel, named in the reason.
TEST(HostEngine, UnfusableActivationIsExplained) {
  ModelWriter w;
  const int a = w.AddTensor(kKilnFloat32, {16}, "a");
  const int b = w.AddTensor(kKilnFloat32, {16}, "b");
  w.AddOp(kKilnBuiltinAdd, {a, a}, {b}, KilnAddParams{kKilnActTanh, false});
  w.SetInputs({a});
  w.SetOutputs({b});
  const std::vector<uint8_t> model = w.Finish();
  const std::vector<float> x = Random(16, 3);
  const Result fast = RunModel(model, x, false);
  ASSERT_EQ(fast.nodes.size(), 1u) << fast.errors;
  if (!HasEngine(fast)) GTEST_SKIP() << "this build has no XNNPACK";
  EXPECT_NE(fast.nodes[0].find("reference kernel (xnnpack: fused activation 4"), std::string::npos)
      << fast.nodes[0];
  ExpectClose(fast.y, RunModel(model, x, true).y);
}

// Crafted graphs the fast path must not take as XNNPACK would misread them (found by interpreter_fuzzer: XNNPACK
// aborted in setup): a node whose output nothing reads (an engine may leave a value without readers no memory, so
// such a tensor stays in the arena), a node writing its own input, and a node writing a model input.
TEST(HostEngine, DeadOutputsAndInPlaceNodesDoNotAbort) {
  {  // x -> RELU6 -> dead; the model's output is x itself
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {4}, "x");
    const int dead = w.AddTensor(kKilnFloat32, {4}, "dead");
    w.AddOp(kKilnBuiltinRelu6, {x}, {dead});
    w.SetInputs({x});
    w.SetOutputs({x});
    const std::vector<float> in = {-1, 0.5f, 7, 3};
    const Result fast = RunModel(w.Finish(), in, false);
    ASSERT_EQ(fast.y, in) << fast.errors;
  }
  {  // a RELU writing its own input: the reference kernel computes it in place
    ModelWriter w;
    w.set_unchecked(true);
    const int x = w.AddTensor(kKilnFloat32, {4}, "x");
    const int y = w.AddTensor(kKilnFloat32, {4}, "y");
    w.AddOp(kKilnBuiltinRelu, {x}, {x});
    w.AddOp(kKilnBuiltinRelu6, {x}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    const std::vector<uint8_t> model = w.Finish();
    const Result fast = RunModel(model, {-1, 0.5f, 7, 3}, false);
    const Result reference = RunModel(model, {-1, 0.5f, 7, 3}, true);
    EXPECT_EQ(fast.y, reference.y) << fast.errors;
    if (HasEngine(fast) && !fast.nodes.empty()) {
      EXPECT_NE(fast.nodes[0].find("output tensor 0 is also one of the node's inputs"), std::string::npos)
          << fast.nodes[0];
    }
  }
}

// The tensors crossing a run's edge stay apart even when the nodes inside are fused (ADD then RELU becomes
// one XNNPACK operator reading the ADD's inputs while writing the RELU's output): chains of every length over
// odd sizes, the memory of every run's edge tensors pairwise disjoint, and results equal to the reference's.
TEST(HostEngine, RunEdgesNeverShareMemory) {
  for (int length : {2, 3, 5}) {
    for (int n : {1, 7, 33, 1000}) {
      ModelWriter w;
      const int x = w.AddTensor(kKilnFloat32, {n}, "x");
      int previous = x;
      // A refused TANH first, so the run's input is a tensor whose last reader is inside the run.
      const int t = w.AddTensor(kKilnFloat32, {n}, "t");
      w.AddOp(kKilnBuiltinTanh, {x}, {t});
      previous = t;
      for (int i = 0; i < length; ++i) {
        const int sum = w.AddTensor(kKilnFloat32, {n}, "sum" + std::to_string(i));
        const int relu = w.AddTensor(kKilnFloat32, {n}, "relu" + std::to_string(i));
        w.AddOp(kKilnBuiltinAdd, {previous, x}, {sum}, KilnAddParams{kKilnActNone, false});
        w.AddOp(kKilnBuiltinRelu, {sum}, {relu});
        previous = relu;
      }
      w.SetInputs({x});
      w.SetOutputs({previous});
      const std::vector<uint8_t> model = w.Finish();
      const std::vector<float> input = Random(n, 10 + n);
      SCOPED_TRACE("chain of " + std::to_string(length) + " over " + std::to_string(n));
      ExpectClose(RunModel(model, input, false).y, RunModel(model, input, true).y);
      ExpectRunEdgesApart(model);
    }
  }
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Profiling: one event per unit of work of the last Invoke (host run, reference node), none when it is off.
TEST(Profiling, OneEventPerUnitOfTheLastInvoke) {
  const std::vector<uint8_t> bytes = ConvTanhAdd();
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  for (bool on : {false, true}) {
    KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetProfiling(options, on);
    KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
    KilnInterpreterOptionsDelete(options);
    ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk);
    EXPECT_EQ(KilnInterpreterGetProfileEventCount(interpreter), 0);
    for (int invoke = 0; invoke < 2; ++invoke) ASSERT_EQ(KilnInterpreterInvoke(interpreter), kKilnOk);
    if (!on) {
      EXPECT_EQ(KilnInterpreterGetProfileEventCount(interpreter), 0);
      KilnInterpreterDelete(interpreter);
      continue;
    }
    // Three nodes, each its own unit here: host run 0 (CONV_2D), the reference TANH, host run 1 (ADD).
    ASSERT_EQ(KilnInterpreterGetProfileEventCount(interpreter), 3);
    uint64_t previous_end = 0;
    for (int i = 0; i < 3; ++i) {
      KilnProfileEvent event;
      event.struct_size = sizeof(event);
      ASSERT_EQ(KilnInterpreterGetProfileEvent(interpreter, i, &event), kKilnOk);
      EXPECT_EQ(event.first_node, i);
      EXPECT_EQ(event.last_node, i);
      EXPECT_GE(event.start_ns, previous_end);
      previous_end = event.start_ns + event.duration_ns;
      const std::string engine = event.engine;
      // Host run 0's CONV_2D (4 input channels) runs on Kiln's direct convolution where the CPU has AVX2 and FMA.
      EXPECT_TRUE(i == 1 ? engine == "reference"
                         : engine == "xnnpack" || engine == "xnnpack+kiln" || engine == "reference")
          << engine;
    }
    KilnProfileEvent event;
    event.struct_size = sizeof(event);
    KilnInterpreterGetProfileEvent(interpreter, 1, &event);
    EXPECT_STREQ(event.op, "TANH");
    event.struct_size = 4;
    EXPECT_EQ(KilnInterpreterGetProfileEvent(interpreter, 0, &event), kKilnInvalidArgument);
    event.struct_size = sizeof(event);
    EXPECT_EQ(KilnInterpreterGetProfileEvent(interpreter, 3, &event), kKilnInvalidArgument);
    KilnInterpreterDelete(interpreter);
  }
  KilnModelDelete(model);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Names from files are printed escaped: a crafted tensor name cannot send escape sequences to a terminal.
TEST(Printable, ControlCharactersAreEscaped) {
  EXPECT_EQ(Printable("conv2d/weights"), "conv2d/weights");
  EXPECT_EQ(Printable("\x1b[2J\x1b]0;owned\x07"), "\\x1b[2J\\x1b]0;owned\\x07");
  EXPECT_EQ(Printable("line\nbreak\ttab\x7f"), "line\\x0abreak\\x09tab\\x7f");
  EXPECT_EQ(Printable("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 stays readable
  EXPECT_EQ(Printable("a\xc2\x9b" "31mb"), "a\\xc2\\x9b31mb");  // U+009B, CSI in C1 form
  EXPECT_EQ(Printable("\xc2\xa0\xc2"), "\xc2\xa0\xc2");       // U+00A0 and a cut-off sequence are no controls
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, HARD_SWISH and ELU on both paths: XNNPACK takes them, and its answers
// match the reference kernels.
// Whether the engine may use Kiln's float GEMV here (ops/simd/float_gemv.h's rule, read independently).
// FULLY_CONNECTED nodes of 1 to 4 rows run on Kiln's own float GEMV (ops/simd/float_gemv.h) inside the XNNPACK
// host run, beside nodes XNNPACK runs (the tensors between them get the run's own memory): x [2, 40] -> FC (37,
// bias, RELU) -> ADD c -> FC (1100, no bias, RELU6: over a million multiply-adds, split across the threads) ->
// FC (3, bias, int8 weights of a hybrid model) -> y. Equal to the reference kernels within the fast path's bound.
TEST(HostEngine, SmallFullyConnectedRunsOnKilnsGemv) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 40}, "x");
  const int w1 = w.AddConstTensor(kKilnFloat32, {37, 40}, "w1", Random(37 * 40, 11));
  const int b1 = w.AddConstTensor(kKilnFloat32, {37}, "b1", Random(37, 12));
  const int c = w.AddConstTensor(kKilnFloat32, {37}, "c", Random(37, 13));
  const int w2 = w.AddConstTensor(kKilnFloat32, {1100, 37}, "w2", Random(1100 * 37, 14));
  std::vector<int8_t> q3(3 * 1100);
  std::mt19937 rng(15);
  for (int8_t& v : q3) v = static_cast<int8_t>(std::uniform_int_distribution<int>(-127, 127)(rng));
  const int w3 = w.AddConstTensor(kKilnInt8, {3, 1100}, "w3", q3);
  w.SetQuantization(w3, {0.002f, 0.004f, 0.003f}, {0, 0, 0}, 0);
  const int b3 = w.AddConstTensor(kKilnFloat32, {3}, "b3", Random(3, 16));
  const int h1 = w.AddTensor(kKilnFloat32, {2, 37}, "h1");
  const int h2 = w.AddTensor(kKilnFloat32, {2, 37}, "h2");
  const int h3 = w.AddTensor(kKilnFloat32, {2, 1100}, "h3");
  const int y = w.AddTensor(kKilnFloat32, {2, 3}, "y");
  w.AddOp(kKilnBuiltinFullyConnected, {x, w1, b1}, {h1},
          KilnFullyConnectedParams{kKilnActRelu, kKilnFullyConnectedWeightsFormatDefault, false, false});
  w.AddOp(kKilnBuiltinAdd, {h1, c}, {h2}, KilnAddParams{kKilnActNone, false});
  w.AddOp(kKilnBuiltinFullyConnected, {h2, w2, -1}, {h3},
          KilnFullyConnectedParams{kKilnActRelu6, kKilnFullyConnectedWeightsFormatDefault, false, false});
  w.AddOp(kKilnBuiltinFullyConnected, {h3, w3, b3}, {y},
          KilnFullyConnectedParams{kKilnActNone, kKilnFullyConnectedWeightsFormatDefault, false, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  const std::vector<uint8_t> model = w.Finish();
  ASSERT_FALSE(model.empty()) << w.error();
  const std::vector<float> input = Random(80, 17);
  const Result reference = RunModel(model, input, true);
  ASSERT_EQ(reference.y.size(), 6u) << reference.errors;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const Result fast = RunModel(model, input, false, threads);
    ASSERT_EQ(fast.nodes.size(), 4u) << fast.errors;
    if (HasEngine(fast) && Avx2KernelExpected("KILN_DISABLE_GEMV")) {
      for (int n : {0, 2, 3}) {
        EXPECT_NE(fast.nodes[n].find("xnnpack, in host run 0, on kiln-gemv float"), std::string::npos)
            << fast.nodes[n];
      }
      EXPECT_NE(fast.nodes[1].find("xnnpack, in host run 0"), std::string::npos) << fast.nodes[1];
      EXPECT_EQ(fast.nodes[1].find("kiln-gemv"), std::string::npos) << fast.nodes[1];
    }
    ExpectClose(fast.y, reference.y);
  }
}

// Runs `model` (one input, one output of `outputs` floats) on the reference kernels and on the fast path at 1 and 2
// threads: each node's --explain text names the kernel in `kernels` (the suffix after "in host run 0"), and the
// answers match the reference kernels. Sums of up to 40 products in another order: a bound relative to the
// output's scale (cancellation leaves some outputs far smaller than their terms).
void ExpectOwnConvolutions(const std::vector<uint8_t>& model, const std::vector<float>& input, size_t outputs,
                           const std::vector<std::string>& kernels) {
  const Result reference = RunModel(model, input, true);
  ASSERT_EQ(reference.y.size(), outputs) << reference.errors;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const Result fast = RunModel(model, input, false, threads);
    ASSERT_EQ(fast.nodes.size(), kernels.size()) << fast.errors;
    if (HasEngine(fast)) {
      for (size_t n = 0; n < kernels.size(); ++n) {
        const std::string& node = fast.nodes[n];
        EXPECT_EQ(node.substr(node.find(": ") + 2), "builtin op, xnnpack, in host run 0" + kernels[n]) << node;
      }
    }
    double worst = 0, scale = 0;
    EXPECT_EQ(testing::CountOutsideScaledBound(fast.y.data(), reference.y.data(), fast.y.size(), 1e-5, 0, "y",
                                               &worst, &scale),
              0u);
  }
}

// Kiln's own convolutions inside the XNNPACK host run, beside convolutions XNNPACK runs: CONV_2D over 1 to 4 input
// channels on the direct convolution (ops/simd/float_conv.h), DEPTHWISE_CONV_2D of up to 32 channels on the depthwise
// convolution (float_depthwise.h), 1x1 stride-1 CONV_2D on the GEMM (float_gemm.h). x [2, 23, 30, 3] -> 3x3
// stride 2 SAME, RELU6 (11 channels; kiln-conv, xnnpack on AVX-512) -> depthwise 3x3 SAME, RELU (kiln-depthwise;
// its AVX-512 form on AVX-512) -> 1x1 to 40 channels, no bias (kiln-gemm; its AVX-512 form on AVX-512) ->
// depthwise 5x5 strides (2, 1) VALID (xnnpack: 40 channels) -> 1x1 stride 2 to 4 channels (xnnpack) -> 1x3 strides
// (1, 2) VALID (9 channels; kiln-conv, xnnpack on AVX-512). The answers match the reference kernels on 1 and 2
// threads.
TEST(HostEngine, ConvolutionsOverFewChannelsRunOnKilnsOwnKernels) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 23, 30, 3}, "x");
  const int w1 = w.AddConstTensor(kKilnFloat32, {11, 3, 3, 3}, "w1", Random(11 * 27, 21));
  const int b1 = w.AddConstTensor(kKilnFloat32, {11}, "b1", Random(11, 22));
  const int d1 = w.AddConstTensor(kKilnFloat32, {1, 3, 3, 11}, "d1", Random(99, 27));
  const int db1 = w.AddConstTensor(kKilnFloat32, {11}, "db1", Random(11, 28));
  const int w2 = w.AddConstTensor(kKilnFloat32, {40, 1, 1, 11}, "w2", Random(440, 23));
  const int d2 = w.AddConstTensor(kKilnFloat32, {1, 5, 5, 40}, "d2", Random(1000, 29));
  const int w4 = w.AddConstTensor(kKilnFloat32, {4, 1, 1, 40}, "w4", Random(160, 30));
  const int w3 = w.AddConstTensor(kKilnFloat32, {9, 1, 3, 4}, "w3", Random(9 * 12, 24));
  const int b3 = w.AddConstTensor(kKilnFloat32, {9}, "b3", Random(9, 25));
  const int h1 = w.AddTensor(kKilnFloat32, {2, 12, 15, 11}, "h1");
  const int h2 = w.AddTensor(kKilnFloat32, {2, 12, 15, 11}, "h2");
  const int h3 = w.AddTensor(kKilnFloat32, {2, 12, 15, 40}, "h3");
  const int h4 = w.AddTensor(kKilnFloat32, {2, 4, 11, 40}, "h4");
  const int h5 = w.AddTensor(kKilnFloat32, {2, 2, 6, 4}, "h5");
  const int y = w.AddTensor(kKilnFloat32, {2, 2, 2, 9}, "y");
  w.AddOp(kKilnBuiltinConv2d, {x, w1, b1}, {h1}, KilnConvParams{kKilnPaddingSame, 2, 2, 1, 1, kKilnActRelu6});
  w.AddOp(kKilnBuiltinDepthwiseConv2d, {h1, d1, db1}, {h2},
          KilnDepthwiseConvParams{kKilnPaddingSame, 1, 1, 1, kKilnActRelu, 1, 1});
  w.AddOp(kKilnBuiltinConv2d, {h2, w2, -1}, {h3}, KilnConvParams{kKilnPaddingValid, 1, 1, 1, 1, kKilnActNone});
  w.AddOp(kKilnBuiltinDepthwiseConv2d, {h3, d2, -1}, {h4},
          KilnDepthwiseConvParams{kKilnPaddingValid, 1, 2, 1, kKilnActNone, 1, 1});
  w.AddOp(kKilnBuiltinConv2d, {h4, w4, -1}, {h5}, KilnConvParams{kKilnPaddingValid, 2, 2, 1, 1, kKilnActNone});
  w.AddOp(kKilnBuiltinConv2d, {h5, w3, b3}, {y}, KilnConvParams{kKilnPaddingValid, 2, 1, 1, 1, kKilnActNone});
  w.SetInputs({x});
  w.SetOutputs({y});
  const std::vector<uint8_t> model = w.Finish();
  ASSERT_FALSE(model.empty()) << w.error();
  ExpectOwnConvolutions(model, Random(2 * 23 * 30 * 3, 26), 2u * 2 * 2 * 9,
                        {DirectConvKernel(3, 11), DepthwiseKernel(11, 9), GemmKernel(), "", "",
                         DirectConvKernel(4, 9)});
}


// Int8 weights of a hybrid model (float activations, per-channel scales) on Kiln's own convolutions: dequantized
// once and packed like float ones. x [2, 9, 7, 3] -> 3x3 SAME to 8 channels, RELU (kiln-conv) -> depthwise 3x3 SAME
// (kiln-depthwise) -> 1x1 to 24 channels (kiln-gemm). The answers match the reference kernels, which dequantize
// each weight as they read it.
TEST(HostEngine, HybridConvolutionsRunOnKilnsOwnKernels) {
  ModelWriter w;
  auto int8_weights = [&w](std::vector<int> dims, const char* name, int axis, uint32_t seed) {
    size_t count = 1;
    for (int d : dims) count *= static_cast<size_t>(d);
    std::vector<int8_t> q(count);
    std::mt19937 rng(seed);
    for (int8_t& v : q) v = static_cast<int8_t>(std::uniform_int_distribution<int>(-127, 127)(rng));
    const int t = w.AddConstTensor(kKilnInt8, dims, name, q);
    std::vector<float> scales;
    for (int c = 0; c < dims[static_cast<size_t>(axis)]; ++c) {
      scales.push_back(0.004f + 0.001f * static_cast<float>(c % 5));
    }
    w.SetQuantization(t, scales, std::vector<int64_t>(scales.size(), 0), axis);
    return t;
  };
  const int x = w.AddTensor(kKilnFloat32, {2, 9, 7, 3}, "x");
  const int w1 = int8_weights({8, 3, 3, 3}, "w1", 0, 51);
  const int b1 = w.AddConstTensor(kKilnFloat32, {8}, "b1", Random(8, 52));
  const int d1 = int8_weights({1, 3, 3, 8}, "d1", 3, 53);
  const int w2 = int8_weights({24, 1, 1, 8}, "w2", 0, 54);
  const int h1 = w.AddTensor(kKilnFloat32, {2, 9, 7, 8}, "h1");
  const int h2 = w.AddTensor(kKilnFloat32, {2, 9, 7, 8}, "h2");
  const int y = w.AddTensor(kKilnFloat32, {2, 9, 7, 24}, "y");
  w.AddOp(kKilnBuiltinConv2d, {x, w1, b1}, {h1}, KilnConvParams{kKilnPaddingSame, 1, 1, 1, 1, kKilnActRelu});
  w.AddOp(kKilnBuiltinDepthwiseConv2d, {h1, d1, -1}, {h2},
          KilnDepthwiseConvParams{kKilnPaddingSame, 1, 1, 1, kKilnActNone, 1, 1});
  w.AddOp(kKilnBuiltinConv2d, {h2, w2, -1}, {y}, KilnConvParams{kKilnPaddingValid, 1, 1, 1, 1, kKilnActNone});
  w.SetInputs({x});
  w.SetOutputs({y});
  const std::vector<uint8_t> model = w.Finish();
  ASSERT_FALSE(model.empty()) << w.error();
  ExpectOwnConvolutions(model, Random(2 * 9 * 7 * 3, 55), 2u * 9 * 7 * 24,
                        {DirectConvKernel(3, 8), DepthwiseKernel(8, 9), GemmKernel()});
}


// x[1,16,16,64] -> CONV_2D 1x1 (a 32 KiB filter) -> TANH -> ADD c (a 64 KiB constant): the filter is packed when
// the run is built, the ADD's constant is read at every Invoke.
std::vector<uint8_t> ConvTanhAddConstant() {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {1, 16, 16, 64}, "x");
  const int filter = w.AddConstTensor(kKilnFloat32, {128, 1, 1, 64}, "filter", Random(128 * 64, 41));
  const int bias = w.AddConstTensor(kKilnFloat32, {128}, "bias", Random(128, 42));
  const int c = w.AddConstTensor(kKilnFloat32, {1, 16, 16, 128}, "c", Random(16 * 16 * 128, 43));
  const int h = w.AddTensor(kKilnFloat32, {1, 16, 16, 128}, "h");
  const int t = w.AddTensor(kKilnFloat32, {1, 16, 16, 128}, "t");
  const int y = w.AddTensor(kKilnFloat32, {1, 16, 16, 128}, "y");
  w.AddOp(kKilnBuiltinConv2d, {x, filter, bias}, {h}, KilnConvParams{kKilnPaddingValid, 1, 1, 1, 1, kKilnActNone});
  w.AddOp(kKilnBuiltinTanh, {h}, {t});
  w.AddOp(kKilnBuiltinAdd, {t, c}, {y}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({x});
  w.SetOutputs({y});
  return w.Finish();
}

// Writes `bytes` to file `name` in the test's temporary folder (a model Kiln maps): its path, or "" on failure.
std::string WriteModelFile(const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return std::string();
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && written ? path : std::string();
}

// Invokes twice with `x`; the output of the second Invoke.
std::vector<float> InvokeTwice(KilnInterpreter* interpreter, const std::vector<float>& x) {
  std::vector<float> y;
  for (int i = 0; i < 2; ++i) {
    if (KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), x.data(), x.size() * 4) !=
            kKilnOk ||
        KilnInterpreterInvoke(interpreter) != kKilnOk) {
      return {};
    }
    const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
    const float* data = static_cast<const float*>(KilnTensorData(out));
    y.assign(data, data + KilnTensorByteSize(out) / 4);
  }
  return y;
}

TEST(HostEngine, PackedWeightsGiveTheirModelPagesBack) {
  const std::vector<uint8_t> bytes = ConvTanhAddConstant();
  ASSERT_FALSE(bytes.empty());
  const std::vector<float> x = Random(16 * 16 * 64, 44);
  const Result reference = RunModel(bytes, x, true);
  ASSERT_EQ(reference.y.size(), 16u * 16 * 128) << reference.errors;
  if (!HasEngine(RunModel(bytes, x, false))) GTEST_SKIP() << "no host engine in this build";

  const std::string path = WriteModelFile("kiln_packed_weights.tflite", bytes);
  ASSERT_FALSE(path.empty());

  // From the file: the filter's whole pages are given back, the ADD's constant stays, and both Invokes (the
  // second after the first read everything again) give the reference's answer.
  KilnModel* model = KilnModelCreateFromFile(path.c_str());
  ASSERT_NE(model, nullptr);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, nullptr);
  ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk);
  const size_t filter_bytes = 128 * 64 * 4, bias_bytes = 128 * 4;
  const size_t released = interpreter->impl->released_model_bytes();
  EXPECT_GE(released, filter_bytes - 2 * 4096) << "the filter's pages stay resident";
  EXPECT_LE(released, filter_bytes + bias_bytes) << "pages of a constant read at Invoke were given back";
  ExpectClose(InvokeTwice(interpreter, x), reference.y);
  // A second AllocateTensors packs again from the file's pages, read back in.
  ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk);
  ExpectClose(InvokeTwice(interpreter, x), reference.y);
  KilnInterpreterDelete(interpreter);
  KilnModelDelete(model);
  std::remove(path.c_str());

  // From a buffer the caller owns: nothing is given back, and the buffer keeps every byte.
  const std::vector<uint8_t> copy = bytes;
  model = KilnModelCreate(copy.data(), copy.size());
  interpreter = KilnInterpreterCreate(model, nullptr);
  ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk);
  EXPECT_EQ(interpreter->impl->released_model_bytes(), 0u);
  ExpectClose(InvokeTwice(interpreter, x), reference.y);
  EXPECT_EQ(copy, bytes);
  KilnInterpreterDelete(interpreter);
  KilnModelDelete(model);
}

// x[1,16,16,64] -> CONV_2D 1x1 whose filter is a DEQUANTIZE of float16 weights (as converters write float16
// models): the DEQUANTIZE is folded at AllocateTensors, and only the convolution's packed copy reads the result.
std::vector<uint8_t> HalfWeightsConv() {
  std::mt19937 rng(45);
  std::vector<uint16_t> half(128 * 64);
  for (uint16_t& h : half) {  // sign, an exponent for [1/8, 1), a mantissa: exact float16 values
    h = static_cast<uint16_t>((rng() & 1) << 15 | (12 + rng() % 3) << 10 | (rng() & 0x3ff));
  }
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {1, 16, 16, 64}, "x");
  const int filter16 = w.AddConstTensor<uint16_t>(kKilnFloat16, {128, 1, 1, 64}, "filter16", half);
  const int filter = w.AddTensor(kKilnFloat32, {128, 1, 1, 64}, "filter");
  const int y = w.AddTensor(kKilnFloat32, {1, 16, 16, 128}, "y");
  w.AddOp(kKilnBuiltinDequantize, {filter16}, {filter});
  w.AddOp(kKilnBuiltinConv2d, {x, filter, -1}, {y}, KilnConvParams{kKilnPaddingValid, 1, 1, 1, 1, kKilnActNone});
  w.SetInputs({x});
  w.SetOutputs({y});
  return w.Finish();
}

TEST(HostEngine, FoldedWeightsAreFreedOncePackedAndFoldedAgain) {
  const std::vector<uint8_t> bytes = HalfWeightsConv();
  ASSERT_FALSE(bytes.empty());
  const std::vector<float> x = Random(16 * 16 * 64, 46);
  const Result reference = RunModel(bytes, x, true);
  ASSERT_EQ(reference.y.size(), 16u * 16 * 128) << reference.errors;
  if (!HasEngine(RunModel(bytes, x, false))) GTEST_SKIP() << "no host engine in this build";
  const std::string path = WriteModelFile("kiln_folded_weights.tflite", bytes);
  ASSERT_FALSE(path.empty());
  KilnModel* model = KilnModelCreateFromFile(path.c_str());
  ASSERT_NE(model, nullptr);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, nullptr);
  const int dims[4] = {1, 16, 16, 64};
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "first AllocateTensors" : "after a resize: folded again");
    if (round == 1) {
      ASSERT_EQ(KilnInterpreterResizeInputTensor(interpreter, 0, dims, 4), kKilnOk);
    }
    ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk);
    EXPECT_GE(interpreter->impl->released_model_bytes(), 128u * 64 * 2 - 2 * 4096)
        << "the float16 filter's pages stay resident";
    if (!GemmKernel().empty()) {  // Kiln's GEMM packed the folded filter: it is freed
      EXPECT_EQ(interpreter->impl->released_folded_bytes(), 128u * 64 * 4) << "the folded float filter is kept";
      EXPECT_EQ(interpreter->impl->tensor(2)->data, nullptr) << "the folded filter still holds memory";
    } else {  // XNNPACK's contract keeps a static value's data valid while its runtime lives
      EXPECT_EQ(interpreter->impl->released_folded_bytes(), 0u) << "freed the static data of an XNNPACK value";
      EXPECT_NE(interpreter->impl->tensor(2)->data, nullptr);
    }
    ExpectClose(InvokeTwice(interpreter, x), reference.y);
  }
  KilnInterpreterDelete(interpreter);
  KilnModelDelete(model);
  std::remove(path.c_str());
}

TEST(HostEngine, NewerElementwiseOpsMatchTheReference) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {2, 3, 5}, "x");
  const int k = w.AddConstTensor(kKilnFloat32, {5}, "k", Random(5, 4));
  int previous = x;
  const KilnBuiltinOperator binary[] = {kKilnBuiltinMaximum, kKilnBuiltinMinimum,
                                        kKilnBuiltinSquaredDifference};
  const KilnBuiltinOperator unary[] = {kKilnBuiltinHardSwish, kKilnBuiltinElu};
  for (KilnBuiltinOperator code : binary) {
    const int t = w.AddTensor(kKilnFloat32, {2, 3, 5}, "b" + std::to_string(code));
    w.AddOp(code, {previous, k}, {t});
    previous = t;
  }
  for (KilnBuiltinOperator code : unary) {
    const int t = w.AddTensor(kKilnFloat32, {2, 3, 5}, "u" + std::to_string(code));
    w.AddOp(code, {previous}, {t});
    previous = t;
  }
  w.SetInputs({x});
  w.SetOutputs({previous});
  const std::vector<uint8_t> model = w.Finish();
  ASSERT_FALSE(model.empty()) << w.error();
  std::vector<float> input = Random(30, 5);
  for (float& v : input) v *= 4;  // reach HARD_SWISH's and ELU's bends
  const Result fast = RunModel(model, input, false);
  ASSERT_EQ(fast.nodes.size(), 5u) << fast.errors;
  if (HasEngine(fast)) {
    for (const std::string& node : fast.nodes)
      EXPECT_NE(node.find("xnnpack, in host run 0"), std::string::npos) << node;
  }
  ExpectClose(fast.y, RunModel(model, input, true).y);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// PRELU with a per-channel [1, 1, C] slope: on XNNPACK (its slope seen flat) and on the reference kernel.
TEST(HostEngine, PreluMatchesTheReference) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {1, 4, 3, 6}, "x");
  const int alpha = w.AddConstTensor(kKilnFloat32, {1, 1, 6}, "alpha", Random(6, 9));
  const int y = w.AddTensor(kKilnFloat32, {1, 4, 3, 6}, "y");
  w.AddOp(kKilnBuiltinPrelu, {x, alpha}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  const std::vector<uint8_t> model = w.Finish();
  ASSERT_FALSE(model.empty()) << w.error();
  const std::vector<float> input = Random(72, 6);
  const Result fast = RunModel(model, input, false);
  ASSERT_EQ(fast.nodes.size(), 1u) << fast.errors;
  if (HasEngine(fast)) {
    EXPECT_NE(fast.nodes[0].find("xnnpack"), std::string::npos) << fast.nodes[0];
  }
  ExpectClose(fast.y, RunModel(model, input, true).y);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// LEAKY_RELU, then RESIZE_BILINEAR under each sampling rule, on XNNPACK and on the reference kernels.
TEST(HostEngine, LeakyReluAndResizeBilinearMatchTheReference) {
  const KilnResizeBilinearParams modes[] = {{false, false}, {true, false}, {false, true}};
  for (const KilnResizeBilinearParams& mode : modes) {
    ModelWriter w;
    const int x = w.AddTensor(kKilnFloat32, {1, 5, 7, 3}, "x");
    const int leaky = w.AddTensor(kKilnFloat32, {1, 5, 7, 3}, "leaky");
    const int size = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "size", {9, 12});
    const int y = w.AddTensor(kKilnFloat32, {1, 9, 12, 3}, "y");
    w.AddOp(kKilnBuiltinLeakyRelu, {x}, {leaky}, KilnLeakyReluParams{0.2f});
    w.AddOp(kKilnBuiltinResizeBilinear, {leaky, size}, {y}, mode);
    w.SetInputs({x});
    w.SetOutputs({y});
    const std::vector<uint8_t> model = w.Finish();
    ASSERT_FALSE(model.empty()) << w.error();
    const std::vector<float> input = Random(105, 11);
    SCOPED_TRACE("align_corners " + std::to_string(mode.align_corners) + ", half_pixel_centers " +
                 std::to_string(mode.half_pixel_centers));
    const Result fast = RunModel(model, input, false);
    ASSERT_EQ(fast.nodes.size(), 2u) << fast.errors;
    if (HasEngine(fast)) {
      for (const std::string& node : fast.nodes) EXPECT_NE(node.find("xnnpack"), std::string::npos) << node;
    }
    const Result reference = RunModel(model, input, true);
    ASSERT_EQ(reference.y.size(), 9u * 12 * 3);
    ExpectClose(fast.y, reference.y);
  }
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Resizing an input rebuilds the host runs at AllocateTensors: the same interpreter gives the reference's
// answers at every size, growing and shrinking.
TEST(HostEngine, ResizedInputsRebuildTheRuns) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, {4}, "x");
  const int y = w.AddTensor(kKilnFloat32, {4}, "y");
  const int z = w.AddTensor(kKilnFloat32, {4}, "z");
  w.AddOp(kKilnBuiltinAdd, {x, x}, {y}, KilnAddParams{kKilnActNone, false});
  w.AddOp(kKilnBuiltinMul, {y, x}, {z}, KilnMulParams{kKilnActRelu});
  w.SetInputs({x});
  w.SetOutputs({z});
  const std::vector<uint8_t> bytes = w.Finish();
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, nullptr);
  ASSERT_NE(interpreter, nullptr);
  for (int n : {4, 1000, 3, 65}) {
    const int dims[1] = {n};
    ASSERT_EQ(KilnInterpreterResizeInputTensor(interpreter, 0, dims, 1), kKilnOk);
    ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk);
    const std::vector<float> input = Random(static_cast<size_t>(n), 20 + n);
    ASSERT_EQ(KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), input.data(), n * 4),
              kKilnOk);
    ASSERT_EQ(KilnInterpreterInvoke(interpreter), kKilnOk);
    const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
    ASSERT_EQ(KilnTensorByteSize(out), static_cast<size_t>(n) * 4);
    const float* data = static_cast<const float*>(KilnTensorData(out));
    for (int i = 0; i < n; ++i) {
      const float want = std::max(0.0f, (input[i] + input[i]) * input[i]);
      ASSERT_NEAR(data[i], want, 1e-6f) << "size " << n << ", element " << i;
    }
  }
  KilnInterpreterDelete(interpreter);
  KilnModelDelete(model);
}

}  // namespace
}  // namespace kiln
