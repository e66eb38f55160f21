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
#include <cstring>
#include <limits>
#include <list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/builtin_ops.h"
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

// The checks every mapped node shares: float32 tensors of static shape, within XNNPACK's rank limit. Inputs
// listed in `constant_inputs` must be constants of the model.
bool CheckTensors(const Interpreter& interpreter, const Node& node, size_t float_inputs,
                  std::vector<size_t> constant_inputs, std::string* reason) {
  for (size_t i = 0; i < node.inputs.size() && i < float_inputs; ++i) {
    const int index = node.inputs[i];
    if (index < 0) continue;
    const KilnTensor* t = TensorAt(interpreter, index);
    const bool weights =
        std::find(constant_inputs.begin(), constant_inputs.end(), i) != constant_inputs.end();
    if (weights && IsQuantizedWeights(t)) continue;  // dequantized once, at build
    if (t->type != kKilnFloat32) {
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
    const KilnTensor* t = TensorAt(interpreter, index);
    if (t->type != kKilnFloat32 || t->allocation != kKilnArenaRw) {
      *reason = "output is " + std::string(KilnTypeGetName(t->type)) +
                (t->allocation != kKilnArenaRw ? " of dynamic shape" : "");
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

bool SupportsNode(const Interpreter& interpreter, const Node& node, std::string* reason) {
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
      if (p->filter_width * p->filter_height == 1 && (p->stride_width != 1 || p->stride_height != 1)) {
        *reason = "a 1x1 window with a stride above 1";
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
  XnnpackRun(xnn_runtime_t runtime, std::vector<int> externals, std::list<std::vector<float>> weights)
      : runtime_(runtime), externals_(std::move(externals)), weights_(std::move(weights)) {}
  ~XnnpackRun() override { xnn_delete_runtime(runtime_); }

  bool Bind(Interpreter* interpreter, std::string* error) override {
    std::vector<xnn_external_value> values;
    for (int t : externals_) values.push_back({static_cast<uint32_t>(t), interpreter->tensor(t)->data});
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

 private:
  xnn_runtime_t runtime_;
  std::vector<int> externals_;  // tensor indices, which are also their XNNPACK external ids
  std::list<std::vector<float>> weights_;
};

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
    if (IsQuantizedWeights(t)) {
      weights_.push_back(DequantizeWeights(t));
      data = weights_.back().data();
    }
    uint32_t external = XNN_INVALID_VALUE_ID;
    uint32_t flags = 0;
    if (data == nullptr && !internal_.count(index)) {
      external = static_cast<uint32_t>(index);
      flags = produced_.count(index) ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : XNN_VALUE_FLAG_EXTERNAL_INPUT;
      externals_.push_back(index);
    }
    const xnn_status status = xnn_define_tensor_value(subgraph_, xnn_datatype_fp32, dims.size(), dims.data(),
                                                      data, external, flags, id);
    if (status != xnn_status_success) {
      *error = "tensor " + std::to_string(index) + " ('" + t->name + "'): " + StatusName(status);
      return false;
    }
    ids_[index] = *id;
    return true;
  }

  // Outputs are marked before their node's inputs are defined, so a value knows which way it crosses.
  void Produces(const Node& node) { produced_.insert(node.outputs.begin(), node.outputs.end()); }

  bool Define(const Node& node, std::string* error);

  const std::vector<int>& externals() const { return externals_; }
  // The dequantized weights; XNNPACK reads them while it builds the runtime, and the run keeps them after.
  std::list<std::vector<float>> TakeWeights() { return std::move(weights_); }

 private:
  Interpreter* interpreter_;
  xnn_subgraph_t subgraph_;
  std::set<int> internal_;
  std::set<int> produced_;
  std::map<int, uint32_t> ids_;
  std::vector<int> externals_;
  std::list<std::vector<float>> weights_;  // a list: adding one never moves the others
};

bool SubgraphBuilder::Define(const Node& node, std::string* error) {
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
    if (!Value(node.inputs[i], &in[i], error)) return false;
  }
  const KilnTensor* input = interpreter_->tensor(node.inputs[0]);
  const KilnTensor* output = interpreter_->tensor(node.outputs[0]);
  float lo = -kInf, hi = kInf;
  xnn_status status = xnn_status_success;
  switch (node.desc->builtin_code) {
    case kKilnBuiltinConv2d: {
      const auto* p = ParamsOf<KilnConvParams>(node);
      ActivationRange(p->activation, &lo, &hi);
      const KilnTensor* filter = interpreter_->tensor(node.inputs[1]);
      status = xnn_define_convolution_2d(
          subgraph_, 0, 0, 0, 0, filter->dims[1], filter->dims[2], p->stride_height, p->stride_width,
          p->dilation_height_factor, p->dilation_width_factor, 1, filter->dims[3], filter->dims[0], lo, hi,
          in[0], in[1], node.inputs.size() > 2 ? in[2] : XNN_INVALID_VALUE_ID, out,
          p->padding == kKilnPaddingSame ? XNN_FLAG_TENSORFLOW_SAME_PADDING : 0);
      break;
    }
    case kKilnBuiltinDepthwiseConv2d: {
      const auto* p = ParamsOf<KilnDepthwiseConvParams>(node);
      ActivationRange(p->activation, &lo, &hi);
      const KilnTensor* filter = interpreter_->tensor(node.inputs[1]);
      const int channels = input->dims[3];
      status = xnn_define_depthwise_convolution_2d(
          subgraph_, 0, 0, 0, 0, filter->dims[1], filter->dims[2], p->stride_height, p->stride_width,
          p->dilation_height_factor, p->dilation_width_factor, filter->dims[3] / channels, channels, lo, hi,
          in[0], in[1], node.inputs.size() > 2 ? in[2] : XNN_INVALID_VALUE_ID, out,
          p->padding == kKilnPaddingSame ? XNN_FLAG_TENSORFLOW_SAME_PADDING : 0);
      break;
    }
    case kKilnBuiltinFullyConnected: {
      const auto* p = ParamsOf<KilnFullyConnectedParams>(node);
      ActivationRange(p->activation, &lo, &hi);
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
      ActivationRange(p->activation, &lo, &hi);
      const uint32_t flags = p->padding == kKilnPaddingSame ? XNN_FLAG_TENSORFLOW_SAME_PADDING : 0;
      if (p->filter_width * p->filter_height == 1) {
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
      ActivationRange(ParamsOf<KilnAddParams>(node)->activation, &lo, &hi);
      status = xnn_define_add2(subgraph_, lo, hi, in[0], in[1], out, 0);
      break;
    case kKilnBuiltinSub:
      ActivationRange(ParamsOf<KilnSubParams>(node)->activation, &lo, &hi);
      status = xnn_define_subtract(subgraph_, lo, hi, in[0], in[1], out, 0);
      break;
    case kKilnBuiltinMul:
      ActivationRange(ParamsOf<KilnMulParams>(node)->activation, &lo, &hi);
      status = xnn_define_multiply2(subgraph_, lo, hi, in[0], in[1], out, 0);
      break;
    case kKilnBuiltinDiv:
      ActivationRange(ParamsOf<KilnDivParams>(node)->activation, &lo, &hi);
      status = xnn_define_divide(subgraph_, lo, hi, in[0], in[1], out, 0);
      break;
    case kKilnBuiltinRelu:
      status = xnn_define_clamp(subgraph_, 0.0f, kInf, in[0], out, 0);
      break;
    case kKilnBuiltinRelu6:
      status = xnn_define_clamp(subgraph_, 0.0f, 6.0f, in[0], out, 0);
      break;
    case kKilnBuiltinReluN1To1:
      status = xnn_define_clamp(subgraph_, -1.0f, 1.0f, in[0], out, 0);
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
      if (output->dims.size() == 4) {
        status = xnn_define_global_average_pooling_2d(subgraph_, -kInf, kInf, in[0], out, 0);
        break;
      }
      // keep_dims false: pool into [N, 1, 1, C], then reshape to the output's [N, C].
      const size_t pooled_dims[4] = {static_cast<size_t>(input->dims[0]), 1, 1,
                                     static_cast<size_t>(input->dims[3])};
      uint32_t pooled = XNN_INVALID_VALUE_ID;
      status = xnn_define_tensor_value(subgraph_, xnn_datatype_fp32, 4, pooled_dims, nullptr,
                                       XNN_INVALID_VALUE_ID, 0, &pooled);
      if (status == xnn_status_success) {
        status = xnn_define_global_average_pooling_2d(subgraph_, -kInf, kInf, in[0], pooled, 0);
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

class XnnpackEngine : public HostEngine {
 public:
  explicit XnnpackEngine(int num_threads)
      : pool_(num_threads > 1 ? pthreadpool_create(static_cast<size_t>(num_threads)) : nullptr) {}
  ~XnnpackEngine() override {
    if (pool_ != nullptr) pthreadpool_destroy(pool_);
  }

  const char* name() const override { return "xnnpack"; }

  bool Supports(const Interpreter& interpreter, const Node& node, std::string* reason) const override {
    return SupportsNode(interpreter, node, reason);
  }

  std::unique_ptr<HostRun> Build(Interpreter* interpreter, int first, int last,
                                 const std::vector<int>& internal, std::string* error) override {
    xnn_subgraph_t subgraph = nullptr;
    xnn_status status = xnn_create_subgraph(static_cast<uint32_t>(interpreter->tensor_count()), 0, &subgraph);
    if (status != xnn_status_success) {
      *error = "xnn_create_subgraph: " + StatusName(status);
      return nullptr;
    }
    std::unique_ptr<xnn_subgraph, xnn_status (*)(xnn_subgraph_t)> owner(subgraph, xnn_delete_subgraph);
    SubgraphBuilder builder(interpreter, subgraph, internal);
    for (int n = first; n <= last; ++n) builder.Produces(interpreter->nodes()[n]);
    for (int n = first; n <= last; ++n) {
      if (interpreter->folded(n)) continue;  // computed at AllocateTensors: its output is a constant now
      if (!builder.Define(interpreter->nodes()[n], error)) return nullptr;
    }
    xnn_runtime_t runtime = nullptr;
    // When other nodes run between this run's invocations (the reference kernels, another run), the workers
    // go back to the scheduler after each one instead of spinning on cores that work needs.
    bool alone = true;
    for (int n = 0; n < static_cast<int>(interpreter->nodes().size()); ++n) {
      if ((n < first || n > last) && !interpreter->folded(n)) alone = false;
    }
    status = xnn_create_runtime_v2(subgraph, pool_, alone ? 0 : XNN_FLAG_YIELD_WORKERS, &runtime);
    if (status != xnn_status_success) {
      *error = "xnn_create_runtime_v2: " + StatusName(status);
      return nullptr;
    }
    return std::make_unique<XnnpackRun>(runtime, builder.externals(), builder.TakeWeights());
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
