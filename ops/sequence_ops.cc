// The recurrent ops, float32 (and hybrid: constant int8 weights dequantized in Prepare): UNIDIRECTIONAL_SEQUENCE_LSTM
// and LSTM (full kernel: optional CIFG, peephole, projection and layer norm; cell and projection clipping), SVDF
// (also LiteRT's full-integer int8 kernel), RNN and UNIDIRECTIONAL_SEQUENCE_RNN. Their state
// (the LSTM's output and cell state, SVDF's memory, the RNN's hidden state) is a variable tensor among the inputs,
// which Invoke updates in place and the interpreter keeps across Invoke (KilnInterpreterResetVariableTensors).
// The equations are LiteRT's (lstm_eval, svdf, basic_rnn), read for their semantics.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"

namespace kiln::ops {
namespace {

// The activations LiteRT's recurrent kernels apply (ApplyActivationToVector) that a model can state; SIGN_BIT is
// refused.
KilnStatus CheckRecurrentActivation(KilnOpaqueContext* context, const char* op, KilnFusedActivation activation) {
  switch (activation) {
    case kKilnActNone:
    case kKilnActRelu:
    case kKilnActReluN1To1:
    case kKilnActRelu6:
    case kKilnActTanh: return kKilnOk;
    default:
      KilnOpaqueContextReportError(context,
                                   "%s: fused activation %d is not supported (NONE, RELU, RELU_N1_TO_1, "
                                   "RELU6 and TANH are)",
                                   op, static_cast<int>(activation));
      return kKilnError;
  }
}

float Activate(KilnFusedActivation activation, float x) {
  switch (activation) {
    case kKilnActRelu: return std::max(0.0f, x);
    case kKilnActReluN1To1: return std::min(1.0f, std::max(-1.0f, x));
    case kKilnActRelu6: return std::min(6.0f, std::max(0.0f, x));
    case kKilnActTanh: return std::tanh(x);
    default: return x;
  }
}

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Copies n floats where the two ranges may be the same tensor (a crafted model can name one tensor twice).
void CopyFloats(const float* from, int64_t n, float* to) {
  if (n > 0 && from != to) std::memmove(to, from, static_cast<size_t>(n) * sizeof(float));
}

// out[r] += sum_c matrix[r, c] * vector[c] for rows r of a row-major rows x cols matrix.
void MatVecAccumulate(const float* matrix, int64_t rows, int64_t cols, const float* vector, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    float dot = 0.0f;
    const float* row = matrix + r * cols;
    for (int64_t c = 0; c < cols; ++c) dot += row[c] * vector[c];
    out[r] += dot;
  }
}

// Fetches input `index`, float32 with exactly `dims`; an absent optional one gives null. A required one must be
// there.
KilnStatus GetFloatTensor(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int index,
                          const char* role, bool required, const Dims& dims, const KilnOpaqueTensor** tensor) {
  *tensor = GetOptionalInput(context, node, index);
  if (*tensor == nullptr) {
    if (!required) return kKilnOk;
    KilnOpaqueContextReportError(context, "%s: %s (input %d) is missing", op, role, index);
    return kKilnError;
  }
  if (KilnOpaqueTensorType(*tensor) != kKilnFloat32) {
    KilnOpaqueContextReportError(context, "%s: %s %s is %s; float32 is required", op, role,
                                 TensorLabel(*tensor).c_str(), KilnTypeGetName(KilnOpaqueTensorType(*tensor)));
    return kKilnError;
  }
  if (TensorDims(*tensor) != dims) {
    KilnOpaqueContextReportError(context, "%s: %s %s has shape %s; expected %s", op, role, TensorLabel(*tensor).c_str(),
                                 DimsToString(TensorDims(*tensor)).c_str(), DimsToString(dims).c_str());
    return kKilnError;
  }
  return kKilnOk;
}

// Fetches weights input `index` with exactly `dims` (absent and optional: null): float32, or constant int8 (hybrid
// models), which Prepare dequantizes into `weights` (per tensor, or per channel along dimension 0) and Invoke computes
// with in float, as Kiln's other hybrid kernels do (LiteRT instead quantizes the activations at run time).
KilnStatus GetWeightTensor(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int index,
                           const char* role, bool required, const Dims& dims, FloatWeights* weights,
                           const KilnOpaqueTensor** tensor) {
  weights->is_dequantized = false;
  weights->dequantized.clear();
  *tensor = GetOptionalInput(context, node, index);
  if (*tensor == nullptr) {
    if (!required) return kKilnOk;
    KilnOpaqueContextReportError(context, "%s: %s (input %d) is missing", op, role, index);
    return kKilnError;
  }
  const KilnType type = KilnOpaqueTensorType(*tensor);
  if (type != kKilnFloat32 && type != kKilnInt8) {
    KilnOpaqueContextReportError(context, "%s: %s %s is %s; float32 or constant int8 (hybrid) weights are supported",
                                 op, role, TensorLabel(*tensor).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  if (TensorDims(*tensor) != dims) {
    KilnOpaqueContextReportError(context, "%s: %s %s has shape %s; expected %s", op, role, TensorLabel(*tensor).c_str(),
                                 DimsToString(TensorDims(*tensor)).c_str(), DimsToString(dims).c_str());
    return kKilnError;
  }
  return PrepareFloatWeights(context, op, role, *tensor, 0, weights);
}

// Invoke's float values of weights input `index` (null where absent): the dequantized copy of int8 weights, else
// the tensor's data, checked to hold its elements.
KilnStatus WeightData(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int index,
                      const FloatWeights& weights, const float** data) {
  *data = nullptr;
  const KilnOpaqueTensor* t = GetOptionalInput(context, node, index);
  if (t == nullptr) return kKilnOk;
  return GetFloatWeightData(context, op, "weights", t, reference::NumElements(TensorDims(t)), weights, data);
}

// The state input `index`: a float32 variable tensor of `elements` elements (LiteRT checks the count, not the
// shape).
KilnStatus GetStateTensor(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int index,
                          const char* role, int64_t elements, const KilnOpaqueTensor** tensor) {
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, index, role, tensor));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, role, *tensor));
  if (KilnOpaqueTensorGetAllocationType(*tensor) != kKilnArenaRwPersistent) {
    KilnOpaqueContextReportError(context, "%s: %s %s must be a variable tensor (is_variable), which keeps the state",
                                 op, role, TensorLabel(*tensor).c_str());
    return kKilnError;
  }
  const int64_t count = reference::NumElements(TensorDims(*tensor));
  if (count != elements) {
    KilnOpaqueContextReportError(context, "%s: %s %s has %lld elements (shape %s); expected %lld", op, role,
                                 TensorLabel(*tensor).c_str(), static_cast<long long>(count),
                                 DimsToString(TensorDims(*tensor)).c_str(), static_cast<long long>(elements));
    return kKilnError;
  }
  return kKilnOk;
}

// Invoke's data of an optional float32 input (null where absent).
const float* Data(KilnOpaqueContext* context, const KilnOpaqueNode* node, int index) {
  const KilnOpaqueTensor* t = GetOptionalInput(context, node, index);
  return t == nullptr ? nullptr : FloatData(t);
}

// ---------------------------------------------------------------------------------------------------------------
// LSTM

enum LstmInput {
  kInput = 0,
  kInputToInput = 1,  // the four input weights [n_cell, n_input]; input-to-input absent: CIFG
  kInputToForget,
  kInputToCell,
  kInputToOutput,
  kRecurrentToInput,  // the four recurrent weights [n_cell, n_output]
  kRecurrentToForget,
  kRecurrentToCell,
  kRecurrentToOutput,
  kCellToInput,  // peephole [n_cell], optional
  kCellToForget,
  kCellToOutput,
  kInputGateBias,  // [n_cell]; absent with CIFG
  kForgetGateBias,
  kCellGateBias,
  kOutputGateBias,
  kProjectionWeights,  // [n_output, n_cell], optional
  kProjectionBias,     // [n_output], optional
  kOutputState,        // variable [n_batch, n_output]
  kCellState,          // variable [n_batch, n_cell]
  kInputLayerNorm,     // [n_cell] each; all four optional (input absent with CIFG)
  kForgetLayerNorm,
  kCellLayerNorm,
  kOutputLayerNorm,
};

// Where each LstmInput of one direction sits among the node's inputs (-1: not an input of this op), and the input
// the direction reads.
struct LstmLayout {
  int index[kOutputLayerNorm + 1];
  int input = kInput;
  const char* input_role = "input";
  int aux_input = -1;
  int aux_weights[4] = {-1, -1, -1, -1};
};

// UNIDIRECTIONAL_SEQUENCE_LSTM and LSTM: the inputs in LstmInput order, layer norm only with 24 inputs.
LstmLayout UnidirectionalLayout(int num_inputs) {
  LstmLayout layout;
  for (int i = 0; i <= kOutputLayerNorm; ++i) layout.index[i] = i < num_inputs ? i : -1;
  return layout;
}

struct LstmState {
  int64_t n_batch = 0, max_time = 0, n_input = 0, n_cell = 0, n_output = 0, n_aux_input = 0;
  bool use_aux = false;
  FloatWeights aux_weights[4];
  bool time_major = true;
  bool cifg = false, peephole = false, layer_norm = false, projection = false;
  KilnFusedActivation activation = kKilnActTanh;
  float cell_clip = 0.0f, proj_clip = 0.0f;
  std::vector<float> scratch;                    // four gates and the hidden value of one batch row: 5 * n_cell
  FloatWeights weights[kProjectionWeights + 1];  // per input: the dequantized copy of int8 (hybrid) weights
};

// Checks the node as LiteRT's LSTM kernels do and sets the sizes and which optional parts are used. `sequence`:
// UNIDIRECTIONAL_SEQUENCE_LSTM (input rank 3), else LSTM (input rank 2).
KilnStatus LstmPrepareCommon(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, const LstmLayout& L,
                             bool sequence, LstmState* state) {
  KILN_OPAQUE_ENSURE_STATUS(CheckRecurrentActivation(context, op, state->activation));
  if (!(state->cell_clip >= 0.0f) || !(state->proj_clip >= 0.0f)) {
    KilnOpaqueContextReportError(context, "%s: cell_clip %g and proj_clip %g must not be negative", op,
                                 static_cast<double>(state->cell_clip), static_cast<double>(state->proj_clip));
    return kKilnError;
  }
  const KilnOpaqueTensor* input;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, L.input, L.input_role, &input));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, L.input_role, input));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, L.input_role, input, sequence ? 3 : 2, sequence ? 3 : 2));
  const Dims in_dims = TensorDims(input);
  if (sequence) {
    state->max_time = state->time_major ? in_dims[0] : in_dims[1];
    state->n_batch = state->time_major ? in_dims[1] : in_dims[0];
  } else {
    state->max_time = 1;
    state->n_batch = in_dims[0];
  }
  state->n_input = in_dims.back();
  // n_cell from the input-to-output weights, n_output from the recurrent-to-output weights.
  const KilnOpaqueTensor* t;
  KILN_OPAQUE_ENSURE_STATUS(
      GetRequiredInput(context, node, op, L.index[kInputToOutput], "input_to_output_weights", &t));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input_to_output_weights", t, 2, 2));
  state->n_cell = TensorDims(t)[0];
  KILN_OPAQUE_ENSURE_STATUS(
      GetRequiredInput(context, node, op, L.index[kRecurrentToOutput], "recurrent_to_output_weights", &t));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "recurrent_to_output_weights", t, 2, 2));
  state->n_output = TensorDims(t)[1];
  const int64_t n_cell = state->n_cell, n_input = state->n_input, n_output = state->n_output;

  const KilnOpaqueTensor* input_to_input;
  KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.index[kInputToInput], "input_to_input_weights", false,
                                            {n_cell, n_input}, &state->weights[kInputToInput], &input_to_input));
  state->cifg = input_to_input == nullptr;
  const char* input_roles[] = {"input_to_forget_weights", "input_to_cell_weights", "input_to_output_weights"};
  for (int i = 0; i < 3; ++i) {
    KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.index[kInputToForget + i], input_roles[i], true,
                                              {n_cell, n_input}, &state->weights[kInputToForget + i], &t));
  }
  const KilnOpaqueTensor* recurrent_to_input;
  KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.index[kRecurrentToInput], "recurrent_to_input_weights",
                                            false, {n_cell, n_output}, &state->weights[kRecurrentToInput],
                                            &recurrent_to_input));
  if ((recurrent_to_input == nullptr) != state->cifg) {
    KilnOpaqueContextReportError(context,
                                 "%s: input_to_input_weights and recurrent_to_input_weights must both be "
                                 "given or both be absent (CIFG)",
                                 op);
    return kKilnError;
  }
  const char* recurrent_roles[] = {"recurrent_to_forget_weights", "recurrent_to_cell_weights",
                                   "recurrent_to_output_weights"};
  for (int i = 0; i < 3; ++i) {
    KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.index[kRecurrentToForget + i], recurrent_roles[i],
                                              true, {n_cell, n_output}, &state->weights[kRecurrentToForget + i], &t));
  }
  const KilnOpaqueTensor *cell_to_input, *cell_to_forget, *cell_to_output;
  KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.index[kCellToInput], "cell_to_input_weights", false,
                                            {n_cell}, &state->weights[kCellToInput], &cell_to_input));
  KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.index[kCellToForget], "cell_to_forget_weights", false,
                                            {n_cell}, &state->weights[kCellToForget], &cell_to_forget));
  KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.index[kCellToOutput], "cell_to_output_weights", false,
                                            {n_cell}, &state->weights[kCellToOutput], &cell_to_output));
  state->peephole = cell_to_forget != nullptr;
  const bool peephole_ok =
      state->peephole ? cell_to_output != nullptr && (state->cifg ? cell_to_input == nullptr : cell_to_input != nullptr)
                      : cell_to_input == nullptr && cell_to_output == nullptr;
  if (!peephole_ok) {
    KilnOpaqueContextReportError(context,
                                 "%s: the peephole weights (cell_to_input, cell_to_forget, cell_to_output) "
                                 "must be all given (cell_to_input absent with CIFG) or all absent",
                                 op);
    return kKilnError;
  }
  const KilnOpaqueTensor* input_gate_bias;
  KILN_OPAQUE_ENSURE_STATUS(GetFloatTensor(context, node, op, L.index[kInputGateBias], "input_gate_bias", !state->cifg,
                                           {n_cell}, &input_gate_bias));
  if (state->cifg && input_gate_bias != nullptr) {
    KilnOpaqueContextReportError(context, "%s: input_gate_bias %s must be absent with CIFG (no input_to_input_weights)",
                                 op, TensorLabel(input_gate_bias).c_str());
    return kKilnError;
  }
  const char* bias_roles[] = {"forget_gate_bias", "cell_gate_bias", "output_gate_bias"};
  for (int i = 0; i < 3; ++i) {
    KILN_OPAQUE_ENSURE_STATUS(
        GetFloatTensor(context, node, op, L.index[kForgetGateBias + i], bias_roles[i], true, {n_cell}, &t));
  }
  const KilnOpaqueTensor *projection_weights, *projection_bias;
  KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.index[kProjectionWeights], "projection_weights", false,
                                            {n_output, n_cell}, &state->weights[kProjectionWeights],
                                            &projection_weights));
  KILN_OPAQUE_ENSURE_STATUS(GetFloatTensor(context, node, op, L.index[kProjectionBias], "projection_bias", false,
                                           {n_output}, &projection_bias));
  state->projection = projection_weights != nullptr;
  if (!state->projection && projection_bias != nullptr) {
    KilnOpaqueContextReportError(context, "%s: projection_bias %s is given without projection_weights", op,
                                 TensorLabel(projection_bias).c_str());
    return kKilnError;
  }
  if (!state->projection && n_output != n_cell) {
    KilnOpaqueContextReportError(context,
                                 "%s: without projection_weights the output size (%lld) must equal the "
                                 "number of cells (%lld)",
                                 op, static_cast<long long>(n_output), static_cast<long long>(n_cell));
    return kKilnError;
  }
  const KilnOpaqueTensor* state_tensor;
  KILN_OPAQUE_ENSURE_STATUS(GetStateTensor(context, node, op, L.index[kOutputState], "output_state",
                                           state->n_batch * n_output, &state_tensor));
  KILN_OPAQUE_ENSURE_STATUS(
      GetStateTensor(context, node, op, L.index[kCellState], "cell_state", state->n_batch * n_cell, &state_tensor));
  state->layer_norm =
      L.index[kForgetLayerNorm] >= 0 && GetOptionalInput(context, node, L.index[kForgetLayerNorm]) != nullptr;
  if (state->layer_norm) {
    const KilnOpaqueTensor* input_layer_norm;
    KILN_OPAQUE_ENSURE_STATUS(GetFloatTensor(context, node, op, L.index[kInputLayerNorm],
                                             "input_layer_norm_coefficients", !state->cifg, {n_cell},
                                             &input_layer_norm));
    if (state->cifg && input_layer_norm != nullptr) {
      KilnOpaqueContextReportError(context, "%s: input_layer_norm_coefficients must be absent with CIFG", op);
      return kKilnError;
    }
    const char* ln_roles[] = {"forget_layer_norm_coefficients", "cell_layer_norm_coefficients",
                              "output_layer_norm_coefficients"};
    for (int i = 0; i < 3; ++i) {
      KILN_OPAQUE_ENSURE_STATUS(
          GetFloatTensor(context, node, op, L.index[kForgetLayerNorm + i], ln_roles[i], true, {n_cell}, &t));
    }
  } else {
    for (int i = kInputLayerNorm; i <= kOutputLayerNorm; ++i) {
      if (L.index[i] >= 0 && GetOptionalInput(context, node, L.index[i]) != nullptr) {
        KilnOpaqueContextReportError(context,
                                     "%s: layer norm coefficients (input %d) are given without "
                                     "forget_layer_norm_coefficients",
                                     op, L.index[i]);
        return kKilnError;
      }
    }
  }
  // The auxiliary input (BIDIRECTIONAL_SEQUENCE_LSTM stacked with cross links): weights [n_cell, n_aux_input] per
  // gate (the input gate's absent with CIFG), all four given or none.
  state->use_aux = false;
  const KilnOpaqueTensor* aux = L.aux_input >= 0 ? GetOptionalInput(context, node, L.aux_input) : nullptr;
  if (aux != nullptr && L.aux_weights[1] >= 0 && GetOptionalInput(context, node, L.aux_weights[1]) != nullptr) {
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "aux_input", aux));
    KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "aux_input", aux, 3, 3));
    const Dims aux_dims = TensorDims(aux);
    if (aux_dims[0] != in_dims[0] || aux_dims[1] != in_dims[1]) {
      KilnOpaqueContextReportError(context,
                                   "%s: aux_input %s has shape %s; its first two dimensions must be the "
                                   "input's %s",
                                   op, TensorLabel(aux).c_str(), DimsToString(aux_dims).c_str(),
                                   DimsToString(in_dims).c_str());
      return kKilnError;
    }
    state->n_aux_input = aux_dims[2];
    const char* aux_roles[] = {"aux_input_to_input_weights", "aux_input_to_forget_weights", "aux_input_to_cell_weights",
                               "aux_input_to_output_weights"};
    for (int g = state->cifg ? 1 : 0; g < 4; ++g) {
      KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.aux_weights[g], aux_roles[g], true,
                                                {n_cell, state->n_aux_input}, &state->aux_weights[g], &t));
    }
    state->use_aux = true;
  }
  state->scratch.assign(static_cast<size_t>(5 * n_cell), 0.0f);
  return kKilnOk;
}

// Layer normalisation of one gate: (x - mean) / sqrt(variance + 1e-8) over the cells.
void MeanStddevNormalize(float* values, int64_t n) {
  if (n == 0) return;
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += values[i];
  const float mean = sum / static_cast<float>(n);
  float sum_sq = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum_sq += (values[i] - mean) * (values[i] - mean);
  const float inv = 1.0f / std::sqrt(sum_sq / static_cast<float>(n) + 1e-8f);
  for (int64_t i = 0; i < n; ++i) values[i] = (values[i] - mean) * inv;
}

// One direction of the LSTM over the whole sequence (backward: from the last step to the first), writing each step's
// output at out_all + row * out_stride + out_offset.
KilnStatus LstmInvokeCommon(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, const LstmLayout& L,
                            LstmState* s, float* out_all, int64_t out_stride, int64_t out_offset, bool forward) {
  const int64_t n_cell = s->n_cell, n_input = s->n_input, n_output = s->n_output;
  const int64_t steps = s->n_batch * s->max_time;
  if (steps == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, L.input);
  const KilnOpaqueTensor* output_state = KilnOpaqueNodeGetInput(context, node, L.index[kOutputState]);
  const KilnOpaqueTensor* cell_state = KilnOpaqueNodeGetInput(context, node, L.index[kCellState]);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, L.input_role, input, steps * n_input, sizeof(float)));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output_state", output_state, s->n_batch * n_output, sizeof(float)));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "cell_state", cell_state, s->n_batch * n_cell, sizeof(float)));
  const float* aux_all = nullptr;
  const float* aw[4] = {};
  if (s->use_aux) {
    const KilnOpaqueTensor* aux = KilnOpaqueNodeGetInput(context, node, L.aux_input);
    KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "aux_input", aux, steps * s->n_aux_input, sizeof(float)));
    aux_all = FloatData(aux);
    for (int g = s->cifg ? 1 : 0; g < 4; ++g) {
      KILN_OPAQUE_ENSURE_STATUS(WeightData(context, node, op, L.aux_weights[g], s->aux_weights[g], &aw[g]));
    }
  }
  const float* data[kProjectionBias + 1] = {};
  for (int i = kInputToInput; i <= kProjectionBias; ++i) {
    if (i <= kProjectionWeights && i != kInputGateBias && i != kForgetGateBias && i != kCellGateBias &&
        i != kOutputGateBias) {
      KILN_OPAQUE_ENSURE_STATUS(WeightData(context, node, op, L.index[i], s->weights[i], &data[i]));
      continue;
    }
    const KilnOpaqueTensor* t = GetOptionalInput(context, node, L.index[i]);
    if (t != nullptr) {
      KILN_OPAQUE_ENSURE_STATUS(
          CheckData(context, op, "bias", t, reference::NumElements(TensorDims(t)), sizeof(float)));
      data[i] = FloatData(t);
    }
  }
  for (int i = kInputLayerNorm; s->layer_norm && i <= kOutputLayerNorm; ++i) {
    const KilnOpaqueTensor* t = GetOptionalInput(context, node, L.index[i]);
    if (t != nullptr) KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "layer norm", t, n_cell, sizeof(float)));
  }
  const float* x_all = FloatData(input);
  float* h_all = static_cast<float*>(KilnOpaqueTensorData(output_state));
  float* c_all = static_cast<float*>(KilnOpaqueTensorData(cell_state));
  // Gate g (0 input, 1 forget, 2 cell, 3 output): weights, recurrent weights, peephole, bias, layer norm.
  const float* w[4];
  const float* r[4];
  const float* b[4];
  const float* ln[4];
  for (int g = 0; g < 4; ++g) {
    w[g] = data[kInputToInput + g];
    r[g] = data[kRecurrentToInput + g];
    b[g] = data[kInputGateBias + g];
    ln[g] = s->layer_norm ? Data(context, node, L.index[kInputLayerNorm + g]) : nullptr;
  }
  const float* peep_i = data[kCellToInput];
  const float* peep_f = data[kCellToForget];
  const float* peep_o = data[kCellToOutput];
  const float* proj_w = data[kProjectionWeights];
  const float* proj_b = data[kProjectionBias];
  float* gate[4];
  for (int g = 0; g < 4; ++g) gate[g] = s->scratch.data() + g * n_cell;
  float* hidden = s->scratch.data() + 4 * n_cell;

  for (int64_t step = 0; step < s->max_time; ++step) {
    const int64_t t = forward ? step : s->max_time - 1 - step;
    for (int64_t batch = 0; batch < s->n_batch; ++batch) {
      const int64_t row = s->time_major ? t * s->n_batch + batch : batch * s->max_time + t;
      const float* x = x_all + row * n_input;
      float* out = out_all + row * out_stride + out_offset;
      float* h = h_all + batch * n_output;
      float* c = c_all + batch * n_cell;
      for (int g = s->cifg ? 1 : 0; g < 4; ++g) {
        for (int64_t k = 0; k < n_cell; ++k) gate[g][k] = s->layer_norm ? 0.0f : b[g][k];
        MatVecAccumulate(w[g], n_cell, n_input, x, gate[g]);
        if (aux_all != nullptr)
          MatVecAccumulate(aw[g], n_cell, s->n_aux_input, aux_all + row * s->n_aux_input, gate[g]);
        MatVecAccumulate(r[g], n_cell, n_output, h, gate[g]);
      }
      // The input and forget gates see the previous cell state through the peephole.
      auto finish_gate = [&](int g, const float* peephole, const float* cell, bool sigmoid) {
        if (peephole != nullptr) {
          for (int64_t k = 0; k < n_cell; ++k) gate[g][k] += peephole[k] * cell[k];
        }
        if (s->layer_norm) {
          MeanStddevNormalize(gate[g], n_cell);
          for (int64_t k = 0; k < n_cell; ++k) gate[g][k] = gate[g][k] * ln[g][k] + b[g][k];
        }
        for (int64_t k = 0; k < n_cell; ++k) {
          gate[g][k] = sigmoid ? Sigmoid(gate[g][k]) : Activate(s->activation, gate[g][k]);
        }
      };
      if (!s->cifg) finish_gate(0, peep_i, c, true);
      finish_gate(1, peep_f, c, true);
      finish_gate(2, nullptr, c, false);
      for (int64_t k = 0; k < n_cell; ++k) {
        const float input_gate = s->cifg ? 1.0f - gate[1][k] : gate[0][k];
        float value = gate[1][k] * c[k] + input_gate * gate[2][k];
        if (s->cell_clip > 0.0f) value = std::min(s->cell_clip, std::max(-s->cell_clip, value));
        c[k] = value;
      }
      finish_gate(3, peep_o, c, true);  // the output gate's peephole sees the new cell state
      for (int64_t k = 0; k < n_cell; ++k) hidden[k] = gate[3][k] * Activate(s->activation, c[k]);
      if (s->projection) {
        for (int64_t k = 0; k < n_output; ++k) out[k] = proj_b != nullptr ? proj_b[k] : 0.0f;
        MatVecAccumulate(proj_w, n_output, n_cell, hidden, out);
        if (s->proj_clip > 0.0f) {
          for (int64_t k = 0; k < n_output; ++k) out[k] = std::min(s->proj_clip, std::max(-s->proj_clip, out[k]));
        }
      } else {
        CopyFloats(hidden, n_output, out);
      }
      CopyFloats(out, n_output, h);
    }
  }
  return kKilnOk;
}

// UNIDIRECTIONAL_SEQUENCE_LSTM (sequence) and LSTM: 20 or 24 inputs, one output [..., n_output].
KilnStatus LstmPrepareUnidirectional(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, bool sequence,
                                     LstmState* state) {
  const int num_inputs = KilnOpaqueNodeNumberOfInputs(node);
  if (num_inputs != 20 && num_inputs != 24) {
    KilnOpaqueContextReportError(context, "%s: expects 20 or 24 inputs, got %d", op, num_inputs);
    return kKilnError;
  }
  if (KilnOpaqueNodeNumberOfOutputs(node) != 1) {
    KilnOpaqueContextReportError(context, "%s: expects 1 output, got %d", op, KilnOpaqueNodeNumberOfOutputs(node));
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(LstmPrepareCommon(context, node, op, UnidirectionalLayout(num_inputs), sequence, state));
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "output", output));
  Dims out_dims = TensorDims(KilnOpaqueNodeGetInput(context, node, kInput));
  out_dims.back() = state->n_output;
  return ResizeOutput(context, op, output, out_dims);
}

KilnStatus LstmInvokeUnidirectional(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op,
                                    LstmState* state) {
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const int64_t steps = state->n_batch * state->max_time;
  if (steps == 0) return kKilnOk;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, steps * state->n_output, sizeof(float)));
  return LstmInvokeCommon(context, node, op, UnidirectionalLayout(KilnOpaqueNodeNumberOfInputs(node)), state,
                          FloatData(output), state->n_output, 0, true);
}

KilnStatus SequenceLstmPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "UNIDIRECTIONAL_SEQUENCE_LSTM";
  KILN_OPS_GET_STATE(LstmState, state, context, node, op);
  const KilnUnidirectionalSequenceLSTMParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  if (options->diagonal_recurrent_tensors) {
    KilnOpaqueContextReportError(context, "%s: diagonal_recurrent_tensors is not supported", op);
    return kKilnError;
  }
  state->activation = options->activation;
  state->cell_clip = options->cell_clip;
  state->proj_clip = options->proj_clip;
  state->time_major = options->time_major;
  return LstmPrepareUnidirectional(context, node, op, true, state);
}

KilnStatus SequenceLstmInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "UNIDIRECTIONAL_SEQUENCE_LSTM";
  KILN_OPS_GET_STATE(LstmState, state, context, node, op);
  return LstmInvokeUnidirectional(context, node, op, state);
}

// LSTM's basic kernel (kernel_type BASIC): inputs input [batch, in], prev_activation [batch, out], weights
// [4 * out, in + out], bias [4 * out], prev_state [batch, out]; outputs activation and state [batch, out], concat_temp
// [batch, in + out] (input and prev_activation side by side) and activ_temp [batch, 4 * out] (weights . concat +
// bias); the gates in activ_temp's order input, new input (tanh), forget, output. As LiteRT, the new activation and
// state are then copied back into prev_activation and prev_state, which must not be constants.
KilnStatus BasicLstmPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, LstmState* state) {
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 5, 5, 4));
  const KilnOpaqueTensor *input, *prev_activation, *weights, *bias, *prev_state;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "input", input));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 2, 2));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "prev_activation", &prev_activation));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "prev_activation", prev_activation, 2, 2));
  state->n_batch = TensorDims(input)[0];
  state->n_input = TensorDims(input)[1];
  state->n_output = TensorDims(prev_activation)[1];
  state->max_time = 1;
  const int64_t batch = state->n_batch, in = state->n_input, out = state->n_output;
  KILN_OPAQUE_ENSURE_STATUS(
      GetFloatTensor(context, node, op, 1, "prev_activation", true, {batch, out}, &prev_activation));
  KILN_OPAQUE_ENSURE_STATUS(GetFloatTensor(context, node, op, 2, "weights", true, {4 * out, in + out}, &weights));
  KILN_OPAQUE_ENSURE_STATUS(GetFloatTensor(context, node, op, 3, "bias", true, {4 * out}, &bias));
  KILN_OPAQUE_ENSURE_STATUS(GetFloatTensor(context, node, op, 4, "prev_state", true, {batch, out}, &prev_state));
  for (const auto* t : {prev_activation, prev_state}) {
    if (IsConstant(t)) {
      KilnOpaqueContextReportError(context,
                                   "%s: %s %s is a constant; the basic kernel writes the new value back into it", op,
                                   t == prev_state ? "prev_state" : "prev_activation", TensorLabel(t).c_str());
      return kKilnError;
    }
  }
  const Dims sizes[4] = {{batch, out}, {batch, out}, {batch, in + out}, {batch, 4 * out}};
  for (int i = 0; i < 4; ++i) {
    KilnOpaqueTensor* output;
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, i, &output));
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "output", output));
    KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, output, sizes[i]));
  }
  return kKilnOk;
}

KilnStatus BasicLstmInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, const LstmState* s) {
  const int64_t batch = s->n_batch, in = s->n_input, out = s->n_output, depth = in + out;
  const float *x, *w, *b;
  float *prev_h, *prev_c, *h, *c, *concat, *activ;
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "input", KilnOpaqueNodeGetInput(context, node, 0), batch * in, &x));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "prev_activation", KilnOpaqueNodeGetInput(context, node, 1), batch * out, &prev_h));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "weights", KilnOpaqueNodeGetInput(context, node, 2), 4 * out * depth, &w));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "bias", KilnOpaqueNodeGetInput(context, node, 3), 4 * out, &b));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "prev_state", KilnOpaqueNodeGetInput(context, node, 4), batch * out, &prev_c));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "activation", KilnOpaqueNodeGetOutput(context, node, 0), batch * out, &h));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "state", KilnOpaqueNodeGetOutput(context, node, 1), batch * out, &c));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "concat_temp", KilnOpaqueNodeGetOutput(context, node, 2), batch * depth, &concat));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "activ_temp", KilnOpaqueNodeGetOutput(context, node, 3), batch * 4 * out, &activ));
  if (batch == 0) return kKilnOk;
  for (int64_t row = 0; row < batch; ++row) {
    float* cat = concat + row * depth;
    CopyFloats(x + row * in, in, cat);
    CopyFloats(prev_h + row * out, out, cat + in);
    float* a = activ + row * 4 * out;
    CopyFloats(b, 4 * out, a);
    MatVecAccumulate(w, 4 * out, depth, cat, a);
    for (int64_t k = 0; k < out; ++k) {
      const float input_gate = Sigmoid(a[k]);
      const float new_input = std::tanh(a[out + k]);
      const float forget_gate = Sigmoid(a[2 * out + k]);
      const float output_gate = Sigmoid(a[3 * out + k]);
      const float state = input_gate * new_input + forget_gate * prev_c[row * out + k];
      c[row * out + k] = state;
      h[row * out + k] = output_gate * std::tanh(state);
    }
  }
  CopyFloats(h, batch * out, prev_h);
  CopyFloats(c, batch * out, prev_c);
  return kKilnOk;
}

KilnStatus LstmPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "LSTM";
  KILN_OPS_GET_STATE(LstmState, state, context, node, op);
  const KilnLSTMParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  if (options->kernel_type == kKilnLSTMBasicKernel) return BasicLstmPrepare(context, node, op, state);
  state->activation = options->activation;
  state->cell_clip = options->cell_clip;
  state->proj_clip = options->proj_clip;
  state->time_major = true;
  return LstmPrepareUnidirectional(context, node, op, false, state);
}

KilnStatus LstmInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "LSTM";
  KILN_OPS_GET_STATE(LstmState, state, context, node, op);
  const auto* options = static_cast<const KilnLSTMParams*>(KilnOpaqueNodeGetBuiltinData(node));
  if (options != nullptr && options->kernel_type == kKilnLSTMBasicKernel) {
    return BasicLstmInvoke(context, node, op, state);
  }
  return LstmInvokeUnidirectional(context, node, op, state);
}

// ---------------------------------------------------------------------------------------------------------------
// SVDF: input [batch, input_size], weights_feature [num_filters, input_size], weights_time [num_filters,
// memory_size], optional bias [num_units], state [batch, memory_size * num_filters]; output [batch, num_units],
// num_units = num_filters / rank.

struct SvdfState {
  int64_t batch = 0, input_size = 0, num_filters = 0, memory_size = 0, num_units = 0;
  std::vector<float> scratch;  // [num_filters] of one batch row
  FloatWeights feature, time;  // dequantized int8 (hybrid) weights_feature and weights_time
  // The integer SVDF (int8 input and output, int8 weights_feature, int16 weights_time and state, int32 bias).
  bool integer = false;
  int32_t input_zero_point = 0, output_zero_point = 0;
  reference::QuantizedMultiplier feature_to_state, state_to_output;
  std::vector<int32_t> int_scratch;  // [num_filters] of one batch row
};

// A tensor of `type` with exactly `dims` (absent and optional: null), for the integer SVDF.
KilnStatus GetIntTensor(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int index,
                        const char* role, bool required, const Dims& dims, KilnType type,
                        const KilnOpaqueTensor** tensor) {
  *tensor = GetOptionalInput(context, node, index);
  if (*tensor == nullptr) {
    if (!required) return kKilnOk;
    KilnOpaqueContextReportError(context, "%s: %s (input %d) is missing", op, role, index);
    return kKilnError;
  }
  if (KilnOpaqueTensorType(*tensor) != type) {
    KilnOpaqueContextReportError(context, "%s: %s %s is %s; the integer %s takes %s", op, role,
                                 TensorLabel(*tensor).c_str(), KilnTypeGetName(KilnOpaqueTensorType(*tensor)), op,
                                 KilnTypeGetName(type));
    return kKilnError;
  }
  if (TensorDims(*tensor) != dims) {
    KilnOpaqueContextReportError(context, "%s: %s %s has shape %s; expected %s", op, role, TensorLabel(*tensor).c_str(),
                                 DimsToString(TensorDims(*tensor)).c_str(), DimsToString(dims).c_str());
    return kKilnError;
  }
  return kKilnOk;
}

// The integer SVDF's Prepare after the sizes are known (LiteRT's full-integer path): per-tensor scales, the state
// and weights_time symmetric int16, the activation RELU (required by LiteRT, which then applies no clamp beyond
// int8's range), and the two rescaling multipliers.
KilnStatus SvdfPrepareInteger(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op,
                              const KilnSVDFParams* options, SvdfState* state) {
  if (options->activation != kKilnActRelu) {
    KilnOpaqueContextReportError(context, "%s: the integer SVDF takes only the RELU activation (as LiteRT), got %d", op,
                                 static_cast<int>(options->activation));
    return kKilnError;
  }
  const KilnOpaqueTensor *input, *weights_feature, *weights_time, *bias, *state_tensor;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetIntTensor(context, node, op, 1, "weights_feature", true,
                                         {state->num_filters, state->input_size}, kKilnInt8, &weights_feature));
  KILN_OPAQUE_ENSURE_STATUS(GetIntTensor(context, node, op, 2, "weights_time", true,
                                         {state->num_filters, state->memory_size}, kKilnInt16, &weights_time));
  KILN_OPAQUE_ENSURE_STATUS(GetIntTensor(context, node, op, 3, "bias", false, {state->num_units}, kKilnInt32, &bias));
  KILN_OPAQUE_ENSURE_STATUS(GetIntTensor(context, node, op, 4, "state", true,
                                         {state->batch, state->memory_size * state->num_filters}, kKilnInt16,
                                         &state_tensor));
  if (KilnOpaqueTensorGetAllocationType(state_tensor) != kKilnArenaRwPersistent) {
    KilnOpaqueContextReportError(context, "%s: state %s must be a variable tensor (is_variable), which keeps the state",
                                 op, TensorLabel(state_tensor).c_str());
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  float input_scale, feature_scale, time_scale, state_scale, output_scale;
  int32_t feature_zero_point;
  KILN_OPAQUE_ENSURE_STATUS(GetInt8Quantization(context, op, "input", input, &input_scale, &state->input_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(
      GetInt8Quantization(context, op, "output", output, &output_scale, &state->output_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(
      GetInt8Quantization(context, op, "weights_feature", weights_feature, &feature_scale, &feature_zero_point));
  KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "weights_time", weights_time, &time_scale));
  KILN_OPAQUE_ENSURE_STATUS(GetInt16Quantization(context, op, "state", state_tensor, &state_scale));
  state->feature_to_state =
      reference::QuantizeMultiplier(static_cast<double>(input_scale) * feature_scale / state_scale);
  state->state_to_output = reference::QuantizeMultiplier(static_cast<double>(state_scale) * time_scale / output_scale);
  state->int_scratch.assign(static_cast<size_t>(state->num_filters), 0);
  state->integer = true;
  return ResizeOutput(context, op, output, {state->batch, state->num_units});
}

// The integer SVDF step (LiteRT's EvalIntegerSVDF): the int16 state shifts left by one element; each filter's
// newest slot gets sum w * (x - x_zp) rescaled and clamped to int16; the int32 dot products with weights_time are
// summed over the rank, the bias added, rescaled to the output and clamped to int8. int32 sums wrap as LiteRT's
// two's-complement arithmetic does.
KilnStatus SvdfInvokeInteger(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, SvdfState* s) {
  const int64_t memory = s->memory_size, filters = s->num_filters, units = s->num_units, in = s->input_size;
  const int64_t state_count = s->batch * memory * filters;
  const int8_t *x, *wf;
  const int16_t* wt;
  const int32_t* b;
  int16_t* st;
  int8_t* out;
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "input", KilnOpaqueNodeGetInput(context, node, 0), s->batch * in, &x));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "weights_feature", KilnOpaqueNodeGetInput(context, node, 1), filters * in, &wf));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "weights_time", KilnOpaqueNodeGetInput(context, node, 2), filters * memory, &wt));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "bias", GetOptionalInput(context, node, 3), units, &b));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "state", KilnOpaqueNodeGetInput(context, node, 4), state_count, &st));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0), s->batch * units, &out));
  if (s->batch == 0 || units == 0) return kKilnOk;
  if (state_count > 1) std::memmove(st, st + 1, static_cast<size_t>(state_count - 1) * sizeof(int16_t));
  const int64_t rank = filters / units;
  using reference::WrapAdd;
  for (int64_t batch = 0; batch < s->batch; ++batch) {
    int16_t* state_row = st + batch * memory * filters;
    const int8_t* x_row = x + batch * in;
    for (int64_t f = 0; f < filters; ++f) {
      int32_t dot = 0;
      for (int64_t i = 0; i < in; ++i) {
        dot = WrapAdd(dot, int32_t{wf[f * in + i]} * (int32_t{x_row[i]} - s->input_zero_point));
      }
      const int32_t scaled =
          reference::MultiplyByQuantizedMultiplier(dot, s->feature_to_state, reference::Rounding::kDouble);
      if (memory > 0) state_row[f * memory + memory - 1] = static_cast<int16_t>(std::clamp(scaled, -32768, 32767));
    }
    for (int64_t f = 0; f < filters; ++f) {
      int32_t dot = 0;
      for (int64_t m = 0; m < memory; ++m) {
        dot = WrapAdd(dot, int32_t{state_row[f * memory + m]} * int32_t{wt[f * memory + m]});
      }
      s->int_scratch[static_cast<size_t>(f)] = dot;
    }
    for (int64_t u = 0; u < units; ++u) {
      int32_t sum = 0;
      for (int64_t k = 0; k < rank; ++k) sum = WrapAdd(sum, s->int_scratch[static_cast<size_t>(u * rank + k)]);
      if (b != nullptr) sum = WrapAdd(sum, b[u]);
      const int32_t scaled =
          reference::MultiplyByQuantizedMultiplier(sum, s->state_to_output, reference::Rounding::kDouble);
      const int64_t value = int64_t{scaled} + s->output_zero_point;
      out[batch * units + u] = static_cast<int8_t>(std::clamp<int64_t>(value, -128, 127));
    }
  }
  return kKilnOk;
}

KilnStatus SvdfPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SVDF";
  KILN_OPS_GET_STATE(SvdfState, state, context, node, op);
  const KilnSVDFParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 5, 5, 1));
  KILN_OPAQUE_ENSURE_STATUS(CheckRecurrentActivation(context, op, options->activation));
  const KilnOpaqueTensor *input, *weights_feature, *weights_time, *bias, *state_tensor;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  if (KilnOpaqueTensorType(input) != kKilnInt8) KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "input", input));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 2, 2));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "weights_feature", &weights_feature));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "weights_feature", weights_feature, 2, 2));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 2, "weights_time", &weights_time));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "weights_time", weights_time, 2, 2));
  state->batch = TensorDims(input)[0];
  state->input_size = TensorDims(input)[1];
  state->num_filters = TensorDims(weights_feature)[0];
  state->memory_size = TensorDims(weights_time)[1];
  if (options->rank < 1 || state->num_filters % options->rank != 0) {
    KilnOpaqueContextReportError(context,
                                 "%s: rank %d must be at least 1 and divide the %lld filters of "
                                 "weights_feature %s",
                                 op, options->rank, static_cast<long long>(state->num_filters),
                                 TensorLabel(weights_feature).c_str());
    return kKilnError;
  }
  state->num_units = state->num_filters / options->rank;
  // The state holds batch * memory * filters values: refuse sizes whose count does not fit (declared shapes of
  // non-constant tensors are not otherwise bounded before allocation).
  const int64_t per_row = state->memory_size * state->num_filters;  // two int32 dimensions: fits
  if (state->batch > 0 && per_row > std::numeric_limits<int64_t>::max() / state->batch) {
    KilnOpaqueContextReportError(context, "%s: the state of %lld x %lld values is too large", op,
                                 static_cast<long long>(state->batch), static_cast<long long>(per_row));
    return kKilnError;
  }
  state->integer = false;
  if (KilnOpaqueTensorType(input) == kKilnInt8) return SvdfPrepareInteger(context, node, op, options, state);
  KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, 1, "weights_feature", true,
                                            {state->num_filters, state->input_size}, &state->feature,
                                            &weights_feature));
  KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, 2, "weights_time", true,
                                            {state->num_filters, state->memory_size}, &state->time, &weights_time));
  KILN_OPAQUE_ENSURE_STATUS(GetFloatTensor(context, node, op, 3, "bias", false, {state->num_units}, &bias));
  KILN_OPAQUE_ENSURE_STATUS(GetStateTensor(context, node, op, 4, "state",
                                           state->batch * state->memory_size * state->num_filters, &state_tensor));
  if (TensorDims(state_tensor) != Dims{state->batch, state->memory_size * state->num_filters}) {
    KilnOpaqueContextReportError(context, "%s: state %s has shape %s; expected %s", op,
                                 TensorLabel(state_tensor).c_str(), DimsToString(TensorDims(state_tensor)).c_str(),
                                 DimsToString({state->batch, state->memory_size * state->num_filters}).c_str());
    return kKilnError;
  }
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "output", output));
  state->scratch.assign(static_cast<size_t>(state->num_filters), 0.0f);
  return ResizeOutput(context, op, output, {state->batch, state->num_units});
}

KilnStatus SvdfInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "SVDF";
  KILN_OPS_GET_STATE(SvdfState, s, context, node, op);
  if (s->integer) return SvdfInvokeInteger(context, node, op, s);
  const auto* options = static_cast<const KilnSVDFParams*>(KilnOpaqueNodeGetBuiltinData(node));
  const int64_t memory = s->memory_size, filters = s->num_filters, units = s->num_units;
  const int64_t state_count = s->batch * memory * filters;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* bias = GetOptionalInput(context, node, 3);
  const KilnOpaqueTensor* state_tensor = KilnOpaqueNodeGetInput(context, node, 4);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const float *x, *wf, *wt, *b;
  float *st, *out;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input", input, s->batch * s->input_size, &x));
  KILN_OPAQUE_ENSURE_STATUS(WeightData(context, node, op, 1, s->feature, &wf));
  KILN_OPAQUE_ENSURE_STATUS(WeightData(context, node, op, 2, s->time, &wt));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "bias", bias, units, &b));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "state", state_tensor, state_count, &st));
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", output, s->batch * units, &out));
  if (s->batch == 0 || units == 0) return kKilnOk;
  // The memory of each filter moves one step back (the whole buffer shifts left by one element; each filter's
  // last slot is then overwritten by this step's feature value).
  if (state_count > 1) std::memmove(st, st + 1, static_cast<size_t>(state_count - 1) * sizeof(float));
  const int64_t rank = filters / units;
  for (int64_t batch = 0; batch < s->batch; ++batch) {
    float* state_row = st + batch * memory * filters;
    const float* x_row = x + batch * s->input_size;
    for (int64_t f = 0; f < filters; ++f) {
      float dot = 0.0f;
      for (int64_t i = 0; i < s->input_size; ++i) dot += wf[f * s->input_size + i] * x_row[i];
      if (memory > 0) state_row[f * memory + memory - 1] = dot;
    }
    for (int64_t f = 0; f < filters; ++f) {
      float dot = 0.0f;
      for (int64_t m = 0; m < memory; ++m) dot += state_row[f * memory + m] * wt[f * memory + m];
      s->scratch[static_cast<size_t>(f)] = dot;
    }
    float* out_row = out + batch * units;
    for (int64_t u = 0; u < units; ++u) {
      float sum = b != nullptr ? b[u] : 0.0f;
      for (int64_t k = 0; k < rank; ++k) sum += s->scratch[static_cast<size_t>(u * rank + k)];
      out_row[u] = Activate(options->activation, sum);
    }
  }
  return kKilnOk;
}

// ---------------------------------------------------------------------------------------------------------------
// RNN: input [batch, input_size], weights [num_units, input_size], recurrent_weights [num_units, num_units], bias
// [num_units], hidden_state [batch, num_units]; output [batch, num_units]. UNIDIRECTIONAL_SEQUENCE_RNN: input
// [batch, time, input_size] ([time, batch, input_size] time-major), output [..., num_units].

struct RnnState {
  int64_t batch = 0, max_time = 1, input_size = 0, units = 0, aux_size = 0;
  bool time_major = true, use_aux = false;
  KilnFusedActivation activation = kKilnActNone;
  FloatWeights weights, recurrent, aux_weights;  // dequantized int8 (hybrid) weights
};

// Where one direction's tensors sit among the node's inputs.
struct RnnLayout {
  int input = 0, weights = 1, recurrent = 2, bias = 3, hidden = 4;
  const char* input_role = "input";
  int aux_input = -1, aux_weights = -1;
};

// Checks one direction's tensors as LiteRT's RNN kernels do and sets the sizes. `sequence`: a rank-3 input.
KilnStatus RnnPrepareDirection(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, const RnnLayout& L,
                               bool sequence, RnnState* state) {
  KILN_OPAQUE_ENSURE_STATUS(CheckRecurrentActivation(context, op, state->activation));
  const KilnOpaqueTensor *input, *weights, *t;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, L.input, L.input_role, &input));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, L.input_role, input));
  const int rank = sequence ? 3 : 2;
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, L.input_role, input, rank, rank));
  const Dims in_dims = TensorDims(input);
  if (sequence) {
    state->max_time = state->time_major ? in_dims[0] : in_dims[1];
    state->batch = state->time_major ? in_dims[1] : in_dims[0];
  } else {
    state->max_time = 1;
    state->batch = in_dims[0];
  }
  state->input_size = in_dims.back();
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, L.weights, "weights", &weights));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "weights", weights, 2, 2));
  state->units = TensorDims(weights)[0];
  KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.weights, "weights", true,
                                            {state->units, state->input_size}, &state->weights, &t));
  KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.recurrent, "recurrent_weights", true,
                                            {state->units, state->units}, &state->recurrent, &t));
  KILN_OPAQUE_ENSURE_STATUS(GetFloatTensor(context, node, op, L.bias, "bias", true, {state->units}, &t));
  KILN_OPAQUE_ENSURE_STATUS(
      GetStateTensor(context, node, op, L.hidden, "hidden_state", state->batch * state->units, &t));
  if (TensorDims(t) != Dims{state->batch, state->units}) {
    KilnOpaqueContextReportError(context, "%s: hidden_state %s has shape %s; expected %s", op, TensorLabel(t).c_str(),
                                 DimsToString(TensorDims(t)).c_str(),
                                 DimsToString({state->batch, state->units}).c_str());
    return kKilnError;
  }
  state->use_aux = false;
  const KilnOpaqueTensor* aux = L.aux_input >= 0 ? GetOptionalInput(context, node, L.aux_input) : nullptr;
  if (aux != nullptr && L.aux_weights >= 0 && GetOptionalInput(context, node, L.aux_weights) != nullptr) {
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "aux_input", aux));
    KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "aux_input", aux, 3, 3));
    const Dims aux_dims = TensorDims(aux);
    if (aux_dims[0] != in_dims[0] || aux_dims[1] != in_dims[1]) {
      KilnOpaqueContextReportError(context,
                                   "%s: aux_input %s has shape %s; its first two dimensions must be the "
                                   "input's %s",
                                   op, TensorLabel(aux).c_str(), DimsToString(aux_dims).c_str(),
                                   DimsToString(in_dims).c_str());
      return kKilnError;
    }
    state->aux_size = aux_dims[2];
    KILN_OPAQUE_ENSURE_STATUS(GetWeightTensor(context, node, op, L.aux_weights, "aux_weights", true,
                                              {state->units, state->aux_size}, &state->aux_weights, &t));
    state->use_aux = true;
  }
  return kKilnOk;
}

// RNN and UNIDIRECTIONAL_SEQUENCE_RNN: five inputs, one output [..., units].
KilnStatus RnnPrepareCommon(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, bool sequence,
                            RnnState* state) {
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 5, 5, 1));
  KILN_OPAQUE_ENSURE_STATUS(RnnPrepareDirection(context, node, op, RnnLayout{}, sequence, state));
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "output", output));
  Dims out_dims = TensorDims(KilnOpaqueNodeGetInput(context, node, 0));
  out_dims.back() = state->units;
  return ResizeOutput(context, op, output, out_dims);
}

// One direction over the sequence (backward: last step first), each step's output at
// out + row * out_stride + out_offset.
KilnStatus RnnInvokeDirection(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, const RnnLayout& L,
                              const RnnState* s, float* out, int64_t out_stride, int64_t out_offset, bool forward) {
  const int64_t steps = s->batch * s->max_time, units = s->units, in_size = s->input_size;
  const float *x, *w, *r, *b, *aux = nullptr, *aw = nullptr;
  float* h;
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, L.input_role, KilnOpaqueNodeGetInput(context, node, L.input), steps * in_size, &x));
  KILN_OPAQUE_ENSURE_STATUS(WeightData(context, node, op, L.weights, s->weights, &w));
  KILN_OPAQUE_ENSURE_STATUS(WeightData(context, node, op, L.recurrent, s->recurrent, &r));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "bias", KilnOpaqueNodeGetInput(context, node, L.bias), units, &b));
  KILN_OPAQUE_ENSURE_STATUS(
      GetTypedData(context, op, "hidden_state", KilnOpaqueNodeGetInput(context, node, L.hidden), s->batch * units, &h));
  if (s->use_aux) {
    KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "aux_input", KilnOpaqueNodeGetInput(context, node, L.aux_input),
                                           steps * s->aux_size, &aux));
    KILN_OPAQUE_ENSURE_STATUS(WeightData(context, node, op, L.aux_weights, s->aux_weights, &aw));
  }
  if (steps == 0 || units == 0) return kKilnOk;
  for (int64_t step = 0; step < s->max_time; ++step) {
    const int64_t t = forward ? step : s->max_time - 1 - step;
    for (int64_t batch = 0; batch < s->batch; ++batch) {
      const int64_t row = s->time_major ? t * s->batch + batch : batch * s->max_time + t;
      float* y = out + row * out_stride + out_offset;
      float* hidden = h + batch * units;
      for (int64_t u = 0; u < units; ++u) y[u] = b[u];
      MatVecAccumulate(w, units, in_size, x + row * in_size, y);
      if (aux != nullptr) MatVecAccumulate(aw, units, s->aux_size, aux + row * s->aux_size, y);
      MatVecAccumulate(r, units, units, hidden, y);
      for (int64_t u = 0; u < units; ++u) y[u] = Activate(s->activation, y[u]);
      CopyFloats(y, units, hidden);
    }
  }
  return kKilnOk;
}

KilnStatus RnnInvokeCommon(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, const RnnState* s) {
  float* out;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0),
                                         s->batch * s->max_time * s->units, &out));
  return RnnInvokeDirection(context, node, op, RnnLayout{}, s, out, s->units, 0, true);
}

KilnStatus RnnPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RNN";
  KILN_OPS_GET_STATE(RnnState, state, context, node, op);
  const KilnRNNParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  state->activation = options->activation;
  state->time_major = true;
  return RnnPrepareCommon(context, node, op, false, state);
}

KilnStatus RnnInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RNN";
  KILN_OPS_GET_STATE(RnnState, state, context, node, op);
  return RnnInvokeCommon(context, node, op, state);
}

KilnStatus SequenceRnnPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "UNIDIRECTIONAL_SEQUENCE_RNN";
  KILN_OPS_GET_STATE(RnnState, state, context, node, op);
  const KilnSequenceRNNParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  state->activation = options->activation;
  state->time_major = options->time_major;
  return RnnPrepareCommon(context, node, op, true, state);
}

KilnStatus SequenceRnnInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "UNIDIRECTIONAL_SEQUENCE_RNN";
  KILN_OPS_GET_STATE(RnnState, state, context, node, op);
  return RnnInvokeCommon(context, node, op, state);
}

// ---------------------------------------------------------------------------------------------------------------
// BIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_RNN: a forward and a backward direction over the same
// sequence, each with its own weights and state; one merged output [..., fw + bw] (merge_outputs) or two. An aux_input
// without aux weights is the backward direction's input (LiteRT's non-stacking mode); with them, both directions
// add aux weights . aux_input to their gates.

struct BidiLstmState {
  LstmState fw, bw;
  LstmLayout fw_layout, bw_layout;
  bool merge = false;
};

KilnStatus BidiOutputs(KilnOpaqueContext* context, KilnOpaqueNode* node, const char* op, bool merge, const Dims& dims,
                       int64_t fw_size, int64_t bw_size) {
  if (KilnOpaqueNodeNumberOfOutputs(node) != (merge ? 1 : 2)) {
    KilnOpaqueContextReportError(context, "%s: expects %d output%s (merge_outputs %s), got %d", op, merge ? 1 : 2,
                                 merge ? "" : "s", merge ? "true" : "false", KilnOpaqueNodeNumberOfOutputs(node));
    return kKilnError;
  }
  for (int i = 0; i < (merge ? 1 : 2); ++i) {
    KilnOpaqueTensor* output;
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, i, &output));
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "output", output));
    Dims out_dims = dims;
    out_dims.back() = merge ? fw_size + bw_size : (i == 0 ? fw_size : bw_size);
    KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, op, output, out_dims));
  }
  return kKilnOk;
}

KilnStatus CheckSameSequence(KilnOpaqueContext* context, const char* op, int64_t fw_batch, int64_t fw_time,
                             int64_t bw_batch, int64_t bw_time) {
  if (fw_batch == bw_batch && fw_time == bw_time) return kKilnOk;
  KilnOpaqueContextReportError(context,
                               "%s: the backward input (aux_input) has batch %lld and %lld steps; the "
                               "input has %lld and %lld",
                               op, static_cast<long long>(bw_batch), static_cast<long long>(bw_time),
                               static_cast<long long>(fw_batch), static_cast<long long>(fw_time));
  return kKilnError;
}

KilnStatus BidiLstmPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "BIDIRECTIONAL_SEQUENCE_LSTM";
  KILN_OPS_GET_STATE(BidiLstmState, state, context, node, op);
  const KilnBidirectionalSequenceLSTMParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  if (KilnOpaqueNodeNumberOfInputs(node) != 48) {
    KilnOpaqueContextReportError(context, "%s: expects 48 inputs, got %d", op, KilnOpaqueNodeNumberOfInputs(node));
    return kKilnError;
  }
  // Inputs: 0 input; forward 1-17 and backward 18-34 in LstmInput order (no layer norm); states 35-38 (forward
  // output and cell, backward output and cell); 39 aux_input; aux weights 40-43 (forward) and 44-47 (backward).
  LstmLayout fw, bw;
  for (int i = 0; i <= kOutputLayerNorm; ++i) fw.index[i] = bw.index[i] = -1;
  for (int i = kInputToInput; i <= kProjectionBias; ++i) {
    fw.index[i] = i;
    bw.index[i] = i + 17;
  }
  fw.index[kOutputState] = 35;
  fw.index[kCellState] = 36;
  bw.index[kOutputState] = 37;
  bw.index[kCellState] = 38;
  const bool has_aux = GetOptionalInput(context, node, 39) != nullptr;
  const bool aux_weights = GetOptionalInput(context, node, 41) != nullptr;  // fw aux_input_to_forget
  fw.aux_input = 39;
  for (int g = 0; g < 4; ++g) fw.aux_weights[g] = 40 + g;
  if (has_aux && !aux_weights) {
    bw.input = 39;
    bw.input_role = "aux_input";
  } else {
    bw.aux_input = 39;
    for (int g = 0; g < 4; ++g) bw.aux_weights[g] = 44 + g;
  }
  for (LstmState* d : {&state->fw, &state->bw}) {
    d->activation = options->activation;
    d->cell_clip = options->cell_clip;
    d->proj_clip = options->proj_clip;
    d->time_major = options->time_major;
  }
  KILN_OPAQUE_ENSURE_STATUS(
      LstmPrepareCommon(context, node, "BIDIRECTIONAL_SEQUENCE_LSTM (forward)", fw, true, &state->fw));
  KILN_OPAQUE_ENSURE_STATUS(
      LstmPrepareCommon(context, node, "BIDIRECTIONAL_SEQUENCE_LSTM (backward)", bw, true, &state->bw));
  KILN_OPAQUE_ENSURE_STATUS(
      CheckSameSequence(context, op, state->fw.n_batch, state->fw.max_time, state->bw.n_batch, state->bw.max_time));
  state->fw_layout = fw;
  state->bw_layout = bw;
  state->merge = options->merge_outputs;
  return BidiOutputs(context, node, op, state->merge, TensorDims(KilnOpaqueNodeGetInput(context, node, 0)),
                     state->fw.n_output, state->bw.n_output);
}

KilnStatus BidiLstmInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "BIDIRECTIONAL_SEQUENCE_LSTM";
  KILN_OPS_GET_STATE(BidiLstmState, s, context, node, op);
  const int64_t steps = s->fw.n_batch * s->fw.max_time;
  if (steps == 0) return kKilnOk;
  const int64_t fw_size = s->fw.n_output, bw_size = s->bw.n_output;
  float *fw_out, *bw_out;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0),
                                         steps * (s->merge ? fw_size + bw_size : fw_size), &fw_out));
  if (s->merge) {
    bw_out = fw_out;
  } else {
    KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "backward output", KilnOpaqueNodeGetOutput(context, node, 1),
                                           steps * bw_size, &bw_out));
  }
  const int64_t stride = s->merge ? fw_size + bw_size : fw_size;
  KILN_OPAQUE_ENSURE_STATUS(LstmInvokeCommon(context, node, op, s->fw_layout, &s->fw, fw_out, stride, 0, true));
  return LstmInvokeCommon(context, node, op, s->bw_layout, &s->bw, bw_out, s->merge ? stride : bw_size,
                          s->merge ? fw_size : 0, false);
}

struct BidiRnnState {
  RnnState fw, bw;
  RnnLayout fw_layout, bw_layout;
  bool merge = false;
};

KilnStatus BidiRnnPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "BIDIRECTIONAL_SEQUENCE_RNN";
  KILN_OPS_GET_STATE(BidiRnnState, state, context, node, op);
  const KilnBidirectionalSequenceRNNParams* options;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredOptions(context, node, op, &options));
  if (KilnOpaqueNodeNumberOfInputs(node) != 12) {
    KilnOpaqueContextReportError(context, "%s: expects 12 inputs, got %d", op, KilnOpaqueNodeNumberOfInputs(node));
    return kKilnError;
  }
  // Inputs: 0 input; forward weights, recurrent weights, bias, hidden state 1-4; backward 5-8; 9 aux_input;
  // 10 forward and 11 backward aux weights.
  RnnLayout fw, bw{0, 5, 6, 7, 8};
  const bool has_aux = GetOptionalInput(context, node, 9) != nullptr;
  const bool aux_weights = GetOptionalInput(context, node, 10) != nullptr;
  fw.aux_input = 9;
  fw.aux_weights = 10;
  if (has_aux && !aux_weights) {
    // LiteRT's float kernel reads the aux_input as the backward input only time-major; batch-major its backward
    // direction reads the input (and the aux_input goes unused), which Kiln follows.
    if (options->time_major) {
      bw.input = 9;
      bw.input_role = "aux_input";
    }
  } else {
    bw.aux_input = 9;
    bw.aux_weights = 11;
  }
  for (RnnState* d : {&state->fw, &state->bw}) {
    d->activation = options->activation;
    d->time_major = options->time_major;
  }
  KILN_OPAQUE_ENSURE_STATUS(
      RnnPrepareDirection(context, node, "BIDIRECTIONAL_SEQUENCE_RNN (forward)", fw, true, &state->fw));
  KILN_OPAQUE_ENSURE_STATUS(
      RnnPrepareDirection(context, node, "BIDIRECTIONAL_SEQUENCE_RNN (backward)", bw, true, &state->bw));
  const KilnOpaqueTensor* fw_weights = GetOptionalInput(context, node, 1);
  const bool hybrid = fw_weights != nullptr && KilnOpaqueTensorType(fw_weights) == kKilnInt8;
  // (After both directions' checks, which give the input and a stacked aux_input rank 3.)
  if (has_aux && aux_weights && (options->time_major || hybrid)) {
    const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
    const KilnOpaqueTensor* aux = KilnOpaqueNodeGetInput(context, node, 9);
    if (input != nullptr && TensorDims(aux).back() != TensorDims(input).back()) {
      KilnOpaqueContextReportError(context,
                                   "%s: a time-major (or hybrid) aux_input %s must have the input's last "
                                   "dimension (%s vs %s): LiteRT's kernel steps through it with the input's row size",
                                   op, TensorLabel(aux).c_str(), DimsToString(TensorDims(aux)).c_str(),
                                   DimsToString(TensorDims(input)).c_str());
      return kKilnError;
    }
  }
  KILN_OPAQUE_ENSURE_STATUS(
      CheckSameSequence(context, op, state->fw.batch, state->fw.max_time, state->bw.batch, state->bw.max_time));
  state->fw_layout = fw;
  state->bw_layout = bw;
  state->merge = options->merge_outputs;
  return BidiOutputs(context, node, op, state->merge, TensorDims(KilnOpaqueNodeGetInput(context, node, 0)),
                     state->fw.units, state->bw.units);
}

KilnStatus BidiRnnInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "BIDIRECTIONAL_SEQUENCE_RNN";
  KILN_OPS_GET_STATE(BidiRnnState, s, context, node, op);
  const int64_t steps = s->fw.batch * s->fw.max_time;
  const int64_t fw_size = s->fw.units, bw_size = s->bw.units;
  float *fw_out, *bw_out;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", KilnOpaqueNodeGetOutput(context, node, 0),
                                         steps * (s->merge ? fw_size + bw_size : fw_size), &fw_out));
  if (s->merge) {
    bw_out = fw_out;
  } else {
    KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "backward output", KilnOpaqueNodeGetOutput(context, node, 1),
                                           steps * bw_size, &bw_out));
  }
  const int64_t stride = s->merge ? fw_size + bw_size : fw_size;
  KILN_OPAQUE_ENSURE_STATUS(RnnInvokeDirection(context, node, op, s->fw_layout, &s->fw, fw_out, stride, 0, true));
  return RnnInvokeDirection(context, node, op, s->bw_layout, &s->bw, bw_out, s->merge ? stride : bw_size,
                            s->merge ? fw_size : 0, false);
}

}  // namespace

void AddSequenceOps(std::vector<BuiltinOp>* table) {
  // LiteRT's register.cc: LSTM 1-4, UNIDIRECTIONAL_SEQUENCE_LSTM 1-4, SVDF 1-4, RNN 1-3,
  // UNIDIRECTIONAL_SEQUENCE_RNN 1-3, BIDIRECTIONAL_SEQUENCE_LSTM 1-3, BIDIRECTIONAL_SEQUENCE_RNN 1-3 (the later
  // versions add the hybrid and integer kernels; the integer LSTM is refused in Prepare).
  table->push_back(
      {kKilnBuiltinUnidirectionalSequenceLstm, 1, 4,
       MakeOperator<LstmState>(kKilnBuiltinUnidirectionalSequenceLstm, 4, &SequenceLstmPrepare, &SequenceLstmInvoke)});
  table->push_back({kKilnBuiltinLstm, 1, 4, MakeOperator<LstmState>(kKilnBuiltinLstm, 4, &LstmPrepare, &LstmInvoke)});
  table->push_back({kKilnBuiltinSvdf, 1, 4, MakeOperator<SvdfState>(kKilnBuiltinSvdf, 4, &SvdfPrepare, &SvdfInvoke)});
  table->push_back({kKilnBuiltinRnn, 1, 3, MakeOperator<RnnState>(kKilnBuiltinRnn, 3, &RnnPrepare, &RnnInvoke)});
  table->push_back(
      {kKilnBuiltinUnidirectionalSequenceRnn, 1, 3,
       MakeOperator<RnnState>(kKilnBuiltinUnidirectionalSequenceRnn, 3, &SequenceRnnPrepare, &SequenceRnnInvoke)});
  table->push_back(
      {kKilnBuiltinBidirectionalSequenceLstm, 1, 3,
       MakeOperator<BidiLstmState>(kKilnBuiltinBidirectionalSequenceLstm, 3, &BidiLstmPrepare, &BidiLstmInvoke)});
  table->push_back(
      {kKilnBuiltinBidirectionalSequenceRnn, 1, 3,
       MakeOperator<BidiRnnState>(kKilnBuiltinBidirectionalSequenceRnn, 3, &BidiRnnPrepare, &BidiRnnInvoke)});
}

}  // namespace kiln::ops
