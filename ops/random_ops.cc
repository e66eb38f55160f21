// RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL: float32 values from the Philox generator (reference/random.h), the
// generator kept per node so that each Invoke continues the sequence, as LiteRT's does.
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/random.h"

namespace kiln::ops {
namespace {

struct RandomState {
  reference::Philox generator{0, 0};
  int64_t count = 0;
};

template <bool kNormal>
KilnStatus RandomPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = kNormal ? "RANDOM_STANDARD_NORMAL" : "RANDOM_UNIFORM";
  KILN_OPS_GET_STATE(RandomState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* shape;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "shape", &shape));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "shape", shape, kKilnInt32));  // LiteRT: int32 only
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "shape", shape, 1, 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "output", output));
  if (!IsConstant(shape)) {
    KilnOpaqueContextReportError(context,
                                 "%s: shape %s is computed at run time, and the output's shape is its values; Kiln "
                                 "sizes outputs in Prepare, so it must be a constant tensor of the model",
                                 op, TensorLabel(shape).c_str());
    return kKilnError;
  }
  std::vector<int32_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadConstantInts(context, op, "shape", shape, false, &values));
  for (size_t d = 0; d < values.size(); ++d) {
    if (values[d] < 0) {
      KilnOpaqueContextReportError(context, "%s: shape %s holds %d at %zu; dimensions must be non-negative", op,
                                   TensorLabel(shape).c_str(), values[d], d);
      return kKilnError;
    }
  }
  const auto* options = static_cast<const KilnRandomParams*>(KilnOpaqueNodeGetBuiltinData(node));
  // LiteRT keeps each seed as an int: the low 32 bits, sign-extended (measured: seed 2^40 acts as 0, -7 as -7).
  const auto as_litert = [](int64_t seed) {
    return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(seed))));
  };
  uint64_t seed = options != nullptr ? as_litert(options->seed) : 0;
  uint64_t seed2 = options != nullptr ? as_litert(options->seed2) : 0;
  if (seed == 0 && seed2 == 0) {
    // Both 0 asks for seeds drawn at random, as LiteRT (and TensorFlow) do: such a model is not reproducible.
    std::random_device device;
    seed = (uint64_t{device()} << 32) | device();
    seed2 = (uint64_t{device()} << 32) | device();
  }
  state->generator = reference::Philox(seed, seed2);
  const Dims dims(values.begin(), values.end());
  state->count = reference::NumElements(dims);
  return ResizeOutput(context, op, output, dims);
}

template <bool kNormal>
KilnStatus RandomInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = kNormal ? "RANDOM_STANDARD_NORMAL" : "RANDOM_UNIFORM";
  KILN_OPS_GET_STATE(RandomState, state, context, node, op);
  if (state->count == 0) return kKilnOk;
  float* out;
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), state->count, &out));
  // Four values per block of the generator; the unused rest of the last block is dropped, as LiteRT does.
  for (int64_t done = 0; done < state->count; done += 4) {
    const std::array<uint32_t, 4> block = state->generator.Next();
    float values[4];
    if constexpr (kNormal) {
      reference::BoxMuller(block[0], block[1], &values[0], &values[1]);
      reference::BoxMuller(block[2], block[3], &values[2], &values[3]);
    } else {
      for (int k = 0; k < 4; ++k) values[k] = reference::Uint32ToFloat(block[k]);
    }
    for (int64_t k = 0; k < 4 && done + k < state->count; ++k) out[done + k] = values[k];
  }
  return kKilnOk;
}

}  // namespace

void AddRandomOps(std::vector<BuiltinOp>* table) {
  // LiteRT 2.3.0 registers RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL v1 (measured in its Interpreter).
  table->push_back(
      {kKilnBuiltinRandomUniform, 1, 1,
       MakeOperator<RandomState>(kKilnBuiltinRandomUniform, 1, &RandomPrepare<false>, &RandomInvoke<false>)});
  table->push_back(
      {kKilnBuiltinRandomStandardNormal, 1, 1,
       MakeOperator<RandomState>(kKilnBuiltinRandomStandardNormal, 1, &RandomPrepare<true>, &RandomInvoke<true>)});
}

}  // namespace kiln::ops
