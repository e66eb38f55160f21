// The XNNPACK host engine (xnnpack_engine.h): which prepared builtin nodes map onto XNNPACK's subgraph API,
// and how a run of them is built (one xnn_subgraph -> one xnn_runtime), bound to the interpreter's tensors
// and invoked. TFLite's conventions carry over unchanged: filters are OHWI ([1, H, W, C*M] for depthwise),
// fully connected weights [out, in], SAME padding as TensorFlow computes it
// (XNN_FLAG_TENSORFLOW_SAME_PADDING).
#include "ops/xnnpack/xnnpack_engine.h"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/builtin_ops.h"
#include "ops/reference/quantized.h"
#include "ops/simd/cpu.h"
#include "ops/simd/float_conv.h"
#include "ops/simd/float_depthwise.h"
#include "ops/simd/float_gemm.h"
#include "ops/simd/float_gemv.h"
#include "ops/simd/int8_gemm.h"
#include "runtime/arena_planner.h"
#include "runtime/interpreter.h"

namespace kiln {
namespace ops {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

const KilnTensor* TensorAt(const Interpreter& interpreter, int index) { return interpreter.tensor(index); }

bool IsConstant(const KilnTensor* t) {
  return t != nullptr && t->allocation == kKilnMmapRo && t->data != nullptr;
}

// Constant int8 weights with per-tensor or per-channel scales (a hybrid model: float activations): the engine
// dequantizes them once into float32 and packs those.
bool IsQuantizedWeights(const KilnTensor* t) {
  if (!IsConstant(t) || t->type != kKilnInt8 || t->scales.empty()) return false;
  if (t->scales.size() == 1) return true;
  const int axis = t->quantized_dimension;
  return axis >= 0 && axis < static_cast<int>(t->dims.size()) &&
         t->scales.size() == static_cast<size_t>(t->dims[axis]) &&
         (t->zero_points.empty() || t->zero_points.size() == t->scales.size());
}

// real = scale[c] * (q - zero_point[c]), c the element's index along the quantized dimension.
std::vector<float> DequantizeWeights(const KilnTensor* t) {
  const int8_t* q = static_cast<const int8_t*>(t->data);
  const size_t count = t->bytes;
  size_t inner = 1;  // elements per step along the quantized dimension
  for (size_t d = static_cast<size_t>(t->quantized_dimension) + 1; d < t->dims.size(); ++d)
    inner *= t->dims[d];
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t c = t->scales.size() == 1 ? 0 : (i / inner) % t->scales.size();
    const int zero = t->zero_points.empty() ? 0 : t->zero_points[c];
    out[i] = t->scales[c] * static_cast<float>(q[i] - zero);
  }
  return out;
}

// Constant weights Kiln's own float kernels take: float32, or the int8 of a hybrid model (IsQuantizedWeights).
bool FloatOrHybridWeights(const KilnTensor* t) {
  return (IsConstant(t) && t->type == kKilnFloat32) || IsQuantizedWeights(t);
}

// The float32 values of FloatOrHybridWeights `t` for packing: its own data, or its int8 values dequantized into
// *dequantized (which the caller keeps until it has packed them).
const float* FloatWeights(const KilnTensor* t, std::vector<float>* dequantized) {
  if (t->type == kKilnFloat32) return static_cast<const float*>(t->data);
  *dequantized = DequantizeWeights(t);
  return dequantized->data();
}

// An int8 tensor with one finite positive scale and one zero point in range: what XNNPACK's qint8 values hold.
bool PerTensorInt8(const KilnTensor* t) {
  if (t == nullptr || t->type != kKilnInt8 || t->scales.size() != 1 || t->zero_points.size() > 1) return false;
  const float scale = t->scales[0];
  const int zero = t->zero_points.empty() ? 0 : t->zero_points[0];
  return std::isfinite(scale) && scale > 0.0f && zero >= -128 && zero <= 127;
}

float ScaleOf(const KilnTensor* t) { return t->scales[0]; }
int ZeroPointOf(const KilnTensor* t) { return t->zero_points.empty() ? 0 : t->zero_points[0]; }

bool SameQuantization(const KilnTensor* a, const KilnTensor* b) {
  return ScaleOf(a) == ScaleOf(b) && ZeroPointOf(a) == ZeroPointOf(b);
}

// Constant int8 filter weights XNNPACK's int8 convolutions take: symmetric (every zero point 0), one scale or
// one per output channel along `channel_dim`.
bool Int8Filter(const KilnTensor* t, int channel_dim, std::string* reason) {
  if (!IsConstant(t) || t->type != kKilnInt8) {
    *reason = "filter is not a constant int8 tensor";
    return false;
  }
  const size_t channels = static_cast<size_t>(t->dims[channel_dim]);
  if (t->scales.size() != 1 && (t->scales.size() != channels || t->quantized_dimension != channel_dim)) {
    *reason = "filter has " + std::to_string(t->scales.size()) + " scales along dimension " +
              std::to_string(t->quantized_dimension) + " (XNNPACK takes one, or one per output channel)";
    return false;
  }
  for (float scale : t->scales) {
    if (!(std::isfinite(scale) && scale > 0.0f)) {
      *reason = "filter has a scale that is not finite and positive";
      return false;
    }
  }
  for (int32_t zero : t->zero_points) {
    if (zero != 0) {
      *reason = "filter zero point " + std::to_string(zero) + " (XNNPACK's int8 filters are symmetric)";
      return false;
    }
  }
  return true;
}

// The int32 bias of an int8 convolution or fully connected node: absent, or a constant [channels] vector.
bool Int32Bias(const Interpreter& interpreter, const Node& node, int channels, std::string* reason) {
  if (node.inputs.size() < 3 || node.inputs[2] < 0) return true;
  const KilnTensor* bias = interpreter.tensor(node.inputs[2]);
  if (!IsConstant(bias) || bias->type != kKilnInt32 || bias->dims.size() != 1 || bias->dims[0] != channels) {
    *reason = "bias is not a constant int32 [" + std::to_string(channels) + "] tensor";
    return false;
  }
  return true;
}

std::string Shape(const KilnTensor* t) {
  std::string s = "[";
  for (size_t i = 0; i < t->dims.size(); ++i) s += (i ? "," : "") + std::to_string(t->dims[i]);
  return s + "]";
}

// The clamp a fused activation becomes; false for those XNNPACK cannot fuse.
bool ActivationRange(KilnFusedActivation activation, float* lo, float* hi) {
  switch (activation) {
    case kKilnActNone:
      *lo = -kInf, *hi = kInf;
      return true;
    case kKilnActRelu:
      *lo = 0.0f, *hi = kInf;
      return true;
    case kKilnActReluN1To1:
      *lo = -1.0f, *hi = 1.0f;
      return true;
    case kKilnActRelu6:
      *lo = 0.0f, *hi = 6.0f;
      return true;
    default:
      return false;
  }
}

// The clamp of a node's output, in real units: the fused activation's, and for an int8 output also the range
// the type can hold (XNNPACK quantizes the bounds; infinities would not survive that). False when the clamp
// leaves XNNPACK no range: for int8, bounds less than two steps apart, which may round to one value.
bool OutputRange(const KilnTensor* output, KilnFusedActivation activation, float* lo, float* hi) {
  if (!ActivationRange(activation, lo, hi)) return false;
  if (output->type != kKilnInt8) return *lo < *hi;
  *lo = std::max(*lo, static_cast<float>(-128 - ZeroPointOf(output)) * ScaleOf(output));
  *hi = std::min(*hi, static_cast<float>(127 - ZeroPointOf(output)) * ScaleOf(output));
  return *hi - *lo >= 2.0f * ScaleOf(output);
}

template <typename Params>
const Params* ParamsOf(const Node& node) {
  return static_cast<const Params*>(node.desc->builtin_data.get());
}

// Reads a constant int32 tensor of `count` values.
bool ConstantInts(const KilnTensor* t, std::vector<int>* out) {
  if (!IsConstant(t) || t->type != kKilnInt32) return false;
  out->resize(t->bytes / sizeof(int32_t));
  std::memcpy(out->data(), t->data, out->size() * sizeof(int32_t));
  return true;
}

// Whether a node computes in int8 (its first input is int8) rather than in float32.
bool IsInt8Node(const Interpreter& interpreter, const Node& node) {
  return !node.inputs.empty() && node.inputs[0] >= 0 && TensorAt(interpreter, node.inputs[0])->type == kKilnInt8;
}

// The checks every mapped node shares: float32 tensors (or, for an int8 node, per-tensor quantized int8
// tensors) of static shape, within XNNPACK's rank limit. Inputs listed in `constant_inputs` must be constants
// of the model; their types are the op's own checks.
bool CheckTensors(const Interpreter& interpreter, const Node& node, size_t data_inputs,
                  std::vector<size_t> constant_inputs, std::string* reason) {
  const bool int8 = IsInt8Node(interpreter, node);
  for (size_t i = 0; i < node.inputs.size() && i < data_inputs; ++i) {
    const int index = node.inputs[i];
    if (index < 0) continue;
    const KilnTensor* t = TensorAt(interpreter, index);
    const bool weights =
        std::find(constant_inputs.begin(), constant_inputs.end(), i) != constant_inputs.end();
    if (weights && (int8 || IsQuantizedWeights(t))) continue;  // int8: the op checks; hybrid: dequantized
    if (int8 && !PerTensorInt8(t)) {
      *reason = "input " + std::to_string(i) + " is " + KilnTypeGetName(t->type) +
                ", not int8 with one finite positive scale and one zero point";
      return false;
    }
    if (!int8 && t->type != kKilnFloat32) {
      *reason = "input " + std::to_string(i) + " is " + KilnTypeGetName(t->type) + ", not float32";
      return false;
    }
    if (t->allocation == kKilnDynamic || t->allocation == kKilnArenaRwPersistent) {
      *reason = "input " + std::to_string(i) + " is a dynamic or variable tensor";
      return false;
    }
    if (t->dims.size() > XNN_MAX_TENSOR_DIMS) {
      *reason = "input " + std::to_string(i) + " has rank " + std::to_string(t->dims.size());
      return false;
    }
  }
  for (size_t i : constant_inputs) {
    if (i < node.inputs.size() && node.inputs[i] >= 0 && !IsConstant(TensorAt(interpreter, node.inputs[i]))) {
      *reason = "input " + std::to_string(i) + " is computed, not a constant of the model";
      return false;
    }
  }
  for (int index : node.outputs) {
    // A node that writes one of its own inputs or one of the model's (crafted models; the reference kernels
    // compute them in place) has no form in an XNNPACK subgraph, whose values each have one producer before their
    // readers and whose external inputs are only read.
    if (std::find(node.inputs.begin(), node.inputs.end(), index) != node.inputs.end()) {
      *reason = "output tensor " + std::to_string(index) + " is also one of the node's inputs";
      return false;
    }
    const std::vector<int>& model_inputs = interpreter.inputs();
    if (std::find(model_inputs.begin(), model_inputs.end(), index) != model_inputs.end()) {
      *reason = "output tensor " + std::to_string(index) + " is also an input of the model";
      return false;
    }
    const KilnTensor* t = TensorAt(interpreter, index);
    if ((int8 ? !PerTensorInt8(t) : t->type != kKilnFloat32) || t->allocation != kKilnArenaRw) {
      *reason = "output is " + std::string(KilnTypeGetName(t->type)) +
                (t->allocation != kKilnArenaRw ? " of dynamic shape"
                 : int8                        ? " (not int8 with one scale and one zero point)"
                                               : "");
      return false;
    }
    if (t->dims.size() > XNN_MAX_TENSOR_DIMS) {
      *reason = "output has rank " + std::to_string(t->dims.size());
      return false;
    }
    for (int d : t->dims) {
      if (d <= 0) {
        *reason = "output " + Shape(t) + " is empty";
        return false;
      }
    }
  }
  return true;
}

bool CheckActivation(KilnFusedActivation activation, std::string* reason) {
  float lo, hi;
  if (ActivationRange(activation, &lo, &hi)) return true;
  *reason = "fused activation " + std::to_string(static_cast<int>(activation)) +
            " (only RELU, RELU6, RELU_N1_TO_1)";
  return false;
}

// Shapes, types and options, for float32 and int8 nodes alike.
bool SupportsShapes(const Interpreter& interpreter, const Node& node, std::string* reason) {
  const int code = node.desc->builtin_code;
  auto in = [&](size_t i) { return TensorAt(interpreter, node.inputs[i]); };
  if (node.outputs.size() != 1) {
    *reason = "more than one output";
    return false;
  }
  switch (code) {
    case kKilnBuiltinConv2d:
    case kKilnBuiltinDepthwiseConv2d: {
      if (!CheckTensors(interpreter, node, 3, {1, 2}, reason)) return false;
      if (in(0)->dims.size() != 4 || in(1)->dims.size() != 4) {
        *reason = "input or filter is not 4-D";
        return false;
      }
      if (code == kKilnBuiltinConv2d) {
        const auto* p = ParamsOf<KilnConvParams>(node);
        if (in(1)->dims[3] != in(0)->dims[3]) {
          *reason = "grouped convolution (filter depth " + std::to_string(in(1)->dims[3]) + ", input depth " +
                    std::to_string(in(0)->dims[3]) + ")";
          return false;
        }
        return CheckActivation(p->activation, reason);
      }
      const auto* p = ParamsOf<KilnDepthwiseConvParams>(node);
      if (in(1)->dims[3] % in(0)->dims[3] != 0) {
        *reason = "filter depth is not a multiple of the input depth";
        return false;
      }
      return CheckActivation(p->activation, reason);
    }
    case kKilnBuiltinFullyConnected: {
      if (!CheckTensors(interpreter, node, 3, {1, 2}, reason)) return false;
      const auto* p = ParamsOf<KilnFullyConnectedParams>(node);
      if (p->weights_format != kKilnFullyConnectedWeightsFormatDefault) {
        *reason = "shuffled weights";
        return false;
      }
      if (in(1)->dims.size() != 2) {
        *reason = "weights are not 2-D";
        return false;
      }
      const int64_t depth = in(1)->dims[1];
      int64_t elements = 1;
      for (int d : in(0)->dims) elements *= d;
      if (depth <= 0 || elements % depth != 0) {
        *reason = "input " + Shape(in(0)) + " does not split into rows of " + std::to_string(depth);
        return false;
      }
      if (p->keep_num_dims && in(0)->dims.back() != depth) {
        *reason = "keep_num_dims with an input whose last dimension is not the weights' depth";
        return false;
      }
      return CheckActivation(p->activation, reason);
    }
    case kKilnBuiltinAveragePool2d:
    case kKilnBuiltinMaxPool2d: {
      if (!CheckTensors(interpreter, node, 1, {}, reason)) return false;
      const auto* p = ParamsOf<KilnPoolParams>(node);
      if (in(0)->dims.size() != 4) {
        *reason = "input is not 4-D";
        return false;
      }
      if (p->filter_width == 1 && p->filter_height == 1 && (p->stride_width != 1 || p->stride_height != 1)) {
        *reason = "a 1x1 window with a stride above 1";
        return false;
      }
      // XNNPACK's work and indirection buffer grow with the whole window; the reference kernels visit only the
      // part inside the input, so a window larger than the input (a fuzzer's filter of millions) stays there.
      if (p->filter_height > in(0)->dims[1] || p->filter_width > in(0)->dims[2]) {
        *reason = "a window larger than the input";
        return false;
      }
      return CheckActivation(p->activation, reason);
    }
    case kKilnBuiltinAdd:
    case kKilnBuiltinSub:
    case kKilnBuiltinMul:
    case kKilnBuiltinDiv: {
      if (!CheckTensors(interpreter, node, 2, {}, reason)) return false;
      if (in(0)->dims.size() > 4 || in(1)->dims.size() > 4) {
        *reason = "broadcasting above 4-D";
        return false;
      }
      const KilnFusedActivation activation = code == kKilnBuiltinAdd || code == kKilnBuiltinSub
                                                 ? ParamsOf<KilnAddParams>(node)->activation
                                                 : ParamsOf<KilnMulParams>(node)->activation;
      return CheckActivation(activation, reason);
    }
    case kKilnBuiltinRelu:
    case kKilnBuiltinRelu6:
    case kKilnBuiltinReluN1To1:
    case kKilnBuiltinLogistic:
    case kKilnBuiltinHardSwish:
    case kKilnBuiltinElu:
    case kKilnBuiltinLeakyRelu:
      return CheckTensors(interpreter, node, 1, {}, reason);
    case kKilnBuiltinResizeBilinear: {
      if (!CheckTensors(interpreter, node, 1, {1}, reason)) return false;
      const auto* p = ParamsOf<KilnResizeBilinearParams>(node);
      if (p->align_corners && p->half_pixel_centers) {
        *reason = "align_corners together with half_pixel_centers";
        return false;
      }
      if (in(0)->dims.size() != 4) {
        *reason = "input is not 4-D";
        return false;
      }
      return true;
    }
    case kKilnBuiltinPrelu: {
      if (!CheckTensors(interpreter, node, 2, {1}, reason)) return false;
      const KilnTensor* alpha = in(1);
      const std::vector<int>& dims = in(0)->dims;
      int64_t alpha_count = 1;
      for (size_t d = 0; d < alpha->dims.size(); ++d) {
        alpha_count *= alpha->dims[d];
        if (d + 1 < alpha->dims.size() && alpha->dims[d] != 1) alpha_count = -1;
      }
      if (dims.size() != 4 || alpha_count != dims[3] || alpha->type != kKilnFloat32) {
        *reason = "XNNPACK's PRELU takes a 4-D input and one constant float slope per channel";
        return false;
      }
      return true;
    }
    case kKilnBuiltinMaximum:
    case kKilnBuiltinMinimum:
    case kKilnBuiltinSquaredDifference:
      if (!CheckTensors(interpreter, node, 2, {}, reason)) return false;
      if (in(0)->dims.size() > 4 || in(1)->dims.size() > 4) {
        *reason = "broadcasting above 4-D";
        return false;
      }
      return true;
    case kKilnBuiltinSoftmax: {
      if (!CheckTensors(interpreter, node, 1, {}, reason)) return false;
      const float beta = ParamsOf<KilnSoftmaxParams>(node)->beta;
      if (beta != 1.0f) {
        *reason = "beta " + std::to_string(beta) + " (XNNPACK's softmax has beta 1)";
        return false;
      }
      return true;
    }
    case kKilnBuiltinReshape:
    case kKilnBuiltinSqueeze:
      return CheckTensors(interpreter, node, 1, {}, reason);
    case kKilnBuiltinPad: {
      if (!CheckTensors(interpreter, node, 1, {1}, reason)) return false;
      std::vector<int> paddings;
      if (!ConstantInts(in(1), &paddings) || paddings.size() != 2 * in(0)->dims.size()) {
        *reason = "paddings are not a constant int32 [rank, 2] tensor";
        return false;
      }
      for (int v : paddings) {
        if (v < 0) {
          *reason = "negative padding";
          return false;
        }
      }
      return true;
    }
    case kKilnBuiltinMean: {
      if (!CheckTensors(interpreter, node, 1, {1}, reason)) return false;
      std::vector<int> axes;
      // With keep_dims the output is [N, 1, 1, C]; without, [N, C], and a reshape follows the pooling.
      if (!ConstantInts(in(1), &axes) || in(0)->dims.size() != 4) {
        *reason = "only a 4-D MEAN over height and width maps onto global average pooling";
        return false;
      }
      bool h = false, w = false;
      for (int a : axes) {
        const int axis = a < 0 ? a + 4 : a;
        if (axis == 1)
          h = true;
        else if (axis == 2)
          w = true;
        else {
          *reason = "MEAN over axis " + std::to_string(a) + " (only height and width map onto pooling)";
          return false;
        }
      }
      if (!h || !w) {
        *reason = "MEAN over only one of height and width";
        return false;
      }
      return true;
    }
    default:
      *reason = "XNNPACK has no " + BuiltinOperatorName(code) + " here";
      return false;
  }
}

// The activation fused into a node's output; RELU, RELU6 and RELU_N1_TO_1 nodes are their own activation.
KilnFusedActivation NodeActivation(const Node& node) {
  switch (node.desc->builtin_code) {
    case kKilnBuiltinConv2d:
      return ParamsOf<KilnConvParams>(node)->activation;
    case kKilnBuiltinDepthwiseConv2d:
      return ParamsOf<KilnDepthwiseConvParams>(node)->activation;
    case kKilnBuiltinFullyConnected:
      return ParamsOf<KilnFullyConnectedParams>(node)->activation;
    case kKilnBuiltinAveragePool2d:
    case kKilnBuiltinMaxPool2d:
      return ParamsOf<KilnPoolParams>(node)->activation;
    case kKilnBuiltinAdd:
      return ParamsOf<KilnAddParams>(node)->activation;
    case kKilnBuiltinSub:
      return ParamsOf<KilnSubParams>(node)->activation;
    case kKilnBuiltinMul:
      return ParamsOf<KilnMulParams>(node)->activation;
    case kKilnBuiltinDiv:
      return ParamsOf<KilnDivParams>(node)->activation;
    case kKilnBuiltinRelu:
      return kKilnActRelu;
    case kKilnBuiltinRelu6:
      return kKilnActRelu6;
    case kKilnBuiltinReluN1To1:
      return kKilnActReluN1To1;
    default:
      return kKilnActNone;
  }
}

// XNNPACK's int8 operators, as this build of it offers them through its subgraph API: convolutions (per-tensor
// or per-channel filters), fully connected (per-tensor weights), max pooling, ADD, SUB, MUL, global average
// pooling (MEAN), LOGISTIC (output 1/256, -128), ELU, and the ops that keep their input's quantization (clamps,
// reshapes, constant padding).
// Everything else int8 (softmax, average pooling, ...) stays on the reference kernels.
bool SupportsNode(const Interpreter& interpreter, const Node& node, std::string* reason) {
  if (!IsInt8Node(interpreter, node)) return SupportsShapes(interpreter, node, reason);
  const int code = node.desc->builtin_code;
  bool keeps_quantization = false;
  switch (code) {
    case kKilnBuiltinConv2d:
    case kKilnBuiltinDepthwiseConv2d:
    case kKilnBuiltinFullyConnected:
    case kKilnBuiltinAdd:
    case kKilnBuiltinSub:
    case kKilnBuiltinMul:
    case kKilnBuiltinMean:
    case kKilnBuiltinElu:
      break;
    case kKilnBuiltinLogistic: {
      // XNNPACK's int8 sigmoid writes LiteRT's fixed output quantization only.
      const KilnTensor* out = TensorAt(interpreter, node.outputs[0]);
      if (!PerTensorInt8(out) || ScaleOf(out) != 1.0f / 256 || ZeroPointOf(out) != -128) {
        *reason = "int8 LOGISTIC output not quantized as scale 1/256, zero point -128 (XNNPACK's only form)";
        return false;
      }
      break;
    }
    case kKilnBuiltinMaxPool2d:
    case kKilnBuiltinRelu:
    case kKilnBuiltinRelu6:
    case kKilnBuiltinReluN1To1:
    case kKilnBuiltinReshape:
    case kKilnBuiltinSqueeze:
    case kKilnBuiltinPad:
      keeps_quantization = true;
      break;
    default:
      *reason = "XNNPACK here has no int8 " + BuiltinOperatorName(code);
      return false;
  }
  if (!SupportsShapes(interpreter, node, reason)) return false;
  const KilnTensor* input = TensorAt(interpreter, node.inputs[0]);
  const KilnTensor* output = TensorAt(interpreter, node.outputs[0]);
  if (keeps_quantization && !SameQuantization(input, output)) {
    *reason = "int8 input and output quantization differ (XNNPACK's int8 " + BuiltinOperatorName(code) +
              " keeps its input's)";
    return false;
  }
  if (code == kKilnBuiltinConv2d || code == kKilnBuiltinDepthwiseConv2d || code == kKilnBuiltinFullyConnected) {
    const KilnTensor* filter = TensorAt(interpreter, node.inputs[1]);
    const int channel_dim = code == kKilnBuiltinDepthwiseConv2d ? 3 : 0;
    if (!Int8Filter(filter, channel_dim, reason)) return false;
    if (code == kKilnBuiltinFullyConnected && filter->scales.size() != 1) {
      *reason = "per-channel int8 weights (XNNPACK here has per-tensor int8 fully connected only)";
      return false;
    }
    if (!Int32Bias(interpreter, node, filter->dims[channel_dim], reason)) return false;
  }
  float lo, hi;
  if (!OutputRange(output, NodeActivation(node), &lo, &hi)) {
    *reason = "the fused activation leaves the int8 output fewer than two steps";
    return false;
  }
  return true;
}

// Whether a convolution's output extent `out` along one side is what TensorFlow's SAME or VALID padding gives for
// input extent `in`, a filter spanning `extent` inputs (dilation counted) and `stride` (SAME: ceil(in / stride)
// outputs, the odd row or column of padding after); *before is the padding before the first input.
bool PaddedSide(KilnPadding padding, int64_t in, int64_t out, int64_t extent, int64_t stride, int64_t* before) {
  if (padding == kKilnPaddingSame) {
    *before = std::max<int64_t>(0, (out - 1) * stride + extent - in) / 2;
    return out == (in + stride - 1) / stride;
  }
  *before = 0;
  return in >= extent && out == (in - extent) / stride + 1;
}

// The name the placement text gives the nodes Kiln's own VNNI kernel runs inside an xnnpack host run.
constexpr const char* kVnniKernel = "kiln-vnni int8 gemm";

// Whether a VnniConv geometry is a plain GEMM of the pixels by the channels (1x1, stride 1, no padding).
bool IsPointwise(const reference::ConvParams& g) {
  return g.filter_height == 1 && g.filter_width == 1 && g.stride_height == 1 && g.stride_width == 1 &&
         g.output_height == g.input_height && g.output_width == g.input_width;
}

// The most input channels of a CONV_2D other than a 1x1 of stride 1 that VnniConv takes (below).
constexpr int64_t kMaxGatheredChannels = 2;

// An int8 CONV_2D that Kiln's own AVX-512 VNNI GEMM (ops/simd/int8_gemm.h) runs instead of XNNPACK, on a CPU
// with VNNI, and its geometry: per-tensor int8 input and output, 4-D; a constant symmetric int8 filter (one scale,
// or one per output channel); a constant int32 bias or none; no fused activation or RELU, RELU6, RELU_N1_TO_1;
// SAME or VALID padding. A 1x1 filter of stride 1 is a GEMM of the pixels by the channels (Int8Gemm); any other
// filter, stride or dilation over at most kMaxGatheredChannels input channels gathers each pixel's taps first
// (Int8Conv). Its result equals the reference kernel's byte for byte.
bool VnniConv(const Interpreter& interpreter, const Node& node, reference::ConvParams* shape = nullptr) {
  if (!vnni::Available() || node.desc->builtin_code != kKilnBuiltinConv2d || !IsInt8Node(interpreter, node) ||
      node.inputs.size() < 2 || node.outputs.size() != 1 || node.inputs[1] < 0 || node.outputs[0] < 0) {
    return false;
  }
  const KilnTensor* input = TensorAt(interpreter, node.inputs[0]);
  const KilnTensor* filter = TensorAt(interpreter, node.inputs[1]);
  const KilnTensor* output = TensorAt(interpreter, node.outputs[0]);
  const auto* params = ParamsOf<KilnConvParams>(node);
  if (params == nullptr || params->stride_height < 1 || params->stride_width < 1 ||
      params->dilation_height_factor < 1 || params->dilation_width_factor < 1 ||
      params->activation > kKilnActRelu6 || params->activation < kKilnActNone) {
    return false;
  }
  if (!PerTensorInt8(input) || !PerTensorInt8(output) || input->dims.size() != 4 || output->dims.size() != 4) {
    return false;
  }
  if (!IsConstant(filter) || filter->type != kKilnInt8 || filter->dims.size() != 4 || filter->dims[1] < 1 ||
      filter->dims[2] < 1 || filter->dims[3] != input->dims[3] || filter->dims[0] < 1 || input->dims[3] < 1) {
    return false;
  }
  const int channels = filter->dims[0];
  const size_t scales = filter->scales.size();
  if (!(scales == 1 || (scales == static_cast<size_t>(channels) && filter->quantized_dimension == 0))) return false;
  for (float s : filter->scales) {
    if (!(s > 0.0f) || !std::isfinite(s)) return false;
  }
  for (int32_t z : filter->zero_points) {
    if (z != 0) return false;
  }
  if (output->dims[0] != input->dims[0] || output->dims[3] != channels) return false;
  reference::ConvParams g;
  g.batch = input->dims[0];
  g.input_height = input->dims[1];
  g.input_width = input->dims[2];
  g.input_channels = input->dims[3];
  g.output_height = output->dims[1];
  g.output_width = output->dims[2];
  g.output_channels = channels;
  g.filter_height = filter->dims[1];
  g.filter_width = filter->dims[2];
  g.stride_height = params->stride_height;
  g.stride_width = params->stride_width;
  g.dilation_height = params->dilation_height_factor;
  g.dilation_width = params->dilation_width_factor;
  if (g.batch < 1 || g.output_height < 1 || g.output_width < 1 ||
      !PaddedSide(params->padding, g.input_height, g.output_height, (g.filter_height - 1) * g.dilation_height + 1,
                  g.stride_height, &g.pad_top) ||
      !PaddedSide(params->padding, g.input_width, g.output_width, (g.filter_width - 1) * g.dilation_width + 1,
                  g.stride_width, &g.pad_left)) {
    return false;
  }
  if (node.inputs.size() >= 3 && node.inputs[2] >= 0) {
    const KilnTensor* bias = TensorAt(interpreter, node.inputs[2]);
    if (!IsConstant(bias) || bias->type != kKilnInt32 || bias->bytes != static_cast<size_t>(channels) * 4) {
      return false;
    }
  }
  // XNNPACK's own limits, so that the node runs where XNNPACK's convolution would (and LiteRT's delegate's): an
  // output range of two steps at least, requantization scales below 256.
  float lo = 0.0f, hi = 0.0f;
  if (!OutputRange(output, params->activation, &lo, &hi)) return false;
  for (float s : filter->scales) {
    if (!(ScaleOf(input) * s / ScaleOf(output) < 256.0f)) return false;
  }
  int32_t qlo = 0, qhi = 0;
  if (!reference::QuantizedActivationRange(static_cast<int>(params->activation), ScaleOf(output),
                                           ZeroPointOf(output), &qlo, &qhi)) {
    return false;
  }
  // Other than a GEMM, only over one or two input channels: XNNPACK's qs8 IGEMM here (4x16c8, in perf) rounds each
  // tap's channels up to 8 bytes, so there it does 4 to 8 times the work (mt_kws_dscnn_int8's 10x4 first layer over one channel: the
  // model 0.091 -> 0.047 ms on this kernel, one thread, Intel Xeon with AVX-512 VNNI); over three channels
  // (tm_mobilenet_v2_int8_224's 3x3 first layer) XNNPACK's took 0.3 ms less than the gathered GEMM.
  if (!IsPointwise(g) && g.input_channels > kMaxGatheredChannels) return false;
  if (shape != nullptr) *shape = g;
  return true;
}

// Whether `node` may move from XNNPACK to one of Kiln's own kernels at all: an input and a weights tensor, one
// output, and XNNPACK would take it (its own checks: the same nodes move, so a node Kiln's kernels refuse still runs
// on XNNPACK).
bool OwnKernelCandidate(const Interpreter& interpreter, const Node& node) {
  if (node.inputs.size() < 2 || node.outputs.size() != 1 || node.inputs[0] < 0 || node.inputs[1] < 0 ||
      node.outputs[0] < 0) {
    return false;
  }
  std::string reason;
  return SupportsNode(interpreter, node, &reason);
}

// Whether `node`'s bias (input 2) is absent or a constant float32 vector of n values.
bool FloatBiasOrNone(const Interpreter& interpreter, const Node& node, int64_t n) {
  if (node.inputs.size() < 3 || node.inputs[2] < 0) return true;
  const KilnTensor* bias = TensorAt(interpreter, node.inputs[2]);
  return IsConstant(bias) && bias->type == kKilnFloat32 && bias->bytes == static_cast<size_t>(n) * sizeof(float);
}

// The name the placement text gives the nodes Kiln's own float GEMV runs inside an xnnpack host run.
constexpr const char* kGemvKernel = "kiln-gemv float";

// A float FULLY_CONNECTED of 1 to 4 rows that Kiln's own AVX2/FMA GEMV (ops/simd/float_gemv.h) runs instead of
// XNNPACK, on a CPU with AVX2 and FMA: constant 2-D weights (float32, or int8 of a hybrid model, dequantized once
// as XNNPACK's path does), a constant float32 bias or none, and a fused activation that is a clamp.
bool GemvFc(const Interpreter& interpreter, const Node& node) {
  if (!gemv::Available() || node.desc->builtin_code != kKilnBuiltinFullyConnected ||
      !OwnKernelCandidate(interpreter, node)) {
    return false;
  }
  const KilnTensor* input = TensorAt(interpreter, node.inputs[0]);
  const KilnTensor* filter = TensorAt(interpreter, node.inputs[1]);
  const KilnTensor* output = TensorAt(interpreter, node.outputs[0]);
  if (input->type != kKilnFloat32 || output->type != kKilnFloat32 || filter->dims.size() != 2) return false;
  if (!FloatOrHybridWeights(filter)) return false;
  if (!FloatBiasOrNone(interpreter, node, filter->dims[0])) return false;
  float lo = 0.0f, hi = 0.0f;
  if (!OutputRange(output, ParamsOf<KilnFullyConnectedParams>(node)->activation, &lo, &hi)) return false;
  const int64_t k = filter->dims[1];
  int64_t elements = 1;
  for (int d : input->dims) elements *= d;
  return k > 0 && elements % k == 0 && elements / k >= 1 && elements / k <= gemv::kMaxRows;
}

// Packs a GemvFc node's weights (dequantized when they are int8), bias and clamp.
gemv::PackedGemv PackGemvFc(const Interpreter& interpreter, const Node& node) {
  const KilnTensor* filter = TensorAt(interpreter, node.inputs[1]);
  const float* bias = nullptr;
  if (node.inputs.size() >= 3 && node.inputs[2] >= 0) {
    bias = static_cast<const float*>(TensorAt(interpreter, node.inputs[2])->data);
  }
  float lo = 0.0f, hi = 0.0f;
  OutputRange(TensorAt(interpreter, node.outputs[0]), ParamsOf<KilnFullyConnectedParams>(node)->activation, &lo,
              &hi);
  const int64_t n = filter->dims[0], k = filter->dims[1];
  // The AVX-512F form where the CPU has it: float_gemv_bench (one thread, Intel Xeon, 2026-12-07) 1.0-1.4x the AVX2
  // form on mt_ad01_fc_float's layers (128 x 640: 27.1 against 22.9 G multiply-adds/s; 640 x 128 about equal:
  // both read the weights at the L2 cache's bandwidth).
  const gemv::Width width = gemv::Available(gemv::Width::kAvx512) ? gemv::Width::kAvx512 : gemv::Width::kAvx2;
  std::vector<float> dequantized;
  return gemv::PackGemv(FloatWeights(filter, &dequantized), n, k, bias, lo, hi, width);
}

// The names the placement text gives the nodes Kiln's own convolutions run inside an xnnpack host run.
constexpr const char* kConvKernel = "kiln-conv float";
constexpr const char* kDepthwiseKernel = "kiln-depthwise float";
constexpr const char* kDepthwiseKernelAvx512 = "kiln-depthwise float avx512";
constexpr const char* kGemmKernel = "kiln-gemm float";
constexpr const char* kGemmKernelAvx512 = "kiln-gemm float avx512";

// Whether this CPU has AVX-512F, where XNNPACK runs float convolutions with its 16-float kernels: each of Kiln's own
// convolutions then takes only the nodes where it was measured faster than them (the rules below; ops/simd/cpu.h).
bool XnnpackHasAvx512() {
#if KILN_SIMD_X86_BUILD
  static const bool avx512 = simd::HasAvx512f();
  return avx512;
#else
  return false;
#endif
}

// The geometry of a float CONV_2D or DEPTHWISE_CONV_2D node for Kiln's own kernels, or false: XNNPACK takes the
// node, its input and output are float32 4-D, its weights 4-D FloatOrHybridWeights (the engine dequantizes int8
// ones once; filter_channels per tap: the input channels for CONV_2D, the output channels for DEPTHWISE_CONV_2D),
// the bias constant float32 or absent, dilation 1, the fused activation a clamp (*lo, *hi), and the output of the
// size TensorFlow's SAME or VALID padding gives (SAME: ceil(in / stride) outputs, the odd row or column of padding
// after).
bool FloatConvGeometry(const Interpreter& interpreter, const Node& node, KilnPadding padding, int stride_h,
                       int stride_w, int dilation_h, int dilation_w, KilnFusedActivation activation,
                       conv::ConvShape* shape, float* lo, float* hi) {
  if (dilation_h != 1 || dilation_w != 1 || stride_h < 1 || stride_w < 1 || !OwnKernelCandidate(interpreter, node)) {
    return false;
  }
  const KilnTensor* input = TensorAt(interpreter, node.inputs[0]);
  const KilnTensor* filter = TensorAt(interpreter, node.inputs[1]);
  const KilnTensor* output = TensorAt(interpreter, node.outputs[0]);
  if (input->type != kKilnFloat32 || output->type != kKilnFloat32 || input->dims.size() != 4 ||
      output->dims.size() != 4 || !FloatOrHybridWeights(filter) || filter->dims.size() != 4 ||
      filter->dims[1] < 1 || filter->dims[2] < 1 || output->dims[0] != input->dims[0]) {
    return false;
  }
  const int64_t out_c = output->dims[3];
  if (!FloatBiasOrNone(interpreter, node, out_c) || !OutputRange(output, activation, lo, hi)) return false;
  conv::ConvShape g;
  g.batch = input->dims[0];
  g.in_h = input->dims[1];
  g.in_w = input->dims[2];
  g.in_c = input->dims[3];
  g.out_h = output->dims[1];
  g.out_w = output->dims[2];
  g.out_c = out_c;
  g.kernel_h = filter->dims[1];
  g.kernel_w = filter->dims[2];
  g.stride_h = stride_h;
  g.stride_w = stride_w;
  if (g.batch < 1 || g.in_c < 1 || g.out_c < 1 ||
      !PaddedSide(padding, g.in_h, g.out_h, g.kernel_h, g.stride_h, &g.pad_top) ||
      !PaddedSide(padding, g.in_w, g.out_w, g.kernel_w, g.stride_w, &g.pad_left)) {
    return false;
  }
  *shape = g;
  return true;
}

// A float CONV_2D over 1 to 4 input channels that Kiln's own AVX2/FMA direct convolution (ops/simd/float_conv.h)
// runs instead of XNNPACK, on a CPU with AVX2 and FMA; its geometry and clamp. On an AVX-512 CPU only where it was
// measured faster than XNNPACK's AVX-512 convolution: to at most 8 output channels (bench/float_conv_bench, one
// thread, G multiply-adds/s, Kiln vs XNNPACK: 224x224x3 3x3/2 to 8 channels 32.1 vs 19.6; 64x64x1 3x3 to 8 20.6 vs
// 9.9), not to more (3x3/2 to 16 33.5 vs 39.2, to 32 33.3 vs 41.4; 5x5/2 to 24 28.1 vs 34.6). One input channel to
// 64 ties on a square image (32x32x1 5x5/2: 28.4 vs 26.9) but not on mt_kws_dscnn_float's narrow one (49x10x1,
// 10x4/2 to 64: 30% of the model's time in Kiln's kernel; the model 0.056 -> 0.051 ms on XNNPACK's).
bool DirectConv(const Interpreter& interpreter, const Node& node, conv::ConvShape* shape, float* lo, float* hi) {
  if (!conv::Available() || node.desc->builtin_code != kKilnBuiltinConv2d) return false;
  const auto* p = ParamsOf<KilnConvParams>(node);
  if (p == nullptr || !FloatConvGeometry(interpreter, node, p->padding, p->stride_height, p->stride_width,
                                         p->dilation_height_factor, p->dilation_width_factor, p->activation, shape,
                                         lo, hi)) {
    return false;
  }
  const KilnTensor* filter = TensorAt(interpreter, node.inputs[1]);
  if (XnnpackHasAvx512() && shape->out_c > 8) return false;
  return shape->in_c <= conv::kMaxInputChannels && filter->dims[3] == shape->in_c && filter->dims[0] == shape->out_c;
}

// The form of Kiln's depthwise convolution the host engine packs a depthwise node of `shape` for on this CPU, or
// false: XNNPACK keeps it. Without AVX-512 the AVX2 form. On an AVX-512 CPU (bench/float_conv_bench, one thread, G
// multiply-adds/s, Kiln AVX2 vs Kiln AVX-512 vs XNNPACK): the AVX2 form over at most 8 channels (3x3 112x112x8: 11.2
// vs 7.8 vs 5.3) and for more than 9 taps over at most 24 (5x5 32x32x24: 19.0 vs 16.0 vs 11.8); the AVX-512 form for
// 3x3 over 9 to 32 channels (112x112x16 stride 2: 12.7 vs 19.4 vs 9.6; 56x56x32: 13.0 vs 17.1 vs 14.3); XNNPACK the
// rest (from 64 channels, above kMaxChannels anyway: 28x28x64 13.3 vs 18.8 vs 17.7, a tie; 14x14x128 13.2 vs 17.7
// vs 20.0; 7x7x256 12.5 vs 16.5 vs 21.8).
bool DepthwiseWidth(const conv::ConvShape& shape, depthwise::Width* width) {
  const int64_t channels = shape.out_c, taps = shape.kernel_h * shape.kernel_w;
  *width = depthwise::Width::kAvx2;
  if (!XnnpackHasAvx512() || channels <= 8 || (taps > 9 && channels <= 24)) return true;
  *width = depthwise::Width::kAvx512;
  return taps <= 9 && depthwise::Available(depthwise::Width::kAvx512);
}

// A float DEPTHWISE_CONV_2D of depth multiplier 1 over at most depthwise::kMaxChannels channels that Kiln's own
// AVX2/FMA depthwise convolution (ops/simd/float_depthwise.h) runs instead of XNNPACK, on a CPU with AVX2 and FMA;
// its geometry and clamp. On an AVX-512 CPU only where a form of it was measured faster than XNNPACK's AVX-512
// kernels (DepthwiseWidth).
bool DirectDepthwise(const Interpreter& interpreter, const Node& node, conv::ConvShape* shape, float* lo,
                     float* hi) {
  if (!depthwise::Available() || node.desc->builtin_code != kKilnBuiltinDepthwiseConv2d) return false;
  const auto* p = ParamsOf<KilnDepthwiseConvParams>(node);
  if (p == nullptr || p->depth_multiplier != 1 ||
      !FloatConvGeometry(interpreter, node, p->padding, p->stride_height, p->stride_width, p->dilation_height_factor,
                         p->dilation_width_factor, p->activation, shape, lo, hi)) {
    return false;
  }
  const KilnTensor* filter = TensorAt(interpreter, node.inputs[1]);
  depthwise::Width width;
  if (!DepthwiseWidth(*shape, &width)) return false;
  return shape->in_c == shape->out_c && shape->out_c <= depthwise::kMaxChannels && filter->dims[0] == 1 &&
         filter->dims[3] == shape->out_c;
}

// A float 1x1 CONV_2D of stride 1 over more than conv::kMaxInputChannels channels that Kiln's own GEMM
// (ops/simd/float_gemm.h) runs instead of XNNPACK, on a CPU with AVX2 and FMA; its geometry and clamp. On an AVX-512
// CPU its AVX-512 form (GemmWidth), which was measured faster than XNNPACK's AVX-512 kernels on every pointwise layer
// of ts_mobilenet_v1_025_224_float (bench/float_conv_bench, one thread, G multiply-adds/s, Kiln AVX-512 vs XNNPACK
// vs Kiln AVX2: 112x112 8 to 16 channels 40.0 vs 28.2 vs 30.7; 56x56 16 to 32 59.1 vs 58.3 vs 35.0; 32 to 32
// 71.8 vs 66.0 vs 39.6; 28x28 32 to 64 72.1 vs 66.8 vs 38.9; 64 to 64 78.4 vs 67.6 vs 41.0; 14x14 64 to 128 80.1
// vs 67.2 vs 40.9; 128 to 128 73.8 vs 67.1 vs 41.4; 7x7 128 to 256 69.2 vs 67.5 vs 40.5; 256 to 256 69.7 vs 68.5
// vs 37.7), where the AVX2 form was not.
bool PointwiseConv(const Interpreter& interpreter, const Node& node, conv::ConvShape* shape, float* lo, float* hi) {
  if (!gemm::Available() || node.desc->builtin_code != kKilnBuiltinConv2d) return false;
  const auto* p = ParamsOf<KilnConvParams>(node);
  if (p == nullptr || p->stride_height != 1 || p->stride_width != 1 ||
      !FloatConvGeometry(interpreter, node, p->padding, 1, 1, p->dilation_height_factor, p->dilation_width_factor,
                         p->activation, shape, lo, hi)) {
    return false;
  }
  const KilnTensor* filter = TensorAt(interpreter, node.inputs[1]);
  return shape->kernel_h == 1 && shape->kernel_w == 1 && shape->in_c > conv::kMaxInputChannels &&
         filter->dims[3] == shape->in_c && filter->dims[0] == shape->out_c && shape->out_h == shape->in_h &&
         shape->out_w == shape->in_w;
}

// The form of Kiln's GEMM the host engine packs 1x1 convolutions for on this CPU (PointwiseConv).
gemm::Width GemmWidth() {
  return XnnpackHasAvx512() && gemm::Available(gemm::Width::kAvx512) ? gemm::Width::kAvx512 : gemm::Width::kAvx2;
}

// The constant float32 bias of a convolution node, or null.
const float* FloatBias(const Interpreter& interpreter, const Node& node) {
  if (node.inputs.size() < 3 || node.inputs[2] < 0) return nullptr;
  return static_cast<const float*>(TensorAt(interpreter, node.inputs[2])->data);
}

// KILN_VNNI_EXACT=1: the VNNI nodes requantize with LiteRT's fixed-point arithmetic (byte-exact with the reference
// kernels) instead of XNNPACK's float one (byte-exact with XNNPACK's convolution and LiteRT's default delegate).
bool VnniExact() {
  const char* exact = std::getenv("KILN_VNNI_EXACT");
  return exact != nullptr && exact[0] != '\0' && exact[0] != '0';
}

// An output bound in real units as XNNPACK's subgraph quantizes it (xnn_qs8_quantize's formula).
int32_t XnnpackQuantizedBound(float value, const KilnTensor* output) {
  return static_cast<int32_t>(std::lrintf(
      std::fmin(std::fmax(value / ScaleOf(output) + static_cast<float>(ZeroPointOf(output)), -128.0f), 127.0f)));
}

// Packs a VnniConv node's filter, bias and requantization: the reference int8 CONV_2D's fixed-point form (`exact`) or
// XNNPACK's float one.
vnni::PackedInt8Gemm PackVnniConv(const Interpreter& interpreter, const Node& node, bool exact) {
  const KilnTensor* input = TensorAt(interpreter, node.inputs[0]);
  const KilnTensor* filter = TensorAt(interpreter, node.inputs[1]);
  const KilnTensor* output = TensorAt(interpreter, node.outputs[0]);
  const int32_t* bias = nullptr;
  if (node.inputs.size() >= 3 && node.inputs[2] >= 0) {
    bias = static_cast<const int32_t*>(TensorAt(interpreter, node.inputs[2])->data);
  }
  // A CONV_2D filter [n][ky][kx][c] is the GEMM's [n][k] as it is stored.
  const int64_t n = filter->dims[0], k = int64_t{filter->dims[1]} * filter->dims[2] * filter->dims[3];
  const std::vector<reference::QuantizedMultiplier> multipliers =
      reference::PerChannelMultipliers(ScaleOf(input), filter->scales, ScaleOf(output), n);
  const KilnFusedActivation activation = ParamsOf<KilnConvParams>(node)->activation;
  int32_t lo = -128, hi = 127;
  if (exact) {  // the reference kernel's clamp
    reference::QuantizedActivationRange(static_cast<int>(activation), ScaleOf(output), ZeroPointOf(output), &lo, &hi);
  } else {  // XNNPACK's
    float real_lo = 0.0f, real_hi = 0.0f;
    OutputRange(output, activation, &real_lo, &real_hi);
    lo = XnnpackQuantizedBound(real_lo, output);
    hi = XnnpackQuantizedBound(real_hi, output);
  }
  vnni::PackedInt8Gemm packed = vnni::PackInt8Gemm(static_cast<const int8_t*>(filter->data), n, k, bias,
                                                   ZeroPointOf(input), multipliers, ZeroPointOf(output), lo, hi);
  if (!exact) vnni::UseFloatRequantization(&packed, ScaleOf(input), filter->scales, ScaleOf(output));
  return packed;
}

std::string StatusName(xnn_status status) {
  switch (status) {
    case xnn_status_success:
      return "success";
    case xnn_status_uninitialized:
      return "uninitialized";
    case xnn_status_invalid_parameter:
      return "invalid parameter";
    case xnn_status_invalid_state:
      return "invalid state";
    case xnn_status_unsupported_parameter:
      return "unsupported parameter";
    case xnn_status_unsupported_hardware:
      return "unsupported hardware";
    case xnn_status_out_of_memory:
      return "out of memory";
    default:
      return "status " + std::to_string(static_cast<int>(status));
  }
}

class XnnpackRun : public HostRun {
 public:
  XnnpackRun(xnn_runtime_t runtime, std::vector<int> externals, std::list<std::vector<float>> weights,
             std::vector<int> packed)
      : runtime_(runtime), externals_(std::move(externals)), weights_(std::move(weights)), packed_(std::move(packed)) {}
  ~XnnpackRun() override { xnn_delete_runtime(runtime_); }

  bool Bind(Interpreter* interpreter, std::string* error) override {
    return BindWith([interpreter](int t) { return interpreter->tensor(t)->data; }, error);
  }

  // Binds each external tensor to the memory `data` gives for it.
  bool BindWith(const std::function<void*(int)>& data, std::string* error) {
    std::vector<xnn_external_value> values;
    for (int t : externals_) values.push_back({static_cast<uint32_t>(t), data(t)});
    const xnn_status status = xnn_setup_runtime(runtime_, values.size(), values.data());
    if (status != xnn_status_success) {
      *error = "xnn_setup_runtime: " + StatusName(status);
      return false;
    }
    return true;
  }

  bool Invoke(std::string* error) override {
    const xnn_status status = xnn_invoke_runtime(runtime_);
    if (status != xnn_status_success) {
      *error = "xnn_invoke_runtime: " + StatusName(status);
      return false;
    }
    return true;
  }

  std::vector<int> PackedConstants() const override { return packed_; }
  // xnn_define_tensor_value: static data must outlive the subgraph and every runtime created from it.
  std::vector<int> PinnedConstants() const override { return packed_; }

 private:
  xnn_runtime_t runtime_;
  std::vector<int> externals_;  // tensor indices, which are also their XNNPACK external ids
  std::list<std::vector<float>> weights_;
  std::vector<int> packed_;
};

// The filter and bias of the nodes among [first, last] whose XNNPACK operators copy them into packed weights
// when the runtime is created (convolutions, fully connected): read then, never again.
std::vector<int> WeightsPackedByXnnpack(const Interpreter& interpreter, int first, int last) {
  std::vector<int> packed;
  for (int n = first; n <= last; ++n) {
    if (interpreter.folded(n)) continue;
    const Node& node = interpreter.nodes()[n];
    const int code = node.desc->builtin_code;
    std::vector<int> weights;
    if (code == kKilnBuiltinConv2d || code == kKilnBuiltinDepthwiseConv2d || code == kKilnBuiltinFullyConnected) {
      weights = {1, 2};
    } else if (code == kKilnBuiltinTransposeConv) {
      weights = {1, 3};
    }
    for (size_t i : weights) {
      if (i < node.inputs.size() && node.inputs[i] >= 0 && IsConstant(interpreter.tensor(node.inputs[i]))) {
        packed.push_back(node.inputs[i]);
      }
    }
  }
  return packed;
}

// Builds one subgraph: values for the tensors the run touches, then one definition per node.
class SubgraphBuilder {
 public:
  SubgraphBuilder(Interpreter* interpreter, xnn_subgraph_t subgraph, const std::vector<int>& internal)
      : interpreter_(interpreter), subgraph_(subgraph), internal_(internal.begin(), internal.end()) {}

  // The XNNPACK value of tensor `index` (defined on first use); XNN_INVALID_VALUE_ID for an absent input.
  bool Value(int index, uint32_t* id, std::string* error) {
    if (index < 0) {
      *id = XNN_INVALID_VALUE_ID;
      return true;
    }
    if (auto it = ids_.find(index); it != ids_.end()) {
      *id = it->second;
      return true;
    }
    const KilnTensor* t = interpreter_->tensor(index);
    std::vector<size_t> dims(t->dims.begin(), t->dims.end());
    const void* data = IsConstant(t) ? t->data : nullptr;
    // Hybrid weights of a float node become a float32 value; an int8 node's stay quantized.
    const bool dequantized = IsQuantizedWeights(t) && !int8_;
    if (dequantized) {
      weights_.push_back(DequantizeWeights(t));
      data = weights_.back().data();
    }
    const bool quantized = t->type == kKilnInt8 && !dequantized;
    uint32_t external = XNN_INVALID_VALUE_ID;
    uint32_t flags = 0;
    if (data == nullptr && !internal_.count(index)) {
      external = static_cast<uint32_t>(index);
      flags = produced_.count(index) ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : XNN_VALUE_FLAG_EXTERNAL_INPUT;
      externals_.push_back(index);
    }
    xnn_status status;
    if (quantized && t->scales.size() > 1) {  // a per-channel filter (SupportsNode checked it)
      status = xnn_define_channelwise_quantized_tensor_value(subgraph_, xnn_datatype_qcint8, t->scales.data(),
                                                             dims.size(), t->quantized_dimension,
                                                             dims.data(), data, external, flags, id);
    } else if (quantized) {
      status = xnn_define_quantized_tensor_value(subgraph_, xnn_datatype_qint8, ZeroPointOf(t), ScaleOf(t),
                                                 dims.size(), dims.data(), data, external, flags, id);
    } else {
      status = xnn_define_tensor_value(subgraph_, xnn_datatype_fp32, dims.size(), dims.data(), data, external,
                                       flags, id);
    }
    if (status != xnn_status_success) {
      *error = "tensor " + std::to_string(index) + " ('" + t->name + "'): " + StatusName(status);
      return false;
    }
    ids_[index] = *id;
    return true;
  }

  // The int32 bias of an int8 convolution or fully connected node: its scale is the input's times the
  // filter's (per output channel when the filter is per-channel), as LiteRT's kernels read it, whatever scale
  // the model records for it.
  bool Bias(const Node& node, uint32_t* id, std::string* error) {
    *id = XNN_INVALID_VALUE_ID;
    if (node.inputs.size() < 3 || node.inputs[2] < 0) return true;
    const KilnTensor* input = interpreter_->tensor(node.inputs[0]);
    const KilnTensor* filter = interpreter_->tensor(node.inputs[1]);
    const KilnTensor* bias = interpreter_->tensor(node.inputs[2]);
    std::vector<float> scales;
    for (float s : filter->scales) scales.push_back(ScaleOf(input) * s);
    const size_t dims[1] = {static_cast<size_t>(bias->dims[0])};
    xnn_status status;
    if (scales.size() > 1) {
      weights_.push_back(std::move(scales));
      status = xnn_define_channelwise_quantized_tensor_value(subgraph_, xnn_datatype_qcint32,
                                                             weights_.back().data(), 1, 0, dims,
                                                             bias->data, XNN_INVALID_VALUE_ID, 0, id);
    } else {
      status = xnn_define_quantized_tensor_value(subgraph_, xnn_datatype_qint32, 0, scales[0], 1, dims,
                                                 bias->data, XNN_INVALID_VALUE_ID, 0, id);
    }
    if (status != xnn_status_success) {
      *error = "bias tensor " + std::to_string(node.inputs[2]) + " ('" + bias->name + "'): " + StatusName(status);
      return false;
    }
    return true;
  }

  // Outputs are marked before their node's inputs are defined, so a value knows which way it crosses.
  void Produces(const Node& node) { produced_.insert(node.outputs.begin(), node.outputs.end()); }

  bool Define(const Node& node, std::string* error);

  // Folds PAD node `pad` into the convolution that alone reads its output (see FusablePads).
  void FusePad(const Node* pad) { fused_pads_[pad->outputs[0]] = pad; }

  const std::vector<int>& externals() const { return externals_; }
  // The dequantized weights and per-channel bias scales; XNNPACK reads them while it builds the runtime, and
  // the run keeps them after.
  std::list<std::vector<float>> TakeWeights() { return std::move(weights_); }

 private:
  Interpreter* interpreter_;
  xnn_subgraph_t subgraph_;
  std::set<int> internal_;
  std::set<int> produced_;
  std::map<int, uint32_t> ids_;
  std::vector<int> externals_;
  std::list<std::vector<float>> weights_;  // a list: adding one never moves the others
  bool int8_ = false;  // the node being defined computes in int8
  std::map<int, const Node*> fused_pads_;  // a fused PAD's output tensor -> the PAD node

  // Defines `node` with explicit input padding `pad` (top, right, bottom, left) for a convolution.
  bool DefineNode(const Node& node, const uint32_t pad[4], std::string* error);
};

bool SubgraphBuilder::Define(const Node& node, std::string* error) {
  if (fused_pads_.count(node.outputs[0])) return true;  // the convolution reading it pads instead
  int8_ = IsInt8Node(*interpreter_, node);
  // A convolution whose input is a fused PAD's output reads the PAD's input, with the PAD's explicit padding.
  uint32_t pad[4] = {0, 0, 0, 0};  // top, right, bottom, left
  Node fused;
  if (auto it = fused_pads_.find(node.inputs[0]); it != fused_pads_.end()) {
    std::vector<int> paddings;
    ConstantInts(interpreter_->tensor(it->second->inputs[1]), &paddings);
    pad[0] = static_cast<uint32_t>(paddings[2]);
    pad[2] = static_cast<uint32_t>(paddings[3]);
    pad[3] = static_cast<uint32_t>(paddings[4]);
    pad[1] = static_cast<uint32_t>(paddings[5]);
    fused = node;
    fused.inputs[0] = it->second->inputs[0];
  }
  const Node& n = fused.desc != nullptr ? fused : node;
  return DefineNode(n, pad, error);
}

bool SubgraphBuilder::DefineNode(const Node& node, const uint32_t pad[4], std::string* error) {
  std::vector<uint32_t> in(node.inputs.size());
  uint32_t out = 0;
  // Outputs first: a run's output is defined as external output before any reader sees it.
  if (!Value(node.outputs[0], &out, error)) return false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const int code = node.desc->builtin_code;
    // Shape and axis operands are read at build time, never handed to XNNPACK.
    const bool operand = (i == 1 && (code == kKilnBuiltinReshape || code == kKilnBuiltinPad ||
                                     code == kKilnBuiltinMean || code == kKilnBuiltinResizeBilinear));
    if (operand) continue;
    if (int8_ && i == 2 && (code == kKilnBuiltinConv2d || code == kKilnBuiltinDepthwiseConv2d ||
                            code == kKilnBuiltinFullyConnected)) {
      if (!Bias(node, &in[i], error)) return false;
      continue;
    }
    if (!Value(node.inputs[i], &in[i], error)) return false;
  }
  const KilnTensor* input = interpreter_->tensor(node.inputs[0]);
  const KilnTensor* output = interpreter_->tensor(node.outputs[0]);
  float lo = -kInf, hi = kInf;
  xnn_status status = xnn_status_success;
  switch (node.desc->builtin_code) {
    case kKilnBuiltinConv2d: {
      const auto* p = ParamsOf<KilnConvParams>(node);
      OutputRange(output, p->activation, &lo, &hi);
      const KilnTensor* filter = interpreter_->tensor(node.inputs[1]);
      status = xnn_define_convolution_2d(
          subgraph_, pad[0], pad[1], pad[2], pad[3], filter->dims[1], filter->dims[2], p->stride_height,
          p->stride_width,
          p->dilation_height_factor, p->dilation_width_factor, 1, filter->dims[3], filter->dims[0], lo, hi,
          in[0], in[1], node.inputs.size() > 2 ? in[2] : XNN_INVALID_VALUE_ID, out,
          p->padding == kKilnPaddingSame ? XNN_FLAG_TENSORFLOW_SAME_PADDING : 0);
      break;
    }
    case kKilnBuiltinDepthwiseConv2d: {
      const auto* p = ParamsOf<KilnDepthwiseConvParams>(node);
      OutputRange(output, p->activation, &lo, &hi);
      const KilnTensor* filter = interpreter_->tensor(node.inputs[1]);
      const int channels = input->dims[3];
      status = xnn_define_depthwise_convolution_2d(
          subgraph_, pad[0], pad[1], pad[2], pad[3], filter->dims[1], filter->dims[2], p->stride_height,
          p->stride_width,
          p->dilation_height_factor, p->dilation_width_factor, filter->dims[3] / channels, channels, lo, hi,
          in[0], in[1], node.inputs.size() > 2 ? in[2] : XNN_INVALID_VALUE_ID, out,
          p->padding == kKilnPaddingSame ? XNN_FLAG_TENSORFLOW_SAME_PADDING : 0);
      break;
    }
    case kKilnBuiltinFullyConnected: {
      const auto* p = ParamsOf<KilnFullyConnectedParams>(node);
      OutputRange(output, p->activation, &lo, &hi);
      const bool flatten = input->dims.back() != interpreter_->tensor(node.inputs[1])->dims[1] ||
                           (!p->keep_num_dims && input->dims.size() != 2);
      status = xnn_define_fully_connected(subgraph_, lo, hi, in[0], in[1],
                                          node.inputs.size() > 2 ? in[2] : XNN_INVALID_VALUE_ID, out,
                                          flatten ? XNN_FLAG_TENSORFLOW_RESHAPE_2D : 0);
      break;
    }
    case kKilnBuiltinAveragePool2d:
    case kKilnBuiltinMaxPool2d: {
      const auto* p = ParamsOf<KilnPoolParams>(node);
      OutputRange(output, p->activation, &lo, &hi);
      const uint32_t flags = p->padding == kKilnPaddingSame ? XNN_FLAG_TENSORFLOW_SAME_PADDING : 0;
      if (p->filter_width == 1 && p->filter_height == 1) {
        status = xnn_define_clamp(subgraph_, lo, hi, in[0], out, 0);  // a 1x1 window, stride 1: a copy
      } else if (node.desc->builtin_code == kKilnBuiltinAveragePool2d) {
        status = xnn_define_average_pooling_2d(subgraph_, 0, 0, 0, 0, p->filter_height, p->filter_width,
                                               p->stride_height, p->stride_width, lo, hi, in[0], out, flags);
      } else {
        status =
            xnn_define_max_pooling_2d(subgraph_, 0, 0, 0, 0, p->filter_height, p->filter_width,
                                      p->stride_height, p->stride_width, 1, 1, lo, hi, in[0], out, flags);
      }
      break;
    }
    case kKilnBuiltinAdd:
      OutputRange(output, ParamsOf<KilnAddParams>(node)->activation, &lo, &hi);
      status = xnn_define_add2(subgraph_, lo, hi, in[0], in[1], out, 0);
      break;
    case kKilnBuiltinSub:
      OutputRange(output, ParamsOf<KilnSubParams>(node)->activation, &lo, &hi);
      status = xnn_define_subtract(subgraph_, lo, hi, in[0], in[1], out, 0);
      break;
    case kKilnBuiltinMul:
      OutputRange(output, ParamsOf<KilnMulParams>(node)->activation, &lo, &hi);
      status = xnn_define_multiply2(subgraph_, lo, hi, in[0], in[1], out, 0);
      break;
    case kKilnBuiltinDiv:
      OutputRange(output, ParamsOf<KilnDivParams>(node)->activation, &lo, &hi);
      status = xnn_define_divide(subgraph_, lo, hi, in[0], in[1], out, 0);
      break;
    case kKilnBuiltinRelu:
    case kKilnBuiltinRelu6:
    case kKilnBuiltinReluN1To1:
      OutputRange(output, NodeActivation(node), &lo, &hi);
      status = xnn_define_clamp(subgraph_, lo, hi, in[0], out, 0);
      break;
    case kKilnBuiltinLogistic:
      status = xnn_define_sigmoid(subgraph_, in[0], out, 0);
      break;
    case kKilnBuiltinHardSwish:
      status = xnn_define_hardswish(subgraph_, in[0], out, 0);
      break;
    case kKilnBuiltinLeakyRelu:
      status = xnn_define_leaky_relu(subgraph_, ParamsOf<KilnLeakyReluParams>(node)->alpha, in[0], out, 0);
      break;
    case kKilnBuiltinResizeBilinear: {
      const auto* p = ParamsOf<KilnResizeBilinearParams>(node);
      const uint32_t flags = p->align_corners         ? XNN_FLAG_ALIGN_CORNERS
                             : !p->half_pixel_centers ? XNN_FLAG_TENSORFLOW_LEGACY_MODE
                                                      : 0;
      status = xnn_define_static_resize_bilinear_2d(subgraph_, output->dims[1], output->dims[2], in[0], out,
                                                    flags);
      break;
    }
    case kKilnBuiltinElu:
      status = xnn_define_elu(subgraph_, 1.0f, in[0], out, 0);
      break;
    case kKilnBuiltinPrelu: {
      // XNNPACK wants the slope as a 1-D [channels] value: the same constant data, seen flat.
      const KilnTensor* alpha = interpreter_->tensor(node.inputs[1]);
      const size_t channels = static_cast<size_t>(input->dims[3]);
      uint32_t slope = XNN_INVALID_VALUE_ID;
      status = xnn_define_tensor_value(subgraph_, xnn_datatype_fp32, 1, &channels, alpha->data,
                                       XNN_INVALID_VALUE_ID, 0, &slope);
      if (status == xnn_status_success) status = xnn_define_prelu(subgraph_, in[0], slope, out, 0);
      break;
    }
    case kKilnBuiltinMaximum:
      status = xnn_define_maximum2(subgraph_, in[0], in[1], out, 0);
      break;
    case kKilnBuiltinMinimum:
      status = xnn_define_minimum2(subgraph_, in[0], in[1], out, 0);
      break;
    case kKilnBuiltinSquaredDifference:
      status = xnn_define_squared_difference(subgraph_, in[0], in[1], out, 0);
      break;
    case kKilnBuiltinSoftmax:
      status = xnn_define_softmax(subgraph_, in[0], out, 0);
      break;
    case kKilnBuiltinReshape:
    case kKilnBuiltinSqueeze: {
      std::vector<size_t> shape(output->dims.begin(), output->dims.end());
      status = xnn_define_static_reshape(subgraph_, shape.size(), shape.data(), in[0], out, 0);
      break;
    }
    case kKilnBuiltinPad: {
      std::vector<int> paddings;
      ConstantInts(interpreter_->tensor(node.inputs[1]), &paddings);
      std::vector<size_t> pre, post;
      for (size_t d = 0; d < input->dims.size(); ++d) {
        pre.push_back(static_cast<size_t>(paddings[2 * d]));
        post.push_back(static_cast<size_t>(paddings[2 * d + 1]));
      }
      status = xnn_define_static_constant_pad(subgraph_, pre.data(), post.data(), 0.0f, in[0], out, 0);
      break;
    }
    case kKilnBuiltinMean: {
      OutputRange(output, kKilnActNone, &lo, &hi);
      if (output->dims.size() == 4) {
        status = xnn_define_global_average_pooling_2d(subgraph_, lo, hi, in[0], out, 0);
        break;
      }
      // keep_dims false: pool into [N, 1, 1, C] (quantized as the output), then reshape to the output's [N, C].
      const size_t pooled_dims[4] = {static_cast<size_t>(input->dims[0]), 1, 1,
                                     static_cast<size_t>(input->dims[3])};
      uint32_t pooled = XNN_INVALID_VALUE_ID;
      status = int8_ ? xnn_define_quantized_tensor_value(subgraph_, xnn_datatype_qint8, ZeroPointOf(output),
                                                         ScaleOf(output), 4, pooled_dims, nullptr,
                                                         XNN_INVALID_VALUE_ID, 0, &pooled)
                     : xnn_define_tensor_value(subgraph_, xnn_datatype_fp32, 4, pooled_dims, nullptr,
                                               XNN_INVALID_VALUE_ID, 0, &pooled);
      if (status == xnn_status_success) {
        status = xnn_define_global_average_pooling_2d(subgraph_, lo, hi, in[0], pooled, 0);
      }
      if (status == xnn_status_success) {
        std::vector<size_t> shape(output->dims.begin(), output->dims.end());
        status = xnn_define_static_reshape(subgraph_, shape.size(), shape.data(), pooled, out, 0);
      }
      break;
    }
    default:
      *error = "no mapping for " + BuiltinOperatorName(node.desc->builtin_code);
      return false;
  }
  if (status != xnn_status_success) {
    *error = "node " + std::to_string(node.index) + " (" + BuiltinOperatorName(node.desc->builtin_code) +
             "): " + StatusName(status);
    return false;
  }
  return true;
}

// The PAD nodes of run [first, last] that a convolution can do itself: a PAD of height and width only, with
// the pad value zero (float) or the zero point (int8, which a quantized convolution pads with), whose output
// only a VALID CONV_2D or DEPTHWISE_CONV_2D of the same run reads. XNNPACK folds such a PAD itself only when the
// padding value's bits are zero, which an int8 zero point other than 0 is not; a separate PAD copies the
// whole feature map (18 of them in tm_mobilenet_v2_int8_224).
std::vector<const Node*> FusablePads(const Interpreter& interpreter, int first, int last,
                                     const std::vector<int>& internal) {
  std::map<int, int> readers;
  for (int n = first; n <= last; ++n) {
    for (int t : interpreter.nodes()[n].inputs) readers[t] += 1;
  }
  std::vector<const Node*> pads;
  for (int n = first; n < last; ++n) {
    const Node& pad = interpreter.nodes()[n];
    if (pad.desc->builtin_code != kKilnBuiltinPad || interpreter.folded(n)) continue;
    const int t = pad.outputs[0];
    if (std::find(internal.begin(), internal.end(), t) == internal.end() || readers[t] != 1) continue;
    std::vector<int> paddings;
    if (!ConstantInts(TensorAt(interpreter, pad.inputs[1]), &paddings) || paddings.size() != 8 ||
        paddings[0] != 0 || paddings[1] != 0 || paddings[6] != 0 || paddings[7] != 0) {
      continue;
    }
    for (int c = n + 1; c <= last; ++c) {
      const Node& conv = interpreter.nodes()[c];
      if (conv.inputs.empty() || conv.inputs[0] != t) continue;
      const int code = conv.desc->builtin_code;
      const bool valid = code == kKilnBuiltinConv2d
                             ? ParamsOf<KilnConvParams>(conv)->padding == kKilnPaddingValid
                         : code == kKilnBuiltinDepthwiseConv2d
                             ? ParamsOf<KilnDepthwiseConvParams>(conv)->padding == kKilnPaddingValid
                             : false;
      if (valid) pads.push_back(&pad);
      break;
    }
  }
  return pads;
}

// Builds nodes [first, last] (`internal`: the tensors produced and read only among them) as one XNNPACK runtime.
std::unique_ptr<XnnpackRun> BuildXnnpack(Interpreter* interpreter, int first, int last,
                                         const std::vector<int>& internal, pthreadpool_t pool, bool alone,
                                         std::string* error) {
  xnn_subgraph_t subgraph = nullptr;
  xnn_status status = xnn_create_subgraph(static_cast<uint32_t>(interpreter->tensor_count()), 0, &subgraph);
  if (status != xnn_status_success) {
    *error = "xnn_create_subgraph: " + StatusName(status);
    return nullptr;
  }
  std::unique_ptr<xnn_subgraph, xnn_status (*)(xnn_subgraph_t)> owner(subgraph, xnn_delete_subgraph);
  SubgraphBuilder builder(interpreter, subgraph, internal);
  for (int n = first; n <= last; ++n) builder.Produces(interpreter->nodes()[n]);
  for (const Node* pad : FusablePads(*interpreter, first, last, internal)) builder.FusePad(pad);
  for (int n = first; n <= last; ++n) {
    if (interpreter->folded(n)) continue;  // computed at AllocateTensors: its output is a constant now
    if (!builder.Define(interpreter->nodes()[n], error)) return nullptr;
  }
  xnn_runtime_t runtime = nullptr;
  status = xnn_create_runtime_v2(subgraph, pool, alone ? 0 : XNN_FLAG_YIELD_WORKERS, &runtime);
  if (status != xnn_status_success) {
    *error = "xnn_create_runtime_v2: " + StatusName(status);
    return nullptr;
  }
  return std::make_unique<XnnpackRun>(runtime, builder.externals(), builder.TakeWeights(),
                                      WeightsPackedByXnnpack(*interpreter, first, last));
}

// Under ThreadSanitizer: Debian's pthreadpool is not instrumented, so ThreadSanitizer cannot see it hand a tile to
// a worker or wait for the workers, and would report the step's fields and the tiles' output as races. The own
// steps say it themselves (OwnStep::Parallelize): the caller's writes before a parallel run happen before every
// tile, and every tile's writes before the caller goes on. Races inside Kiln's kernels stay visible.
#if defined(__SANITIZE_THREAD__)
#define KILN_TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KILN_TSAN_BUILD 1
#endif
#endif
#ifdef KILN_TSAN_BUILD
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
void TsanAcquire(const void* p) { __tsan_acquire(const_cast<void*>(p)); }
void TsanRelease(const void* p) { __tsan_release(const_cast<void*>(p)); }
#else
void TsanAcquire(const void*) {}
void TsanRelease(const void*) {}
#endif

// One node on one of Kiln's own kernels (ops/simd) inside a MixedRun: its input and output tensors, bound to
// memory before a run, and the kernel's work over `rows` rows of the input.
struct OwnStep {
  int node = 0;
  int input = 0, output = 0;  // tensor indices
  std::vector<int> packed;    // the constant tensors (filter, bias) it copied into its packed form
  int64_t rows = 0;
  virtual ~OwnStep() = default;
  virtual const char* kernel() const = 0;  // its name in the placement text
  virtual void Bind(void* in, void* out) = 0;
  virtual void Run(pthreadpool_t pool, uint32_t flags) const = 0;

  // Calls tile(this, start, count) over [0, range) in tiles of `tile_size` on the pool's threads (and this one).
  void Parallelize(pthreadpool_t pool, void (*tile)(const OwnStep*, size_t, size_t), size_t range, size_t tile_size,
                   uint32_t flags) const {
    struct Task {
      const OwnStep* step;
      void (*tile)(const OwnStep*, size_t, size_t);
    } task{this, tile};
    TsanRelease(&task);
    pthreadpool_parallelize_1d_tile_1d(
        pool,
        [](void* context, size_t start, size_t count) {
          const Task* t = static_cast<const Task*>(context);
          TsanAcquire(t);
          t->tile(t->step, start, count);
          TsanRelease(t);
        },
        &task, range, tile_size, flags);
    TsanAcquire(&task);
  }
};

// One int8 CONV_2D on Kiln's VNNI GEMM: the rows (output pixels) split across the engine's threads. A 1x1
// convolution of stride 1 multiplies the input in place; any other gathers each tile's taps first.
struct VnniStep : OwnStep {
  vnni::PackedInt8Gemm packed;
  reference::ConvParams shape;
  bool pointwise = true;
  int32_t input_zero_point = 0;
  const int8_t* a = nullptr;  // bound
  int8_t* c = nullptr;

  const char* kernel() const override { return kVnniKernel; }
  void Bind(void* in, void* out) override {
    a = static_cast<const int8_t*>(in);
    c = static_cast<int8_t*>(out);
  }

  void Rows(int64_t begin, int64_t end) const {
    if (pointwise) {
      vnni::Int8Gemm(packed, a, packed.k, c, packed.n, begin, end);
    } else {
      vnni::Int8Conv(packed, shape, input_zero_point, a, c, begin, end);
    }
  }

  static void Tile(const OwnStep* step, size_t start, size_t count) {
    static_cast<const VnniStep*>(step)->Rows(static_cast<int64_t>(start), static_cast<int64_t>(start + count));
  }

  void Run(pthreadpool_t pool, uint32_t flags) const override {
    const size_t threads = pool != nullptr ? pthreadpool_get_threads_count(pool) : 1;
    // A small product (mt_kws_dscnn_int8's 125 x 64 x 64: about 10 us on one core) costs less than waking the
    // workers, and far less than waiting for one the scheduler has put aside on a busy machine.
    constexpr int64_t kParallelMultiplyAdds = int64_t{4} << 20;
    if (threads <= 1 || rows < 16 || rows * packed.k * packed.n < kParallelMultiplyAdds) {
      Rows(0, rows);
      return;
    }
    // About four tiles per thread (a busy core's share moves to the others), whole blocks of 8 rows.
    const int64_t per = (rows + static_cast<int64_t>(threads) * 4 - 1) / (static_cast<int64_t>(threads) * 4);
    const size_t tile = static_cast<size_t>(std::max<int64_t>(8, (per + 7) / 8 * 8));
    Parallelize(pool, &VnniStep::Tile, static_cast<size_t>(rows), tile, flags);
  }
};

// One float FULLY_CONNECTED of 1 to 4 rows on Kiln's GEMV: blocks of 32 outputs split across the engine's threads
// when the product is large.
struct GemvStep : OwnStep {
  gemv::PackedGemv packed;
  const float* x = nullptr;  // bound
  float* y = nullptr;

  const char* kernel() const override { return kGemvKernel; }
  void Bind(void* in, void* out) override {
    x = static_cast<const float*>(in);
    y = static_cast<float*>(out);
  }

  static void Tile(const OwnStep* own, size_t start, size_t count) {
    const auto* step = static_cast<const GemvStep*>(own);
    gemv::Gemv(step->packed, step->x, step->packed.k, step->y, step->packed.n, step->rows,
               static_cast<int64_t>(start), static_cast<int64_t>(start + count));
  }

  void Run(pthreadpool_t pool, uint32_t flags) const override {
    const size_t threads = pool != nullptr ? pthreadpool_get_threads_count(pool) : 1;
    // Below about a million multiply-adds (mt_ad01_fc_float's 128 x 128 layers: about a microsecond on one core)
    // waking the workers costs more than the work.
    constexpr int64_t kParallelMultiplyAdds = int64_t{1} << 20;
    if (threads <= 1 || packed.blocks < 2 || rows * packed.k * packed.n < kParallelMultiplyAdds) {
      gemv::Gemv(packed, x, packed.k, y, packed.n, rows, 0, packed.blocks);
      return;
    }
    Parallelize(pool, &GemvStep::Tile, static_cast<size_t>(packed.blocks), 1, flags);
  }
};

// One float convolution on one of Kiln's own kernels: a CONV_2D over few input channels on the direct convolution,
// a DEPTHWISE_CONV_2D on the depthwise convolution, or a 1x1 CONV_2D on the GEMM. Its rows (output rows; pixels
// for the GEMM) are split across the engine's threads when the convolution is large.
struct ConvStep : OwnStep {
  enum class Kernel { kDirect, kDepthwise, kGemm };
  Kernel which = Kernel::kDirect;
  conv::ConvShape shape;
  conv::PackedConv direct;  // one of these, by `which`
  depthwise::PackedDepthwise depthwise;
  gemm::PackedGemm gemm;
  const float* in = nullptr;  // bound
  float* out = nullptr;

  const char* kernel() const override {
    if (which == Kernel::kGemm) return gemm.width == gemm::Width::kAvx512 ? kGemmKernelAvx512 : kGemmKernel;
    if (which == Kernel::kDepthwise) {
      return depthwise.width == depthwise::Width::kAvx512 ? kDepthwiseKernelAvx512 : kDepthwiseKernel;
    }
    return kConvKernel;
  }
  void Bind(void* input, void* output) override {
    in = static_cast<const float*>(input);
    out = static_cast<float*>(output);
  }

  void Rows(int64_t begin, int64_t end) const {
    switch (which) {
      case Kernel::kDirect:
        conv::Conv(direct, in, out, begin, end);
        break;
      case Kernel::kDepthwise:
        depthwise::Depthwise(depthwise, in, out, begin, end);
        break;
      case Kernel::kGemm:
        gemm::Gemm(gemm, in, shape.in_c, out, shape.out_c, begin, end);
        break;
    }
  }

  static void Tile(const OwnStep* step, size_t start, size_t count) {
    static_cast<const ConvStep*>(step)->Rows(static_cast<int64_t>(start), static_cast<int64_t>(start + count));
  }

  void Run(pthreadpool_t pool, uint32_t flags) const override {
    const size_t threads = pool != nullptr ? pthreadpool_get_threads_count(pool) : 1;
    const int64_t multiply_adds = shape.batch * shape.out_h * shape.out_w * shape.out_c * shape.kernel_h *
                                  shape.kernel_w * (which == Kernel::kDepthwise ? 1 : shape.in_c);
    // Below about 130,000 multiply-adds (10 to 15 us on one core) handing work to the workers, which spin between
    // the steps of a run, costs more than it saves; ts_mobilenet_v1_025_224_float's layers have 0.1 to 3 million.
    constexpr int64_t kParallelMultiplyAdds = int64_t{1} << 17;
    if (threads <= 1 || rows < 2 || multiply_adds < kParallelMultiplyAdds) {
      Rows(0, rows);
      return;
    }
    // About four tiles per thread, so that a busy core's share moves to the others; the GEMM's in whole steps.
    const int64_t step = which == Kernel::kGemm ? gemm.rows : 1;
    const int64_t per = (rows + static_cast<int64_t>(threads) * 4 - 1) / (static_cast<int64_t>(threads) * 4);
    const size_t tile = static_cast<size_t>(std::max<int64_t>(step, (per + step - 1) / step * step));
    Parallelize(pool, &ConvStep::Tile, static_cast<size_t>(rows), tile, flags);
  }
};

// A host run whose int8 1x1 convolutions run on Kiln's VNNI GEMM, whose small float FULLY_CONNECTED nodes run on
// Kiln's GEMV, whose float convolutions over few channels, depthwise convolutions of few channels and 1x1
// convolutions run on Kiln's own convolutions, and whose other nodes run on XNNPACK: the steps in node order, each an XNNPACK runtime (a stretch
// of nodes) or one node on Kiln's own kernel (an OwnStep). A tensor internal to the run that
// passes from one step to another gets memory of the run's own (the interpreter gives internal tensors none).
class MixedRun : public HostRun {
 public:
  struct Step {
    std::unique_ptr<XnnpackRun> xnnpack;  // or
    std::unique_ptr<OwnStep> own;
  };

  // `alone`: the run is the whole graph. Otherwise the workers yield after the last step (the reference kernels
  // run next), but keep spinning between the steps, as inside one XNNPACK runtime (yielding there made the workers
  // miss most hand-overs on a busy machine: mt_kws_dscnn_int8 at 2 threads went from 0.04 to 12 ms).
  MixedRun(pthreadpool_t pool, bool alone) : pool_(pool), alone_(alone) {}

  std::vector<Step>& steps() { return steps_; }
  // Memory for internal tensor `t` of `bytes` bytes from step `first` to step `last` (inclusive): tensors whose
  // steps do not overlap share it, as the interpreter's arena does (a smaller working set stays in cache).
  void AddBuffer(int t, size_t bytes, int first, int last) {
    buffer_tensors_.push_back(t);
    buffer_requests_.push_back({bytes + XNN_EXTRA_BYTES, first, last});  // XNNPACK may read past an input's end
  }
  void PlanBuffers() {
    const ArenaPlan plan = PlanArena(buffer_requests_, 64);
    memory_.assign(plan.arena_bytes, 0);
    for (size_t i = 0; i < buffer_tensors_.size(); ++i) buffers_[buffer_tensors_[i]] = memory_.data() + plan.offsets[i];
  }

  bool Bind(Interpreter* interpreter, std::string* error) override {
    auto data = [this, interpreter](int t) -> void* {
      auto it = buffers_.find(t);
      return it != buffers_.end() ? static_cast<void*>(it->second) : interpreter->tensor(t)->data;
    };
    for (Step& step : steps_) {
      if (step.xnnpack != nullptr && !step.xnnpack->BindWith(data, error)) return false;
      if (step.own != nullptr) step.own->Bind(data(step.own->input), data(step.own->output));
    }
    return true;
  }

  bool Invoke(std::string* error) override {
    for (const Step& step : steps_) {
      if (step.xnnpack != nullptr && !step.xnnpack->Invoke(error)) return false;
      if (step.own != nullptr) {
        step.own->Run(pool_, alone_ || &step != &steps_.back() ? 0 : PTHREADPOOL_FLAG_YIELD_WORKERS);
      }
    }
    return true;
  }

  const char* ProfileEngine() const override { return "xnnpack+kiln"; }

  std::string KernelOf(int node) const override {
    for (const Step& step : steps_) {
      if (step.own != nullptr && step.own->node == node) return step.own->kernel();
    }
    return std::string();
  }

  // Kiln's own kernels pack their filter and bias when the run is built, as XNNPACK's operators do.
  std::vector<int> PackedConstants() const override {
    std::vector<int> packed;
    for (const Step& step : steps_) {
      const std::vector<int> tensors =
          step.xnnpack != nullptr ? step.xnnpack->PackedConstants() : step.own->packed;
      packed.insert(packed.end(), tensors.begin(), tensors.end());
    }
    return packed;
  }

  std::vector<int> PinnedConstants() const override {
    std::vector<int> pinned;
    for (const Step& step : steps_) {
      if (step.xnnpack == nullptr) continue;
      const std::vector<int> tensors = step.xnnpack->PinnedConstants();
      pinned.insert(pinned.end(), tensors.begin(), tensors.end());
    }
    return pinned;
  }

  size_t WorkingBytes() const override { return memory_.size(); }

 private:
  pthreadpool_t pool_;
  bool alone_;
  std::vector<Step> steps_;
  std::vector<int> buffer_tensors_;
  std::vector<ArenaRequest> buffer_requests_;
  simd::AlignedVector<uint8_t> memory_;  // on a cache line, as each offset in it is
  std::map<int, uint8_t*> buffers_;  // tensor -> its memory in memory_
};

class XnnpackEngine : public HostEngine {
 public:
  explicit XnnpackEngine(int num_threads)
      : pool_(num_threads > 1 ? pthreadpool_create(static_cast<size_t>(num_threads)) : nullptr) {}
  ~XnnpackEngine() override {
    if (pool_ != nullptr) pthreadpool_destroy(pool_);
  }

  const char* name() const override { return "xnnpack"; }

  bool Supports(const Interpreter& interpreter, const Node& node, std::string* reason) const override {
    return VnniConv(interpreter, node) || SupportsNode(interpreter, node, reason);
  }

  std::unique_ptr<HostRun> Build(Interpreter* interpreter, int first, int last,
                                 const std::vector<int>& internal, std::string* error) override {
    // When other nodes run between this run's invocations (the reference kernels, another run), the workers
    // go back to the scheduler after each one instead of spinning on cores that work needs.
    bool alone = true;
    for (int n = 0; n < static_cast<int>(interpreter->nodes().size()); ++n) {
      if ((n < first || n > last) && !interpreter->folded(n)) alone = false;
    }
    // Each node's step: the nodes on Kiln's own kernels one each, the stretches between them one XNNPACK runtime
    // each.
    enum Kind { kXnnpack, kVnni, kGemv, kConv, kDepthwise, kGemm };
    std::vector<int> step_of(static_cast<size_t>(last - first + 1), -1);
    std::vector<std::pair<int, int>> stretches;  // [first, last] per step; first == last for Kiln's kernels
    std::vector<Kind> kinds;
    bool any_own = false;
    for (int n = first; n <= last; ++n) {
      if (interpreter->folded(n)) continue;
      const Node& node = interpreter->nodes()[n];
      conv::ConvShape shape;
      float lo = 0.0f, hi = 0.0f;
      const Kind kind = VnniConv(*interpreter, node)                            ? kVnni
                        : GemvFc(*interpreter, node)                            ? kGemv
                        : DirectConv(*interpreter, node, &shape, &lo, &hi)      ? kConv
                        : DirectDepthwise(*interpreter, node, &shape, &lo, &hi) ? kDepthwise
                        : PointwiseConv(*interpreter, node, &shape, &lo, &hi)   ? kGemm
                                                                                : kXnnpack;
      any_own = any_own || kind != kXnnpack;
      if (kind != kXnnpack || stretches.empty() || kinds.back() != kXnnpack) {
        stretches.push_back({n, n});
        kinds.push_back(kind);
      } else {
        stretches.back().second = n;
      }
      step_of[static_cast<size_t>(n - first)] = static_cast<int>(stretches.size()) - 1;
    }
    if (!any_own) return BuildXnnpack(interpreter, first, last, internal, pool_, alone, error);
    const bool exact = VnniExact();

    // An internal tensor stays inside its step when every reader is in the producer's step; otherwise it passes
    // between steps and the run gives it memory.
    std::map<int, int> producer_step;
    std::map<int, std::set<int>> reader_steps;
    for (int n = first; n <= last; ++n) {
      const int step = step_of[static_cast<size_t>(n - first)];
      if (step < 0) continue;
      for (int t : interpreter->nodes()[n].outputs) producer_step[t] = step;
      for (int t : interpreter->nodes()[n].inputs) reader_steps[t].insert(step);
    }
    std::vector<std::vector<int>> step_internal(stretches.size());
    auto run = std::make_unique<MixedRun>(pool_, alone);
    for (int t : internal) {
      auto produced = producer_step.find(t);
      const std::set<int>& readers = reader_steps[t];
      if (produced != producer_step.end() && readers.size() == 1 && *readers.begin() == produced->second) {
        step_internal[static_cast<size_t>(produced->second)].push_back(t);
      } else if (produced != producer_step.end()) {
        run->AddBuffer(t, interpreter->tensor(t)->bytes, produced->second,
                       readers.empty() ? produced->second : std::max(produced->second, *readers.rbegin()));
      }
    }
    run->PlanBuffers();
    for (size_t i = 0; i < stretches.size(); ++i) {
      MixedRun::Step step;
      if (kinds[i] != kXnnpack) {
        const Node& node = interpreter->nodes()[stretches[i].first];
        const KilnTensor* input = interpreter->tensor(node.inputs[0]);
        if (kinds[i] == kConv || kinds[i] == kDepthwise || kinds[i] == kGemm) {
          conv::ConvShape shape;
          float lo = 0.0f, hi = 0.0f;
          // Int8 weights of a hybrid model are dequantized once, as XNNPACK's path does, and packed like float ones.
          std::vector<float> dequantized;
          const float* weights = FloatWeights(interpreter->tensor(node.inputs[1]), &dequantized);
          const float* bias = FloatBias(*interpreter, node);
          auto step_of_node = std::make_unique<ConvStep>();
          ConvStep& own = *step_of_node;
          if (kinds[i] == kConv) {
            DirectConv(*interpreter, node, &shape, &lo, &hi);
            own.which = ConvStep::Kernel::kDirect;
            own.direct = conv::PackConv(shape, weights, bias, lo, hi);
            own.rows = shape.batch * shape.out_h;
          } else if (kinds[i] == kDepthwise) {
            DirectDepthwise(*interpreter, node, &shape, &lo, &hi);
            own.which = ConvStep::Kernel::kDepthwise;
            depthwise::Width width = depthwise::Width::kAvx2;
            DepthwiseWidth(shape, &width);
            own.depthwise = depthwise::PackDepthwise(shape, weights, bias, lo, hi, width);
            own.rows = shape.batch * shape.out_h;
          } else {
            PointwiseConv(*interpreter, node, &shape, &lo, &hi);
            own.which = ConvStep::Kernel::kGemm;
            own.gemm = gemm::PackGemm(weights, shape.out_c, shape.in_c, bias, lo, hi, GemmWidth());
            own.rows = shape.batch * shape.out_h * shape.out_w;
          }
          own.shape = shape;
          step.own = std::move(step_of_node);
        } else if (kinds[i] == kGemv) {
          auto gemv = std::make_unique<GemvStep>();
          gemv->packed = PackGemvFc(*interpreter, node);
          int64_t elements = 1;
          for (int d : input->dims) elements *= d;
          gemv->rows = elements / gemv->packed.k;
          step.own = std::move(gemv);
        } else {
          auto vnni = std::make_unique<VnniStep>();
          VnniConv(*interpreter, node, &vnni->shape);
          vnni->packed = PackVnniConv(*interpreter, node, exact);
          vnni->pointwise = IsPointwise(vnni->shape);
          vnni->input_zero_point = ZeroPointOf(input);
          vnni->rows = vnni->shape.batch * vnni->shape.output_height * vnni->shape.output_width;
          step.own = std::move(vnni);
        }
        step.own->node = node.index;
        step.own->input = node.inputs[0];
        step.own->output = node.outputs[0];
        for (size_t w = 1; w < node.inputs.size() && w <= 2; ++w) {
          if (node.inputs[w] >= 0 && IsConstant(interpreter->tensor(node.inputs[w]))) {
            step.own->packed.push_back(node.inputs[w]);
          }
        }
      } else {
        step.xnnpack = BuildXnnpack(interpreter, stretches[i].first, stretches[i].second, step_internal[i], pool_,
                                    alone || i + 1 < stretches.size(), error);
        if (step.xnnpack == nullptr) return nullptr;
      }
      run->steps().push_back(std::move(step));
    }
    return run;
  }

 private:
  pthreadpool_t pool_;
};

}  // namespace

std::unique_ptr<HostEngine> CreateXnnpackEngine(int num_threads) {
  static const xnn_status initialized = xnn_initialize(nullptr);  // thread-safe, once per process
  if (initialized != xnn_status_success) return nullptr;
  return std::make_unique<XnnpackEngine>(num_threads);
}

}  // namespace ops
}  // namespace kiln
