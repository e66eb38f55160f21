// RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL (float32 values) and MULTINOMIAL (categories drawn from logits) from the
// Philox generator (reference/random.h), the generator kept per node so that each Invoke continues the sequence, as
// LiteRT's does.
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
  bool dynamic = false;  // shape (RANDOM_*) or num_samples (MULTINOMIAL) computed at run time: sized at Invoke
  int64_t batch = 0, classes = 0, samples = 0;  // MULTINOMIAL
  KilnType output_type = kKilnInt64;            // MULTINOMIAL: int32 or int64
};

// Keys the node's generator from its options, as LiteRT does in each Prepare.
void Seed(KilnOpaqueNode* node, RandomState* state) {
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
}

// Reads RANDOM_*'s shape (each dimension >= 0) and sizes the output.
KilnStatus RandomSize(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* shape,
                      KilnOpaqueTensor* output, RandomState* state) {
  std::vector<int32_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "shape", shape, false, &values));
  for (size_t d = 0; d < values.size(); ++d) {
    if (values[d] < 0) {
      KilnOpaqueContextReportError(context, "%s: shape %s holds %d at %zu; dimensions must be non-negative", op,
                                   TensorLabel(shape).c_str(), values[d], d);
      return kKilnError;
    }
  }
  const Dims dims(values.begin(), values.end());
  state->count = reference::NumElements(dims);
  return ResizeOutput(context, op, output, dims);
}

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
  Seed(node, state);
  // A shape computed at run time: a dynamic output, sized at Invoke (as LiteRT).
  state->dynamic = !IsConstant(shape);
  if (state->dynamic) return MakeOutputDynamic(context, op, output);
  return RandomSize(context, op, shape, output, state);
}

template <bool kNormal>
KilnStatus RandomInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = kNormal ? "RANDOM_STANDARD_NORMAL" : "RANDOM_UNIFORM";
  KILN_OPS_GET_STATE(RandomState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(RandomSize(context, op, KilnOpaqueNodeGetInput(context, node, 0),
                                         KilnOpaqueNodeGetOutput(context, node, 0), state));
  }
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

// ---- MULTINOMIAL: logits float32 [batch, classes], num_samples an int32 scalar >= 0 -> int32 or int64
// [batch, num_samples] categories (reference::Multinomial), the generator continuing across Invokes.

// Reads num_samples (>= 0) and sizes the output.
KilnStatus MultinomialSize(KilnOpaqueContext* context, const KilnOpaqueTensor* num_samples, KilnOpaqueTensor* output,
                           RandomState* state) {
  constexpr const char* op = "MULTINOMIAL";
  std::vector<int32_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "num_samples", num_samples, false, &values));
  if (values.size() != 1 || values[0] < 0) {
    KilnOpaqueContextReportError(context, "%s: num_samples %s holds %s; expected one value >= 0", op,
                                 TensorLabel(num_samples).c_str(),
                                 DimsToString(Dims(values.begin(), values.end())).c_str());
    return kKilnError;
  }
  state->samples = values[0];
  return ResizeOutput(context, op, output, Dims{state->batch, state->samples});
}

KilnStatus MultinomialPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "MULTINOMIAL";
  KILN_OPS_GET_STATE(RandomState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *logits, *num_samples;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "logits", &logits));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "num_samples", &num_samples));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "logits", logits));  // LiteRT: float32 only
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "logits", logits, 2, 2));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "num_samples", num_samples, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "num_samples", num_samples, 0, 0));
  state->output_type = KilnOpaqueTensorType(output);
  if (state->output_type != kKilnInt32 && state->output_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: output %s has type %s; expected int32 or int64", op,
                                 TensorLabel(output).c_str(), KilnTypeGetName(state->output_type));
    return kKilnError;
  }
  const Dims dims = TensorDims(logits);
  if (dims[1] <= 0) {
    KilnOpaqueContextReportError(context, "%s: logits %s has shape %s; it needs at least one class (as LiteRT)", op,
                                 TensorLabel(logits).c_str(), DimsToString(dims).c_str());
    return kKilnError;
  }
  state->batch = dims[0];
  state->classes = dims[1];
  Seed(node, state);
  // num_samples computed at run time: a dynamic output, sized at Invoke (as LiteRT).
  state->dynamic = !IsConstant(num_samples);
  if (state->dynamic) return MakeOutputDynamic(context, op, output);
  return MultinomialSize(context, num_samples, output, state);
}

KilnStatus MultinomialInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "MULTINOMIAL";
  KILN_OPS_GET_STATE(RandomState, state, context, node, op);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(MultinomialSize(context, KilnOpaqueNodeGetInput(context, node, 1), output, state));
  }
  const float* logits;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "logits", KilnOpaqueNodeGetInput(context, node, 0),
                                         state->batch * state->classes, &logits));
  const int64_t count = state->batch * state->samples;
  const auto run = [&](auto type_tag) {
    using T = decltype(type_tag);
    T* out;
    KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", output, count, &out));
    // The generator skips ahead even when nothing is drawn, as LiteRT's does.
    reference::Multinomial<T>(&state->generator, logits, state->batch, state->classes, state->samples, out);
    return kKilnOk;
  };
  return state->output_type == kKilnInt32 ? run(int32_t{}) : run(int64_t{});
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
  // MULTINOMIAL: LiteRT 2.3.0 registers v1 (register.cc).
  table->push_back({kKilnBuiltinMultinomial, 1, 1,
                    MakeOperator<RandomState>(kKilnBuiltinMultinomial, 1, &MultinomialPrepare, &MultinomialInvoke)});
}

}  // namespace kiln::ops
