// Helpers shared by the builtin op wrappers: validation with clear errors, shapes, constant inputs, and
// per-node state. Everything here goes through the public opaque C API only.
#ifndef KILN_OPS_OP_UTIL_H_
#define KILN_OPS_OP_UTIL_H_

#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api_opaque.h"
#include "ops/reference/common.h"
#include "ops/reference/conv.h"
#include "ops/reference/quantized_kernels.h"

namespace kiln::ops {

using reference::Dims;

// The tensor's name for messages: "'name'" or "(unnamed)".
std::string TensorLabel(const KilnOpaqueTensor* tensor);

Dims TensorDims(const KilnOpaqueTensor* tensor);
std::string DimsToString(const Dims& dims);

bool IsConstant(const KilnOpaqueTensor* tensor);

// State of an operator that keeps nothing between Prepare and Invoke.
struct NoState {};

// Checks the node has between min and max inputs (absent optional inputs count) and exactly `outputs`
// outputs.
KilnStatus CheckArity(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int min_inputs,
                      int max_inputs, int outputs);

// Fetches input `index`, which must be present. `role` names it in messages ("input", "filter").
KilnStatus GetRequiredInput(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int index,
                            const char* role, const KilnOpaqueTensor** tensor);
KilnStatus GetOutput(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op, int index,
                     KilnOpaqueTensor** tensor);
// Input `index` of a node that may have fewer inputs (an optional bias); null where it is absent.
const KilnOpaqueTensor* GetOptionalInput(KilnOpaqueContext* context, const KilnOpaqueNode* node, int index);

// The start of Prepare for an op from a float32 input 0 ("input") to a float32 output 0: checks the arity
// (min_inputs to max_inputs inputs, one output), fetches input 0, then, where `second_role` is given, the
// required input 1 under that name, then output 0, and checks that input and output are float32.
KilnStatus GetFloatInputOutput(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op,
                               int min_inputs, int max_inputs, const KilnOpaqueTensor** input,
                               KilnOpaqueTensor** output, const char* second_role = nullptr,
                               const KilnOpaqueTensor** second = nullptr);

// The node's builtin options, which this op cannot do without.
template <typename Options>
KilnStatus GetRequiredOptions(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op,
                              const Options** options) {
  *options = static_cast<const Options*>(KilnOpaqueNodeGetBuiltinData(node));
  if (*options == nullptr) {
    KilnOpaqueContextReportError(context, "%s: options are missing", op);
    return kKilnError;
  }
  return kKilnOk;
}

// Fails unless `tensor` has type `expected`, naming the op, role and tensor.
KilnStatus CheckType(KilnOpaqueContext* context, const char* op, const char* role,
                     const KilnOpaqueTensor* tensor, KilnType expected);
KilnStatus CheckFloat32(KilnOpaqueContext* context, const char* op, const char* role,
                        const KilnOpaqueTensor* tensor);
KilnStatus CheckRank(KilnOpaqueContext* context, const char* op, const char* role,
                     const KilnOpaqueTensor* tensor, int min_rank, int max_rank);

// Resizes `tensor` to `dims`; fails with a message if a dimension does not fit an int.
KilnStatus ResizeOutput(KilnOpaqueContext* context, const char* op, KilnOpaqueTensor* tensor,
                        const Dims& dims);

// Makes an op's output dynamic (KilnOpaqueTensorSetAllocationTypeToDynamic): its shape depends on values known
// only at Invoke, where the op resizes it. Fails, naming the op and the output, for a constant or variable output.
KilnStatus MakeOutputDynamic(KilnOpaqueContext* context, const char* op, KilnOpaqueTensor* output);

// Reads a constant integer tensor (int32, or int64 where `allow_int64`) whose data is available in Prepare;
// fails with a clear message if the tensor is not constant, has another type, or its data is missing.
KilnStatus ReadConstantInts(KilnOpaqueContext* context, const char* op, const char* role,
                            const KilnOpaqueTensor* tensor, bool allow_int64, std::vector<int32_t>* values);

// As ReadConstantInts, for a tensor constant or computed at run time (its data must be there: in Prepare only for
// a constant, otherwise at Invoke).
KilnStatus ReadInt32Values(KilnOpaqueContext* context, const char* op, const char* role, const KilnOpaqueTensor* tensor,
                           bool allow_int64, std::vector<int32_t>* values);

// Reads an int32 or int64 tensor's values (constant or not; its data must be there) as int64. `role` names it.
KilnStatus ReadIntValues(KilnOpaqueContext* context, const char* op, const char* role,
                         const KilnOpaqueTensor* tensor, std::vector<int64_t>* values);

// For ops that move elements without arithmetic: the input's type must be one of `allowed` and the output's the
// same; an int8, uint8 or int16 output must carry the input's quantization (scales, zero points and quantized
// dimension). Returns the element size.
KilnStatus CheckMovedTypes(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* input,
                           const KilnOpaqueTensor* output, const std::vector<KilnType>& allowed,
                           size_t* element_size);

// The element types the data-moving ops (STRIDED_SLICE, SLICE, GATHER, ...) accept, as LiteRT's kernels do.
const std::vector<KilnType>& MovedTypes();

KilnStatus ToActivation(KilnOpaqueContext* context, const char* op, KilnFusedActivation activation,
                        reference::Activation* out);
KilnStatus ToPadding(KilnOpaqueContext* context, const char* op, KilnPadding padding,
                     reference::Padding* out);

// A window sliding over the height and width of an NHWC input, as the op's options give it.
struct Window2d {
  int64_t filter_height, filter_width;
  int stride_height, stride_width;
  int dilation_height, dilation_width;
};

// The output size and leading padding of `window` along input_dims[1] (rows) and input_dims[2] (cols).
// The pools have no dilation option, so their messages leave it out (`has_dilation` false).
KilnStatus ComputeWindows(KilnOpaqueContext* context, const char* op, KilnPadding padding,
                          const Dims& input_dims, const Window2d& window, bool has_dilation,
                          reference::WindowSize* rows, reference::WindowSize* cols);

// The tensor's quantization: one scale per tensor, or one per channel along `*quantized_dimension`, with a
// zero point each (0 where the tensor has none). False where it has no scales.
bool GetQuantization(const KilnOpaqueTensor* tensor, std::vector<float>* scales,
                     std::vector<int32_t>* zero_points, int* quantized_dimension);

// True where input 0 of the node exists and is int8: the op takes its int8 path.
bool IsInt8Input(KilnOpaqueContext* context, const KilnOpaqueNode* node);

// The per-tensor quantization of an int8 activation tensor: one finite positive scale and a zero point in
// [-128, 127]; a clear error naming the op, role and tensor otherwise (also for a non-int8 tensor).
KilnStatus GetInt8Quantization(KilnOpaqueContext* context, const char* op, const char* role,
                               const KilnOpaqueTensor* tensor, float* scale, int32_t* zero_point);
// The same for a tensor of 8-bit `type` (kKilnInt8 or kKilnUInt8, zero point in [0, 255]).
KilnStatus GetQuantization8(KilnOpaqueContext* context, const char* op, const char* role,
                            const KilnOpaqueTensor* tensor, KilnType type, float* scale, int32_t* zero_point);

// kKilnInt8 or kKilnUInt8 where input 0 of the node exists and has that type (the op's 8-bit quantized
// path), else kKilnNoType.
KilnType Quantized8InputType(KilnOpaqueContext* context, const KilnOpaqueNode* node);
// The range of a quantized type: [-128, 127] for int8, [0, 255] for uint8, [-32768, 32767] for int16.
inline int32_t TypeMin(KilnType type) { return type == kKilnUInt8 ? 0 : type == kKilnInt16 ? -32768 : -128; }
inline int32_t TypeMax(KilnType type) { return type == kKilnUInt8 ? 255 : type == kKilnInt16 ? 32767 : 127; }

// The per-tensor quantization of an int16 activation tensor, which LiteRT's int16 kernels need symmetric: zero
// point 0 (a clear error naming the op, role and tensor otherwise).
KilnStatus GetInt16Quantization(KilnOpaqueContext* context, const char* op, const char* role,
                                const KilnOpaqueTensor* tensor, float* scale);

// The scales of symmetric int8 weights: one (per tensor) or one per entry of dimension `quantized_dimension`
// (`channels` of them), each finite and positive, with zero points 0. The tensor must be int8.
KilnStatus GetInt8WeightScales(KilnOpaqueContext* context, const char* op, const char* role,
                               const KilnOpaqueTensor* tensor, int quantized_dimension, int64_t channels,
                               std::vector<float>* scales);

// An optional int32 bias of `count` elements (null: none).
KilnStatus CheckInt32Bias(KilnOpaqueContext* context, const char* op, const KilnOpaqueTensor* bias, int64_t count);

// The int8 quantization of a weighted op (FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D): the input's and
// output's scales and zero points, the weights' scales along `quantized_dimension` (`channels` output channels),
// an optional int32 bias, the activation clamp and the per-channel multipliers.
KilnStatus PrepareWeightedInt8(KilnOpaqueContext* context, const char* op, const char* weights_role,
                               const KilnOpaqueTensor* input,
                               const KilnOpaqueTensor* weights, const KilnOpaqueTensor* bias,
                               const KilnOpaqueTensor* output, int quantized_dimension, int64_t channels,
                               reference::Activation activation, reference::WeightedQuantParams* params);

// PrepareWeightedInt8 for an 8-bit quantized `type`: int8 as above; uint8 (legacy models) with input, weights
// and output uint8, the weights per tensor with their own zero point (in [0, 255]), the clamp within [0, 255],
// and the multiplier from the scales as `uint8_product` says (LiteRT's uint8 convolutions: kFloat).
KilnStatus PrepareWeighted8(KilnOpaqueContext* context, const char* op, const char* weights_role, KilnType type,
                            const KilnOpaqueTensor* input, const KilnOpaqueTensor* weights,
                            const KilnOpaqueTensor* bias, const KilnOpaqueTensor* output, int quantized_dimension,
                            int64_t channels, reference::Activation activation, reference::WeightedQuantParams* params,
                            reference::ScaleProduct uint8_product = reference::ScaleProduct::kDouble);

// 16x8: int16 input and output (symmetric), int8 weights (symmetric, per tensor or per channel along
// `quantized_dimension`), an optional int64 bias; the clamp within int16's range.
KilnStatus PrepareWeighted16x8(KilnOpaqueContext* context, const char* op, const char* weights_role,
                               const KilnOpaqueTensor* input, const KilnOpaqueTensor* weights,
                               const KilnOpaqueTensor* bias, const KilnOpaqueTensor* output, int quantized_dimension,
                               int64_t channels, reference::Activation activation,
                               reference::WeightedQuantParams* params);

// The node's input 0 is int16 (the op's 16-bit path).
bool IsInt16Input(KilnOpaqueContext* context, const KilnOpaqueNode* node);

// The float weights of a float op, as Prepare leaves them for Invoke.
struct FloatWeights {
  std::vector<float> dequantized;  // the node's copy of int8 weights
  bool is_dequantized = false;
};

// Float weights for a float op: the tensor's own data when it is float32 (checked now where it is
// constant, else read in Invoke), or, for a constant int8 tensor (hybrid models), its values dequantized per
// tensor or per channel along `quantized_dimension` into `weights`, which the node owns.
KilnStatus PrepareFloatWeights(KilnOpaqueContext* context, const char* op, const char* role,
                               const KilnOpaqueTensor* tensor, int quantized_dimension,
                               FloatWeights* weights);

// The data of a tensor as float, or null for an empty tensor.
inline const float* FloatData(const KilnOpaqueTensor* tensor) {
  return static_cast<const float*>(KilnOpaqueTensorData(tensor));
}
inline float* FloatData(KilnOpaqueTensor* tensor) {
  return static_cast<float*>(KilnOpaqueTensorData(tensor));
}

// Invoke-time check that a tensor with `count` elements has data; an op with nothing to compute passes.
KilnStatus CheckData(KilnOpaqueContext* context, const char* op, const char* role,
                     const KilnOpaqueTensor* tensor, int64_t count, size_t element_size);

// Invoke's float32 input 0 and output 0, checked to hold `input_count` and `output_count` elements.
KilnStatus GetFloatInvokeData(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op,
                              int64_t input_count, int64_t output_count, const float** input, float** output);

// Invoke's weights: the copy PrepareFloatWeights dequantized, or the tensor's own data, checked to hold
// `count` elements.
KilnStatus GetFloatWeightData(KilnOpaqueContext* context, const char* op, const char* role,
                              const KilnOpaqueTensor* tensor, int64_t count, const FloatWeights& weights,
                              const float** data);

// Invoke's optional float32 input (a bias): null where the tensor is absent, else its data, checked to hold
// `count` elements.
KilnStatus GetOptionalFloatData(KilnOpaqueContext* context, const char* op, const char* role,
                                const KilnOpaqueTensor* tensor, int64_t count, const float** data);

// Per-node state: created by the operator's init, reached through the node's user data, deleted by free.
template <typename State>
void* InitState(KilnOpaqueContext*, const char*, size_t) {
  return new (std::nothrow) State();
}
template <typename State>
void FreeState(KilnOpaqueContext*, void* state) {
  delete static_cast<State*>(state);
}
template <typename State>
State* GetState(const KilnOpaqueNode* node) {
  return static_cast<State*>(KilnOpaqueNodeGetUserData(node));
}

// A builtin operator with per-node state of type State.
template <typename State>
KilnOperator* MakeOperator(KilnBuiltinOperator code, int version,
                           KilnStatus (*prepare)(KilnOpaqueContext*, KilnOpaqueNode*),
                           KilnStatus (*invoke)(KilnOpaqueContext*, KilnOpaqueNode*)) {
  KilnOperator* op = KilnOperatorCreate(code, nullptr, version);
  if (op == nullptr) return nullptr;
  KilnOperatorSetInit(op, &InitState<State>);
  KilnOperatorSetFree(op, &FreeState<State>);
  KilnOperatorSetPrepare(op, prepare);
  KilnOperatorSetInvoke(op, invoke);
  return op;
}

// Fetches the node's state or fails (init ran out of memory).
#define KILN_OPS_GET_STATE(State, var, context, node, op)                                   \
  State* var = ::kiln::ops::GetState<State>(node);                                          \
  if (var == nullptr) {                                                                     \
    KilnOpaqueContextReportError((context), "%s: node state missing (out of memory?)", op); \
    return kKilnError;                                                                      \
  }

// Runs an op's Prepare again at Invoke, with its state's `at_invoke` set meanwhile: for an op whose input deciding
// the output's shape is computed at run time, Prepare made the output dynamic (MakeOutputDynamic) and returned; run
// from Invoke it reads the values, checks them and sizes the output.
template <typename State, typename PrepareFn>
KilnStatus PrepareAtInvoke(State* state, PrepareFn prepare) {
  state->at_invoke = true;
  const KilnStatus status = prepare();
  state->at_invoke = false;
  return status;
}

// Invoke's data of a tensor of element type T (int8_t, int32_t; const for inputs), checked to hold `count`
// elements; a null tensor (an absent optional input) gives null.
template <typename T, typename Tensor>
KilnStatus GetTypedData(KilnOpaqueContext* context, const char* op, const char* role, Tensor* tensor,
                        int64_t count, T** data) {
  *data = nullptr;
  if (tensor == nullptr) return kKilnOk;
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, role, tensor, count, sizeof(T)));
  *data = static_cast<T*>(KilnOpaqueTensorData(tensor));
  return kKilnOk;
}

// Invoke's input 0 and output 0 of element types In and Out (const for the input), checked to hold
// `input_count` and `output_count` elements; GetFloatInvokeData is this for float32.
template <typename In, typename Out>
KilnStatus GetInvokeData(KilnOpaqueContext* context, const KilnOpaqueNode* node, const char* op,
                         int64_t input_count, int64_t output_count, const In** input, Out** output) {
  const KilnOpaqueTensor* in = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* out = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", in, input_count, sizeof(In)));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", out, output_count, sizeof(Out)));
  *input = static_cast<const In*>(KilnOpaqueTensorData(in));
  *output = static_cast<Out*>(KilnOpaqueTensorData(out));
  return kKilnOk;
}

}  // namespace kiln::ops

#endif  // KILN_OPS_OP_UTIL_H_
