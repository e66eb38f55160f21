// libFuzzer target: a model from arbitrary bytes goes the whole way a user's would, through the C API:
// KilnModelCreate, KilnInterpreterCreate, AllocateTensors (every op's Prepare) and Invoke (every op's kernel, on
// the XNNPACK fast path or, for inputs with an odd first byte... see below, the reference kernels), with inputs
// filled from the fuzzer's bytes. Each step must succeed or fail with a message; nothing may crash, hang, read or
// write out of bounds, or trip UBSan. The reader, the ops' shape rules, the memory planner and the kernels are
// compiled into this binary with the fuzzer's instrumentation.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kiln/c_api.h"
#include "runtime/core.h"
#include "runtime/model/limits.h"
#include "runtime/subgraph_hook.h"

namespace {

void Quiet(void*, const char*, va_list) {}

// The bytes the model's tensors declare, saturating; models that declare more than the fuzzer's budget are
// left out (the budget is the fuzzer's, not a limit of Kiln's).
constexpr uint64_t kBudget = 8u << 20;

// Over every subgraph: control-flow ops prepare the others too (read through the model's internal description,
// which the public API shows for subgraph 0 only).
uint64_t DeclaredBytes(const KilnModel* model) {
  uint64_t total = 0;
  for (const kiln::SubgraphDesc& graph : model->data->desc.subgraphs) {
    for (const kiln::TensorDesc& tensor : graph.tensors) {
      uint64_t bytes = KilnTypeGetSize(tensor.type) ? KilnTypeGetSize(tensor.type) : 4;
      for (int dim : tensor.shape) {
        const uint64_t extent = dim > 0 ? static_cast<uint64_t>(dim) : 1;
        if (extent > kBudget || bytes > kBudget / extent) return kBudget + 1;
        bytes *= extent;
      }
      total += bytes;
      if (total > kBudget) return total;
    }
  }
  return total;
}

// A mutated WHILE whose condition never turns false would loop forever (as in LiteRT): the fuzzer's budget.
constexpr uint64_t kWhileIterations = 1000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::subgraph_hook::SetWhileIterationLimit(kWhileIterations);
  // Kiln's one memory rule (no tensor and no arena above MaxTensorBytes) at the fuzzer's budget: an output an op
  // sizes from constants or inputs (TILE multiples, FILL dims, ONE_HOT depth, a TRANSPOSE_CONV output_shape a
  // FLOOR_DIV computes, ...) must fail before allocating, not reach libFuzzer's malloc limit. An eighth of the
  // declared budget, 1 MiB: under the fuzzer's instrumentation an op costs up to about 1 us per output element (a
  // 27.5-million-element quantized TRANSPOSE_CONV output took 25 s at -O1 with ASan, 0.6 s in a release build; an
  // int8 RESIZE_BILINEAR of 4 million elements 4.4 s), and the campaign's unit timeout is 5 seconds.
  kiln::SetMaxTensorBytes(kBudget / 8);
  KilnModel* model = KilnModelCreateWithErrorReporter(data, size, Quiet, nullptr);
  if (model == nullptr) return 0;
  if (DeclaredBytes(model) > kBudget) {
    KilnModelDelete(model);
    return 0;
  }
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Quiet, nullptr);
  KilnInterpreterOptionsSetNumThreads(options, 1);
  KilnInterpreterOptionsSetDevicePolicy(options, kKilnDeviceCpuOnly);
  // Both paths: the last byte of the input picks the reference kernels or the fast path.
  KilnInterpreterOptionsSetUseReferenceKernels(options, (data[size - 1] & 1) != 0);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  KilnModelDelete(model);  // the interpreter keeps what it needs
  if (interpreter == nullptr) return 0;
  size_t arena = 0;
  if (KilnInterpreterAllocateTensors(interpreter) == kKilnOk &&
      KilnInterpreterGetArenaStats(interpreter, &arena, nullptr) == kKilnOk && arena <= 4 * kBudget) {
    for (int32_t i = 0; i < KilnInterpreterGetInputTensorCount(interpreter); ++i) {
      KilnTensor* t = KilnInterpreterGetInputTensor(interpreter, i);
      auto* bytes = static_cast<uint8_t*>(KilnTensorData(t));
      for (size_t k = 0; bytes != nullptr && k < KilnTensorByteSize(t); ++k) bytes[k] = data[(k * 7 + i) % size];
    }
    for (int run = 0; run < 2; ++run) {
      if (KilnInterpreterInvoke(interpreter) != kKilnOk) break;
      unsigned checksum = 0;
      for (int32_t o = 0; o < KilnInterpreterGetOutputTensorCount(interpreter); ++o) {
        const KilnTensor* t = KilnInterpreterGetOutputTensor(interpreter, o);
        const auto* bytes = static_cast<const uint8_t*>(KilnTensorData(t));
        for (size_t k = 0; bytes != nullptr && k < KilnTensorByteSize(t); ++k) checksum += bytes[k];
      }
      volatile unsigned sink = checksum;
      (void)sink;
    }
  }
  KilnInterpreterDelete(interpreter);
  return 0;
}
