// L2_NORMALIZATION (float32, int8, uint8) and LOCAL_RESPONSE_NORMALIZATION (float32; reference/normalization.h,
// reference/quantized_kernels.h).
#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/normalization.h"
#include "ops/reference/quantized_kernels.h"

namespace kiln::ops {
namespace {

// The rows along the last axis: (outer, depth) of a float32 input of rank min_rank..max_rank, resized output.
KilnStatus PrepareRows(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, int min_rank,
                       int max_rank) {
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatInputOutput(context, node, op, 1, 1, &input, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, min_rank, max_rank));
  return ResizeOutput(context, op, output, TensorDims(input));
}

struct Rows {
  int64_t outer = 0, depth = 0;
  const float* input = nullptr;
  float* output = nullptr;
};

KilnStatus InvokeRows(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, Rows* rows) {
  const Dims dims = TensorDims(KilnOpaqueNodeGetInput(context, node, 0));
  const int64_t count = reference::NumElements(dims);
  rows->depth = dims.empty() ? 1 : dims.back();
  rows->outer = rows->depth == 0 ? 0 : count / rows->depth;
  if (count == 0) return kKilnOk;
  return GetFloatInvokeData(context, node, op, count, count, &rows->input, &rows->output);
}

struct L2NormState {
  KilnType type = kKilnNoType;  // kKilnInt8 or kKilnUInt8 on the quantized path
  int32_t input_zero_point = 0, output_zero_point = 0;
};

KilnStatus L2NormPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "L2_NORMALIZATION";
  KILN_OPS_GET_STATE(L2NormState, state, context, node, op);
  // LiteRT's kernels apply no fused activation and refuse one.
  const auto* options = static_cast<const KilnL2NormParams*>(KilnOpaqueNodeGetBuiltinData(node));
  if (options != nullptr && options->activation != kKilnActNone) {
    KilnOpaqueContextReportError(context, "%s: fused activation %d is not supported (only NONE, as in LiteRT)", op,
                                 static_cast<int>(options->activation));
    return kKilnError;
  }
  state->type = Quantized8InputType(context, node);
  if (state->type == kKilnNoType) return PrepareRows(context, node, op, 1, 4);
  // int8 / uint8 (LiteRT's v2 and v1): any per-tensor input quantization; the output quantized 1/128 with zero
  // point 0 (int8) or 128 (uint8), as LiteRT requires.
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 1, 4));
  float input_scale, output_scale;
  KILN_OPAQUE_ENSURE_STATUS(
      GetQuantization8(context, op, "input", input, state->type, &input_scale, &state->input_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(
      GetQuantization8(context, op, "output", output, state->type, &output_scale, &state->output_zero_point));
  const int32_t required_zero_point = state->type == kKilnUInt8 ? 128 : 0;
  if (output_scale != 1.0f / 128 || state->output_zero_point != required_zero_point) {
    KilnOpaqueContextReportError(context,
                                 "%s: %s output %s has scale %g and zero point %d; L2_NORMALIZATION needs 1/128 "
                                 "and %d (as LiteRT)",
                                 op, KilnTypeGetName(state->type), TensorLabel(output).c_str(),
                                 static_cast<double>(output_scale), static_cast<int>(state->output_zero_point),
                                 static_cast<int>(required_zero_point));
    return kKilnError;
  }
  return ResizeOutput(context, op, output, TensorDims(input));
}

KilnStatus L2NormInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "L2_NORMALIZATION";
  KILN_OPS_GET_STATE(L2NormState, state, context, node, op);
  if (state->type != kKilnNoType) {
    const Dims dims = TensorDims(KilnOpaqueNodeGetInput(context, node, 0));
    const int64_t count = reference::NumElements(dims);
    const int64_t depth = dims.empty() ? 1 : dims.back();
    if (count == 0) return kKilnOk;
    const auto run = [&](auto type_tag) {
      using T = decltype(type_tag);
      const T* input;
      T* output;
      KILN_OPAQUE_ENSURE_STATUS(GetInvokeData(context, node, op, count, count, &input, &output));
      // LiteRT applies the inverse square root with gemmlowp's double rounding (measured: single rounding differs
      // on qu8_l2_norm_5; the int8 models agree either way).
      reference::L2NormalizationQuantized<T>(count / depth, depth, state->input_zero_point, state->output_zero_point,
                                             reference::Rounding::kDouble, input, output);
      return kKilnOk;
    };
    return state->type == kKilnUInt8 ? run(uint8_t{}) : run(int8_t{});
  }
  Rows rows;
  KILN_OPAQUE_ENSURE_STATUS(InvokeRows(context, node, "L2_NORMALIZATION", &rows));
  if (rows.outer > 0) reference::L2NormalizationFloat(rows.outer, rows.depth, rows.input, rows.output);
  return kKilnOk;
}

KilnStatus LocalResponseNormPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "LOCAL_RESPONSE_NORMALIZATION";
  const KilnLocalResponseNormParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  if (options->radius < 0) {
    KilnOpaqueContextReportError(context, "%s: radius %d is negative", op, options->radius);
    return kKilnError;
  }
  return PrepareRows(context, node, op, 4, 4);
}

KilnStatus LocalResponseNormInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const auto* options = static_cast<const KilnLocalResponseNormParams*>(KilnOpaqueNodeGetBuiltinData(node));
  Rows rows;
  KILN_OPAQUE_ENSURE_STATUS(InvokeRows(context, node, "LOCAL_RESPONSE_NORMALIZATION", &rows));
  if (rows.outer == 0) return kKilnOk;
  reference::LocalResponseNormParams params;
  params.radius = options->radius;
  params.bias = options->bias;
  params.alpha = options->alpha;
  params.beta = options->beta;
  reference::LocalResponseNormFloat(params, rows.outer, rows.depth, rows.input, rows.output);
  return kKilnOk;
}

}  // namespace

void AddNormalizationOps(std::vector<BuiltinOp>* table) {
  // LiteRT: L2_NORMALIZATION v1-2 (v1 float32 and uint8, v2 adds int8), LRN v1.
  table->push_back({kKilnBuiltinL2Normalization, 1, 2,
                    MakeOperator<L2NormState>(kKilnBuiltinL2Normalization, 2, &L2NormPrepare, &L2NormInvoke)});
  table->push_back({kKilnBuiltinLocalResponseNormalization, 1, 1,
                    MakeOperator<NoState>(kKilnBuiltinLocalResponseNormalization, 1, &LocalResponseNormPrepare,
                                          &LocalResponseNormInvoke)});
}

}  // namespace kiln::ops
