// L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION (float32; reference/normalization.h).
#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/normalization.h"

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

KilnStatus L2NormPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "L2_NORMALIZATION";
  // LiteRT's kernels apply no fused activation and refuse one.
  const auto* options = static_cast<const KilnL2NormParams*>(KilnOpaqueNodeGetBuiltinData(node));
  if (options != nullptr && options->activation != kKilnActNone) {
    KilnOpaqueContextReportError(context, "%s: fused activation %d is not supported (only NONE, as in LiteRT)", op,
                                 static_cast<int>(options->activation));
    return kKilnError;
  }
  return PrepareRows(context, node, op, 1, 4);
}

KilnStatus L2NormInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
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
  // LiteRT: L2_NORMALIZATION v1-2 (v2 adds int8, refused at Prepare as a non-float32 input), LRN v1.
  table->push_back({kKilnBuiltinL2Normalization, 1, 2,
                    MakeOperator<NoState>(kKilnBuiltinL2Normalization, 2, &L2NormPrepare, &L2NormInvoke)});
  table->push_back({kKilnBuiltinLocalResponseNormalization, 1, 1,
                    MakeOperator<NoState>(kKilnBuiltinLocalResponseNormalization, 1, &LocalResponseNormPrepare,
                                          &LocalResponseNormInvoke)});
}

}  // namespace kiln::ops
