// BUCKETIZE and FAKE_QUANT: per-element value ops with their parameters in the options (reference/matrix.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/matrix.h"

namespace kiln::ops {
namespace {

// ---- BUCKETIZE: float32, float64, int32 or int64 -> int32 bucket indices.

struct BucketizeState {
  std::vector<float> boundaries;
  int64_t count = 0;
  KilnType type = kKilnFloat32;
};

KilnStatus BucketizePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "BUCKETIZE";
  KILN_OPS_GET_STATE(BucketizeState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  state->type = KilnOpaqueTensorType(input);
  if (state->type != kKilnFloat32 && state->type != kKilnFloat64 && state->type != kKilnInt32 &&
      state->type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: input %s has type %s; expected float32, float64, int32 or int64", op,
                                 TensorLabel(input).c_str(), KilnTypeGetName(state->type));
    return kKilnError;
  }
  // LiteRT makes the output int32 whatever the model declares; Kiln requires the declaration to say so.
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, kKilnInt32));
  const KilnBucketizeParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  if (options->num_boundaries > 0 && options->boundaries == nullptr) {
    KilnOpaqueContextReportError(context, "%s: options name %d boundaries but hold none", op, options->num_boundaries);
    return kKilnError;
  }
  state->boundaries.assign(options->boundaries, options->boundaries + std::max(options->num_boundaries, 0));
  for (size_t i = 0; i < state->boundaries.size(); ++i) {
    if (std::isnan(state->boundaries[i]) || (i > 0 && state->boundaries[i] < state->boundaries[i - 1])) {
      KilnOpaqueContextReportError(context,
                                   "%s: boundary %zu is %g; the boundaries must be numbers in ascending order "
                                   "(equal neighbours allowed)",
                                   op, i, static_cast<double>(state->boundaries[i]));
      return kKilnError;
    }
  }
  const Dims dims = TensorDims(input);
  state->count = reference::NumElements(dims);
  return ResizeOutput(context, op, output, dims);
}

KilnStatus BucketizeInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "BUCKETIZE";
  KILN_OPS_GET_STATE(BucketizeState, state, context, node, op);
  if (state->count == 0) return kKilnOk;
  const auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* in;
    int32_t* out;
    KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, state->count, state->count, &in, &out));
    const int n = static_cast<int>(state->boundaries.size());
    for (int64_t i = 0; i < state->count; ++i) out[i] = reference::Bucketize<T>(in[i], state->boundaries.data(), n);
    return kKilnOk;
  };
  switch (state->type) {
    case kKilnFloat64: return run(double{});
    case kKilnInt32: return run(int32_t{});
    case kKilnInt64: return run(int64_t{});
    default: return run(float{});
  }
}

// ---- FAKE_QUANT: float32 -> float32 on the grid of num_bits over the nudged [min, max].

struct FakeQuantState {
  reference::FakeQuantGrid grid{};
  int64_t count = 0;
};

KilnStatus FakeQuantPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "FAKE_QUANT";
  KILN_OPS_GET_STATE(FakeQuantState, state, context, node, op);
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 1, 1, &input, &output));
  const KilnFakeQuantParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  if (options->narrow_range) {
    KilnOpaqueContextReportError(context,
                                 "%s: narrow_range is set; LiteRT refuses it at run time too (it is meant "
                                 "for weights, not activations)",
                                 op);
    return kKilnError;
  }
  if (options->num_bits < 2 || options->num_bits > 16) {
    KilnOpaqueContextReportError(context, "%s: num_bits is %d; expected 2 to 16", op, options->num_bits);
    return kKilnError;
  }
  if (!std::isfinite(options->min) || !std::isfinite(options->max) || !(options->min < options->max)) {
    KilnOpaqueContextReportError(context, "%s: min %g and max %g must be finite with min < max", op,
                                 static_cast<double>(options->min), static_cast<double>(options->max));
    return kKilnError;
  }
  state->grid = reference::NudgeFakeQuant(options->min, options->max, 0, (1 << options->num_bits) - 1);
  const Dims dims = TensorDims(input);
  state->count = reference::NumElements(dims);
  return ResizeOutput(context, op, output, dims);
}

KilnStatus FakeQuantInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "FAKE_QUANT";
  KILN_OPS_GET_STATE(FakeQuantState, state, context, node, op);
  if (state->count == 0) return kKilnOk;
  const float* in;
  float* out;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInvokeData(context, node, op, state->count, state->count, &in, &out));
  reference::FakeQuant(state->grid, state->count, in, out);
  return kKilnOk;
}

}  // namespace

void AddBucketOps(std::vector<BuiltinOp>* table) {
  // LiteRT 2.3.0 registers BUCKETIZE v1 and FAKE_QUANT v1-v2 (measured in its Interpreter).
  table->push_back({kKilnBuiltinBucketize, 1, 1,
                    MakeOperator<BucketizeState>(kKilnBuiltinBucketize, 1, &BucketizePrepare, &BucketizeInvoke)});
  table->push_back({kKilnBuiltinFakeQuant, 1, 2,
                    MakeOperator<FakeQuantState>(kKilnBuiltinFakeQuant, 2, &FakeQuantPrepare, &FakeQuantInvoke)});
}

}  // namespace kiln::ops
