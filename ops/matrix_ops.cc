// SEGMENT_SUM, MATRIX_DIAG, MATRIX_SET_DIAG, DYNAMIC_UPDATE_SLICE, REVERSE_SEQUENCE, SPARSE_TO_DENSE and
// EMBEDDING_LOOKUP_SPARSE: small ops that move or fold elements by position (reference/matrix.h). The moving ops copy
// elements of any type the data-moving ops take (MovedTypes).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kiln/builtin_op_data.h"
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
  bool dynamic = false;    // segment_ids computed at run time: Invoke prepares again and sizes the output
  bool at_invoke = false;  // Prepare running from Invoke (PrepareAtInvoke)
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
  // segment_ids computed at run time: a dynamic output (as LiteRT); Invoke runs this again with the ids.
  state->dynamic = !IsConstant(ids);
  if (state->dynamic && !state->at_invoke) {
    state->ids.clear();
    state->segments = 0;
    return MakeOutputDynamic(context, op, output);
  }
  std::vector<int32_t> values;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "segment_ids", ids, false, &values));
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
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return SegmentSumPrepare(context, node); }));
  }
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

// ---- REVERSE_SEQUENCE: input, seq_lengths (read at Invoke) -> the input with the first seq_lengths[b] elements
// along seq_dim reversed in each slice b of batch_dim. LiteRT's types: float32, int32, int64, uint8, int16.

struct ReverseSequenceState {
  Dims dims;
  int seq_dim = 0, batch_dim = 0;
  size_t element_size = 0;
};

KilnStatus ReverseSequencePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "REVERSE_SEQUENCE";
  KILN_OPS_GET_STATE(ReverseSequenceState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *input, *lengths;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "seq_lengths", &lengths));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  static const std::vector<KilnType> types = {kKilnFloat32, kKilnInt32, kKilnInt64, kKilnUInt8, kKilnInt16};
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, input, output, types, &state->element_size));
  const KilnType length_type = KilnOpaqueTensorType(lengths);
  if (length_type != kKilnInt32 && length_type != kKilnInt64) {
    KilnOpaqueContextReportError(context, "%s: seq_lengths %s have type %s; expected int32 or int64", op,
                                 TensorLabel(lengths).c_str(), KilnTypeGetName(length_type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "seq_lengths", lengths, 1, 1));
  const KilnReverseSequenceParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  state->dims = TensorDims(input);
  const int rank = static_cast<int>(state->dims.size());
  if (options->seq_dim < 0 || options->seq_dim >= rank || options->batch_dim < 0 || options->batch_dim >= rank ||
      options->seq_dim == options->batch_dim) {
    KilnOpaqueContextReportError(context,
                                 "%s: seq_dim %d and batch_dim %d must be two different dimensions of input %s (rank "
                                 "%d)",
                                 op, options->seq_dim, options->batch_dim, TensorLabel(input).c_str(), rank);
    return kKilnError;
  }
  state->seq_dim = options->seq_dim;
  state->batch_dim = options->batch_dim;
  const int64_t batches = state->dims[static_cast<size_t>(state->batch_dim)];
  if (TensorDims(lengths)[0] != batches) {
    KilnOpaqueContextReportError(context, "%s: seq_lengths %s hold %lld values; input %s has %lld along batch_dim %d",
                                 op, TensorLabel(lengths).c_str(), static_cast<long long>(TensorDims(lengths)[0]),
                                 TensorLabel(input).c_str(), static_cast<long long>(batches), state->batch_dim);
    return kKilnError;
  }
  return ResizeOutput(context, op, output, state->dims);
}

KilnStatus ReverseSequenceInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "REVERSE_SEQUENCE";
  KILN_OPS_GET_STATE(ReverseSequenceState, state, context, node, op);
  const int64_t count = reference::NumElements(state->dims);
  if (count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* lengths_tensor = KilnOpaqueNodeGetInput(context, node, 1);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  std::vector<int64_t> lengths;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "seq_lengths", lengths_tensor, &lengths));
  const int64_t limit = state->dims[static_cast<size_t>(state->seq_dim)];
  if (static_cast<int64_t>(lengths.size()) != state->dims[static_cast<size_t>(state->batch_dim)]) {
    KilnOpaqueContextReportError(context, "%s: seq_lengths %s hold %zu values", op, TensorLabel(lengths_tensor).c_str(),
                                 lengths.size());
    return kKilnError;
  }
  for (size_t b = 0; b < lengths.size(); ++b) {
    // LiteRT reads past the sequence for a length above it and leaves a negative one's slice as it is; Kiln
    // fails both.
    if (lengths[b] < 0 || lengths[b] > limit) {
      KilnOpaqueContextReportError(context,
                                   "%s: seq_lengths %s hold %lld at position %zu; expected a length in [0, %lld] (the "
                                   "size of seq_dim %d)",
                                   op, TensorLabel(lengths_tensor).c_str(), static_cast<long long>(lengths[b]), b,
                                   static_cast<long long>(limit), state->seq_dim);
      return kKilnError;
    }
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, count, state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, count, state->element_size));
  reference::ReverseSequence(state->dims, state->seq_dim, state->batch_dim, lengths.data(), state->element_size,
                             KilnOpaqueTensorData(input), KilnOpaqueTensorData(output));
  return kKilnOk;
}

// ---- SPARSE_TO_DENSE: indices (read at Invoke), output_shape (constant or computed at run time), values,
// default_value -> a tensor of output_shape holding default_value but where an index tuple puts its value.

struct SparseToDenseState {
  Dims dims;
  int64_t tuples = 0, depth = 0;
  bool scalar_value = false;
  size_t element_size = 0;
  bool dynamic = false;    // output_shape computed at run time: Invoke prepares again and sizes the output
  bool at_invoke = false;  // Prepare running from Invoke (PrepareAtInvoke)
};

KilnStatus SparseToDensePrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SPARSE_TO_DENSE";
  KILN_OPS_GET_STATE(SparseToDenseState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 4, 4, 1));
  const KilnOpaqueTensor *indices, *shape, *values, *default_value;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "indices", &indices));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "output_shape", &shape));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "values", &values));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 3, "default_value", &default_value));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  static const std::vector<KilnType> types = {kKilnFloat32, kKilnInt32, kKilnInt64, kKilnInt8, kKilnUInt8};
  const KilnType value_type = KilnOpaqueTensorType(values);
  if (std::find(types.begin(), types.end(), value_type) == types.end()) {
    KilnOpaqueContextReportError(context, "%s: values %s has type %s; expected float32, int32, int64, int8 or uint8",
                                 op, TensorLabel(values).c_str(), KilnTypeGetName(value_type));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckMovedTypes(context, op, values, output, types, &state->element_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "default_value", default_value, KilnOpaqueTensorType(values)));
  for (const auto& [role, tensor] : {std::pair{"indices", indices}, std::pair{"output_shape", shape}}) {
    const KilnType type = KilnOpaqueTensorType(tensor);
    if (type != kKilnInt32 && type != kKilnInt64) {
      KilnOpaqueContextReportError(context, "%s: %s %s has type %s; expected int32 or int64", op, role,
                                   TensorLabel(tensor).c_str(), KilnTypeGetName(type));
      return kKilnError;
    }
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "indices", indices, 0, 2));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "output_shape", shape, 1, 1));
  if (reference::NumElements(TensorDims(default_value)) != 1) {
    KilnOpaqueContextReportError(context, "%s: default_value %s has shape %s; expected a single value", op,
                                 TensorLabel(default_value).c_str(), DimsToString(TensorDims(default_value)).c_str());
    return kKilnError;
  }
  // output_shape computed at run time: a dynamic output (as LiteRT); Invoke runs this again with its values.
  state->dynamic = !IsConstant(shape);
  if (state->dynamic && !state->at_invoke) {
    state->dims.clear();
    return MakeOutputDynamic(context, op, output);
  }
  std::vector<int64_t> shape_values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "output_shape", shape, &shape_values));
  // LiteRT's kernel takes up to 4 output dimensions.
  if (shape_values.empty() || shape_values.size() > 4) {
    KilnOpaqueContextReportError(context, "%s: output_shape %s holds %zu dimensions; expected 1 to 4", op,
                                 TensorLabel(shape).c_str(), shape_values.size());
    return kKilnError;
  }
  for (size_t d = 0; d < shape_values.size(); ++d) {
    if (shape_values[d] < 0) {
      KilnOpaqueContextReportError(context, "%s: output_shape %s holds %lld at %zu; dimensions must be non-negative",
                                   op, TensorLabel(shape).c_str(), static_cast<long long>(shape_values[d]), d);
      return kKilnError;
    }
  }
  state->dims.assign(shape_values.begin(), shape_values.end());
  const Dims index_dims = TensorDims(indices);
  state->tuples = index_dims.empty() ? 1 : index_dims[0];
  state->depth = index_dims.size() == 2 ? index_dims[1] : 1;
  if (state->depth != static_cast<int64_t>(state->dims.size())) {
    KilnOpaqueContextReportError(
        context,
        "%s: indices %s of shape %s give index tuples of %lld entries; output_shape %s has %zu "
        "dimensions",
        op, TensorLabel(indices).c_str(), DimsToString(index_dims).c_str(), static_cast<long long>(state->depth),
        TensorLabel(shape).c_str(), state->dims.size());
    return kKilnError;
  }
  const Dims value_dims = TensorDims(values);
  state->scalar_value = value_dims.empty();
  if (!state->scalar_value && reference::NumElements(value_dims) != state->tuples) {
    KilnOpaqueContextReportError(context,
                                 "%s: values %s of shape %s; expected a scalar or one value for each of the "
                                 "%lld index tuples of indices %s",
                                 op, TensorLabel(values).c_str(), DimsToString(value_dims).c_str(),
                                 static_cast<long long>(state->tuples), TensorLabel(indices).c_str());
    return kKilnError;
  }
  return ResizeOutput(context, op, output, state->dims);
}

KilnStatus SparseToDenseInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SPARSE_TO_DENSE";
  KILN_OPS_GET_STATE(SparseToDenseState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return SparseToDensePrepare(context, node); }));
  }
  const KilnOpaqueTensor* indices = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* values = KilnOpaqueNodeGetInput(context, node, 2);
  const KilnOpaqueTensor* default_value = KilnOpaqueNodeGetInput(context, node, 3);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const int64_t count = reference::NumElements(state->dims);
  std::vector<int64_t> index_values;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "indices", indices, &index_values));
  if (static_cast<int64_t>(index_values.size()) != state->tuples * state->depth) {
    KilnOpaqueContextReportError(context, "%s: indices %s hold %zu values; expected %lld", op,
                                 TensorLabel(indices).c_str(), index_values.size(),
                                 static_cast<long long>(state->tuples * state->depth));
    return kKilnError;
  }
  if (count == 0 && state->tuples == 0) return kKilnOk;
  const size_t es = state->element_size;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "values", values, state->scalar_value ? 1 : state->tuples, es));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "default_value", default_value, 1, es));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, count, es));
  int64_t bad = -1;
  if (!reference::SparseToDense(state->dims, index_values.data(), state->tuples, state->depth,
                                KilnOpaqueTensorData(values), state->scalar_value, KilnOpaqueTensorData(default_value),
                                es, KilnOpaqueTensorData(output), &bad)) {
    std::string tuple;
    for (int64_t k = 0; k < state->depth; ++k) {
      tuple += (k == 0 ? "" : ", ") + std::to_string(index_values[static_cast<size_t>(bad * state->depth + k)]);
    }
    KilnOpaqueContextReportError(
        context, "%s: index tuple %lld of indices %s, [%s], lies outside the output's shape %s", op,
        static_cast<long long>(bad), TensorLabel(indices).c_str(), tuple.c_str(), DimsToString(state->dims).c_str());
    return kKilnError;
  }
  return kKilnOk;
}

// ---- EMBEDDING_LOOKUP_SPARSE: ids [N], indices [N, R], dense_shape [R] (constant or computed at run time),
// weights [N], params [V, ...]
// -> float32 dense_shape[:R-1] + params[1:]: the weighted params rows of each output row, combined.

struct SparseLookupState {
  Dims dense;  // dense_shape[:R-1]
  int64_t lookups = 0, rank = 0, rows = 0, width = 1, vocabulary = 0;
  reference::Combiner combiner = reference::Combiner::kSum;
  bool dynamic = false;    // dense_shape computed at run time: Invoke prepares again and sizes the output
  bool at_invoke = false;  // Prepare running from Invoke (PrepareAtInvoke)
};

KilnStatus SparseLookupPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "EMBEDDING_LOOKUP_SPARSE";
  KILN_OPS_GET_STATE(SparseLookupState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 5, 5, 1));
  const KilnOpaqueTensor *ids, *indices, *shape, *weights, *params;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "ids", &ids));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "indices", &indices));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "dense_shape", &shape));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 3, "weights", &weights));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 4, "params", &params));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "ids", ids, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "indices", indices, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "dense_shape", shape, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "weights", weights));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "params", params));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "output", output));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "ids", ids, 1, 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "indices", indices, 2, 2));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "dense_shape", shape, 1, 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "weights", weights, 1, 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "params", params, 1, 8));
  const Dims index_dims = TensorDims(indices);
  state->lookups = index_dims[0];
  state->rank = index_dims[1];
  if (TensorDims(ids)[0] != state->lookups || TensorDims(weights)[0] != state->lookups ||
      TensorDims(shape)[0] != state->rank || state->rank < 1) {
    KilnOpaqueContextReportError(context,
                                 "%s: ids %s %s, weights %s %s and dense_shape %s %s do not match indices %s %s ([N], "
                                 "[N] and [R] for indices [N, R], R >= 1)",
                                 op, TensorLabel(ids).c_str(), DimsToString(TensorDims(ids)).c_str(),
                                 TensorLabel(weights).c_str(), DimsToString(TensorDims(weights)).c_str(),
                                 TensorLabel(shape).c_str(), DimsToString(TensorDims(shape)).c_str(),
                                 TensorLabel(indices).c_str(), DimsToString(index_dims).c_str());
    return kKilnError;
  }
  // dense_shape computed at run time: a dynamic output (as LiteRT); Invoke runs this again with its values.
  state->dynamic = !IsConstant(shape);
  if (state->dynamic && !state->at_invoke) {
    state->rows = state->width = 0;
    return MakeOutputDynamic(context, op, output);
  }
  std::vector<int32_t> dense;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "dense_shape", shape, false, &dense));
  for (size_t d = 0; d < dense.size(); ++d) {
    if (dense[d] < 0) {
      KilnOpaqueContextReportError(context, "%s: dense_shape %s holds %d at %zu; dimensions must be non-negative", op,
                                   TensorLabel(shape).c_str(), dense[d], d);
      return kKilnError;
    }
  }
  const auto* options = static_cast<const KilnEmbeddingLookupSparseParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const KilnCombinerType combiner = options != nullptr ? options->combiner : kKilnCombinerSum;
  switch (combiner) {
    case kKilnCombinerSum: state->combiner = reference::Combiner::kSum; break;
    case kKilnCombinerMean: state->combiner = reference::Combiner::kMean; break;
    case kKilnCombinerSqrtn: state->combiner = reference::Combiner::kSqrtn; break;
    default:
      KilnOpaqueContextReportError(context, "%s: unknown combiner %d", op, static_cast<int>(combiner));
      return kKilnError;
  }
  state->dense.assign(dense.begin(), dense.end() - 1);
  state->rows = reference::NumElements(state->dense);
  const Dims param_dims = TensorDims(params);
  state->vocabulary = param_dims[0];
  const Dims row(param_dims.begin() + 1, param_dims.end());
  state->width = reference::NumElements(row);
  Dims out_dims = state->dense;
  out_dims.insert(out_dims.end(), row.begin(), row.end());
  return ResizeOutput(context, op, output, out_dims);
}

KilnStatus SparseLookupInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "EMBEDDING_LOOKUP_SPARSE";
  KILN_OPS_GET_STATE(SparseLookupState, state, context, node, op);
  if (state->dynamic) {
    KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return SparseLookupPrepare(context, node); }));
  }
  const KilnOpaqueTensor* ids_tensor = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* indices_tensor = KilnOpaqueNodeGetInput(context, node, 1);
  const int64_t n = state->lookups, out_count = state->rows * state->width;
  std::vector<int64_t> ids, indices;
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "ids", ids_tensor, &ids));
  KILN_OPAQUE_ENSURE_STATUS(ReadIntValues(context, op, "indices", indices_tensor, &indices));
  if (static_cast<int64_t>(ids.size()) != n || static_cast<int64_t>(indices.size()) != n * state->rank) {
    KilnOpaqueContextReportError(context, "%s: ids or indices do not hold the values their shapes give", op);
    return kKilnError;
  }
  std::vector<int32_t> id32(static_cast<size_t>(n));
  std::vector<int64_t> buckets(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= state->vocabulary) {
      KilnOpaqueContextReportError(context,
                                   "%s: id %lld at position %lld of ids %s is outside [0, %lld), the rows of "
                                   "params",
                                   op, static_cast<long long>(ids[i]), static_cast<long long>(i),
                                   TensorLabel(ids_tensor).c_str(), static_cast<long long>(state->vocabulary));
      return kKilnError;
    }
    id32[i] = static_cast<int32_t>(ids[i]);
    // The output row: indices[i][:R-1] row-major in dense_shape[:R-1] (the last index column is not used).
    int64_t bucket = 0;
    for (int64_t k = 0; k + 1 < state->rank; ++k) {
      const int64_t v = indices[i * state->rank + k];
      if (v < 0 || v >= state->dense[static_cast<size_t>(k)]) {
        KilnOpaqueContextReportError(context,
                                     "%s: index %lld at [%lld, %lld] of indices %s is outside [0, %lld) (dense_shape "
                                     "%lld)",
                                     op, static_cast<long long>(v), static_cast<long long>(i),
                                     static_cast<long long>(k), TensorLabel(indices_tensor).c_str(),
                                     static_cast<long long>(state->dense[static_cast<size_t>(k)]),
                                     static_cast<long long>(k));
        return kKilnError;
      }
      bucket = bucket * state->dense[static_cast<size_t>(k)] + v;
    }
    buckets[i] = bucket;
  }
  if (out_count == 0) return kKilnOk;
  const float *weights, *params;
  float* output;
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "weights", KilnOpaqueNodeGetInput(context, node, 3), n, &weights));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "params", KilnOpaqueNodeGetInput(context, node, 4),
                                         state->vocabulary * state->width, &params));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), out_count, &output));
  reference::EmbeddingLookupSparse(state->combiner, id32.data(), buckets.data(), weights, n, params, state->width,
                                   state->rows, output);
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
  // REVERSE_SEQUENCE v1, SPARSE_TO_DENSE v1-v3 (measured the same way).
  Add<ReverseSequenceState>(table, kKilnBuiltinReverseSequence, 1, &ReverseSequencePrepare, &ReverseSequenceInvoke);
  Add<SparseToDenseState>(table, kKilnBuiltinSparseToDense, 3, &SparseToDensePrepare, &SparseToDenseInvoke);
  // EMBEDDING_LOOKUP_SPARSE v1.
  Add<SparseLookupState>(table, kKilnBuiltinEmbeddingLookupSparse, 1, &SparseLookupPrepare, &SparseLookupInvoke);
}

}  // namespace kiln::ops
