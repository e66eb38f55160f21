// SEGMENT_SUM, MATRIX_DIAG, MATRIX_SET_DIAG and DYNAMIC_UPDATE_SLICE: small ops that move or fold elements by
// position (reference/matrix.h). The moving ops copy elements of any type the data-moving ops take (MovedTypes).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/matrix.h"

namespace kiln::ops {
namespace {

// ---- SEGMENT_SUM: rows of data summed by sorted segment id. The ids must be constant: the output's first
// dimension is the last id + 1, and Kiln sizes outputs in Prepare.

struct SegmentSumState {
  std::vector<int32_t> ids;  // aligned copy of the constant ids
  int64_t inner = 1, segments = 0;
  KilnType type = kKilnFloat32;
};

KilnStatus SegmentSumPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SEGMENT_SUM";
  KILN_OPS_GET_STATE(SegmentSumState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *data, *ids;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "data", &data));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "segment_ids", &ids));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  state->type = KilnOpaqueTensorType(data);
  if (state->type != kKilnFloat32 && state->type != kKilnInt32) {
    KilnOpaqueContextReportError(context, "%s: data %s has type %s; expected float32 or int32", op,
                                 TensorLabel(data).c_str(), KilnTypeGetName(state->type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, state->type));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "segment_ids", ids, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "data", data, 1, 8));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "segment_ids", ids, 1, 1));
  const Dims data_dims = TensorDims(data);
  const Dims id_dims = TensorDims(ids);
  if (id_dims[0] != data_dims[0]) {
    KilnOpaqueContextReportError(context, "%s: segment_ids %s hold %lld ids; data %s has %lld rows (dimension 0)", op,
                                 TensorLabel(ids).c_str(), static_cast<long long>(id_dims[0]),
                                 TensorLabel(data).c_str(), static_cast<long long>(data_dims[0]));
    return kKilnError;
  }
  if (!IsConstant(ids)) {
    KilnOpaqueContextReportError(context,
                                 "%s: segment_ids %s are computed at run time, and the output's shape depends on "
                                 "their values; Kiln sizes outputs in Prepare, so they must be a constant tensor of "
                                 "the model",
                                 op, TensorLabel(ids).c_str());
    return kKilnError;
  }
  std::vector<int32_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadConstantInts(context, op, "segment_ids", ids, false, &values));
  int64_t bad = -1;
  state->segments = reference::SortedSegmentCount(values.data(), static_cast<int64_t>(values.size()), &bad);
  if (state->segments < 0) {
    KilnOpaqueContextReportError(context,
                                 "%s: segment id %d at position %lld of segment_ids %s breaks their order: the ids "
                                 "must start at 0 and each grow by 0 or 1",
                                 op, values[static_cast<size_t>(bad)], static_cast<long long>(bad),
                                 TensorLabel(ids).c_str());
    return kKilnError;
  }
  state->ids = std::move(values);
  const Dims row(data_dims.begin() + 1, data_dims.end());
  state->inner = reference::NumElements(row);
  Dims out_dims = {state->segments};
  out_dims.insert(out_dims.end(), row.begin(), row.end());
  return ResizeOutput(context, op, output, out_dims);
}

KilnStatus SegmentSumInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SEGMENT_SUM";
  KILN_OPS_GET_STATE(SegmentSumState, state, context, node, op);
  const int64_t rows = static_cast<int64_t>(state->ids.size());
  if (state->segments * state->inner == 0) return kKilnOk;
  const auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* data;
    T* output;
    KILN_OPAQUE_ENSURE_STATUS(
        GetInvokeData(context, node, op, rows * state->inner, state->segments * state->inner, &data, &output));
    reference::SegmentSum<T>(data, state->ids.data(), rows, state->inner, state->segments, output);
    return kKilnOk;
  };
  return state->type == kKilnInt32 ? run(int32_t{}) : run(float{});
}

// ---- MATRIX_DIAG: [..., n] -> [..., n, n].

// The diagonal ops' types: the moved types but bool, which LiteRT 2.3.0 registers but mishandles (measured: its
// MATRIX_DIAG and MATRIX_SET_DIAG on bool write wrong values or corrupt its heap), so Kiln refuses it at Prepare.
const std::vector<KilnType>& DiagTypes() {
  static const std::vector<KilnType> types = {kKilnFloat32, kKilnInt32, kKilnInt64, kKilnInt8, kKilnUInt8, kKilnInt16};
  return types;
}

struct DiagState {
  int64_t batches = 0, rows = 0, cols = 0;
  size_t element_size = 0;
};

KilnStatus MatrixDiagPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "MATRIX_DIAG";
  KILN_OPS_GET_STATE(DiagState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, DiagTypes(), &state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 1, 7));
  Dims dims = TensorDims(input);
  state->rows = state->cols = dims.back();
  state->batches = reference::NumElements(Dims(dims.begin(), dims.end() - 1));
  dims.push_back(dims.back());
  return ResizeOutput(context, op, output, dims);
}

KilnStatus MatrixDiagInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "MATRIX_DIAG";
  KILN_OPS_GET_STATE(DiagState, state, context, node, op);
  const int64_t in_count = state->batches * state->rows;
  if (in_count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, in_count, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, in_count * state->cols, state->element_size));
  reference::MatrixDiag(KilnOpaqueTensorData(input), state->batches, state->rows, state->element_size,
                        KilnOpaqueTensorData(output));
  return kKilnOk;
}

// ---- MATRIX_SET_DIAG: input [..., rows, cols], diagonal [..., min(rows, cols)] -> input's shape.

KilnStatus MatrixSetDiagPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "MATRIX_SET_DIAG";
  KILN_OPS_GET_STATE(DiagState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *input, *diagonal;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "diagonal", &diagonal));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, DiagTypes(), &state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "diagonal", diagonal, KilnOpaqueTensorType(input)));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 2, 8));
  const Dims dims = TensorDims(input);
  state->rows = dims[dims.size() - 2];
  state->cols = dims.back();
  state->batches = reference::NumElements(Dims(dims.begin(), dims.end() - 2));
  // LiteRT does not check the diagonal's shape (and reads past a short one); Kiln requires the exact shape.
  Dims want(dims.begin(), dims.end() - 2);
  want.push_back(std::min(state->rows, state->cols));
  if (TensorDims(diagonal) != want) {
    KilnOpaqueContextReportError(context, "%s: diagonal %s has shape %s; input %s of shape %s needs %s", op,
                                 TensorLabel(diagonal).c_str(), DimsToString(TensorDims(diagonal)).c_str(),
                                 TensorLabel(input).c_str(), DimsToString(dims).c_str(), DimsToString(want).c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, dims);
}

KilnStatus MatrixSetDiagInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "MATRIX_SET_DIAG";
  KILN_OPS_GET_STATE(DiagState, state, context, node, op);
  const int64_t count = state->batches * state->rows * state->cols;
  if (count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* diagonal = KilnOpaqueNodeGetInput(context, node, 1);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const int64_t diag_count = state->batches * std::min(state->rows, state->cols);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, count, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "diagonal", diagonal, diag_count, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, count, state->element_size));
  reference::MatrixSetDiag(KilnOpaqueTensorData(input), KilnOpaqueTensorData(diagonal), state->batches, state->rows,
                           state->cols, state->element_size, KilnOpaqueTensorData(output));
  return kKilnOk;
}

// ---- DYNAMIC_UPDATE_SLICE: operand with update written over it at start_indices (read at Invoke, clamped so
// the update fits, as LiteRT).

struct UpdateSliceState {
  Dims operand, update;
  size_t element_size = 0;
};

KilnStatus UpdateSlicePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "DYNAMIC_UPDATE_SLICE";
  KILN_OPS_GET_STATE(UpdateSliceState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 3, 3, 1));
  const KilnOpaqueTensor *operand, *update, *starts;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "operand", &operand));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "update", &update));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "start_indices", &starts));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, operand, output, MovedTypes(), &state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "update", update, KilnOpaqueTensorType(operand)));
  const KilnType index_type = KilnOpaqueTensorType(starts);
  if (index_type != kKilnInt32 && index_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: start_indices %s have type %s; expected int32 or int64", op,
                                 TensorLabel(starts).c_str(), KilnTypeGetName(index_type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "start_indices", starts, 1, 1));
  state->operand = TensorDims(operand);
  state->update = TensorDims(update);
  const size_t rank = state->operand.size();
  if (TensorDims(starts)[0] != static_cast<int64_t>(rank)) {
    KilnOpaqueContextReportError(context, "%s: start_indices %s hold %lld values; operand %s has rank %zu", op,
                                 TensorLabel(starts).c_str(), static_cast<long long>(TensorDims(starts)[0]),
                                 TensorLabel(operand).c_str(), rank);
    return kKilnError;
  }
  bool fits = state->update.size() == rank;
  for (size_t d = 0; fits && d < rank; ++d) fits = state->update[d] <= state->operand[d];
  if (!fits) {
    KilnOpaqueContextReportError(context,
                                 "%s: update %s of shape %s does not fit operand %s of shape %s (same rank, no "
                                 "dimension larger)",
                                 op, TensorLabel(update).c_str(), DimsToString(state->update).c_str(),
                                 TensorLabel(operand).c_str(), DimsToString(state->operand).c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, state->operand);
}

KilnStatus UpdateSliceInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "DYNAMIC_UPDATE_SLICE";
  KILN_OPS_GET_STATE(UpdateSliceState, state, context, node, op);
  const int64_t count = reference::NumElements(state->operand);
  if (count == 0) return kKilnOk;
  const KilnOpaqueTensor* operand = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* update = KilnOpaqueNodeGetInput(context, node, 1);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  std::vector<int64_t> starts;
  KILN_OPAQUE_ENSURE_STATUS(
      ReadIntValues(context, op, "start_indices", KilnOpaqueNodeGetInput(context, node, 2), &starts));
  if (starts.size() != state->operand.size()) {
    KilnOpaqueContextReportError(context, "%s: start_indices hold %zu values; expected %zu", op, starts.size(),
                                 state->operand.size());
    return kKilnError;
  }
  const size_t es = state->element_size;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "operand", operand, count, es));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "update", update, reference::NumElements(state->update), es));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, count, es));
  reference::DynamicUpdateSlice(
      state->operand, state->update, reference::ClampUpdateStarts(state->operand, state->update, starts), es,
      KilnOpaqueTensorData(operand), KilnOpaqueTensorData(update), KilnOpaqueTensorData(output));
  return kKilnOk;
}

template <typename State>
void Add(std::vector<BuiltinOp>* table, KilnBuiltinOperator code, int max_version,
         KilnStatus (*prepare)(KilnOpaqueContext*, KilnOpaqueNode*),
         KilnStatus (*invoke)(KilnOpaqueContext*, KilnOpaqueNode*)) {
  table->push_back({code, 1, max_version, MakeOperator<State>(code, max_version, prepare, invoke)});
}

}  // namespace

void AddMatrixOps(std::vector<BuiltinOp>* table) {
  // The versions LiteRT 2.3.0 registers, measured by loading single-op models in its Interpreter: SEGMENT_SUM,
  // MATRIX_DIAG and MATRIX_SET_DIAG v1, DYNAMIC_UPDATE_SLICE v1-v6 (later versions add element types).
  Add<SegmentSumState>(table, kKilnBuiltinSegmentSum, 1, &SegmentSumPrepare, &SegmentSumInvoke);
  Add<DiagState>(table, kKilnBuiltinMatrixDiag, 1, &MatrixDiagPrepare, &MatrixDiagInvoke);
  Add<DiagState>(table, kKilnBuiltinMatrixSetDiag, 1, &MatrixSetDiagPrepare, &MatrixSetDiagInvoke);
  Add<UpdateSliceState>(table, kKilnBuiltinDynamicUpdateSlice, 6, &UpdateSlicePrepare, &UpdateSliceInvoke);
}

}  // namespace kiln::ops
