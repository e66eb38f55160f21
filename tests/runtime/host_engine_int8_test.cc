// XNNPACK's int8 operators (the default path) against Kiln's int8 reference kernels (LiteRT's fixed-point
// arithmetic), one op per model over many shapes, scales and zero points: the node must run on XNNPACK, and
// every value must be within one quantization step of the reference (XNNPACK requantizes in float, LiteRT in
// fixed point, so a value that falls near a rounding boundary may land one step apart). The share of values
// one step off is printed per op.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"
#include "tests/test_util.h"

namespace kiln {
namespace {

struct Outcome {
  std::vector<int8_t> y;
  std::vector<std::string> nodes;  // node decisions
  std::string errors;
};

Outcome RunInt8(const std::vector<uint8_t>& bytes, const std::vector<std::vector<int8_t>>& inputs, bool reference) {
  Outcome r;
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, testing::CollectErrors, &r.errors);
  KilnInterpreterOptionsSetUseReferenceKernels(options, reference);
  KilnInterpreter* interpreter = model ? KilnInterpreterCreate(model, options) : nullptr;
  KilnInterpreterOptionsDelete(options);
  bool ok = interpreter != nullptr && KilnInterpreterAllocateTensors(interpreter) == kKilnOk;
  for (size_t i = 0; ok && i < inputs.size(); ++i) {
    ok = KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, static_cast<int>(i)),
                                  inputs[i].data(), inputs[i].size()) == kKilnOk;
  }
  if (ok && KilnInterpreterInvoke(interpreter) == kKilnOk) {
    const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
    const int8_t* data = static_cast<const int8_t*>(KilnTensorData(out));
    r.y.assign(data, data + KilnTensorByteSize(out));
    for (int i = 0; i < KilnInterpreterGetDecisionCount(interpreter); ++i) {
      KilnDecisionKind kind;
      const char* message = nullptr;
      KilnInterpreterGetDecision(interpreter, i, &kind, nullptr, &message);
      if (kind == kKilnDecisionNode) r.nodes.push_back(message);
    }
  }
  KilnInterpreterDelete(interpreter);
  KilnModelDelete(model);
  return r;
}

std::vector<int8_t> RandomInt8(size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

float LogUniform(std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(std::log(lo), std::log(hi));
  return std::exp(dist(rng));
}

// A zero point: the type's limits and zero as often as a random one.
int ZeroPoint(std::mt19937& rng) {
  const int pick = std::uniform_int_distribution<int>(0, 3)(rng);
  return pick == 0 ? -128 : pick == 1 ? 127 : pick == 2 ? 0 : std::uniform_int_distribution<int>(-128, 127)(rng);
}

// Tallies one op's cases: values compared, values one step off.
struct Tally {
  std::string op;
  size_t values = 0, one_off = 0;
  int cases = 0;
  ~Tally() {
    std::printf("%s: %d cases, %zu of %zu values one step from the reference kernels (%.2f%%), none further\n",
                op.c_str(), cases, one_off, values, values ? 100.0 * one_off / values : 0.0);
  }
};

// Runs `model` on both paths and checks the default one ran the model's only node on XNNPACK, within 1 step.
void ExpectWithinOneStep(const std::string& what, const std::vector<uint8_t>& model,
                         const std::vector<std::vector<int8_t>>& inputs, Tally* tally) {
  ASSERT_FALSE(model.empty()) << what;
  const Outcome reference = RunInt8(model, inputs, true);
  const Outcome fast = RunInt8(model, inputs, false);
  ASSERT_FALSE(reference.y.empty()) << what << ": the reference kernels did not run: " << reference.errors;
  ASSERT_EQ(fast.y.size(), reference.y.size()) << what << ": " << fast.errors;
  bool engine = true;  // a build without XNNPACK says so for every node
  for (const std::string& node : fast.nodes) {
    if (node.find("no host engine in this build") != std::string::npos) engine = false;
  }
  if (engine) {
    for (const std::string& node : fast.nodes) {
      // A fused activation that pins the output to (nearly) one value is the one refusal expected here.
      if (node.find("the fused activation leaves the int8 output fewer than two steps") != std::string::npos) continue;
      EXPECT_NE(node.find("xnnpack, in host run"), std::string::npos) << what << ": " << node;
    }
  }
  ++tally->cases;
  for (size_t i = 0; i < fast.y.size(); ++i) {
    const int diff = std::abs(fast.y[i] - reference.y[i]);
    ASSERT_LE(diff, 1) << what << ", element " << i << ": " << int{fast.y[i]} << " vs reference "
                       << int{reference.y[i]};
    tally->one_off += diff;
    ++tally->values;
  }
}

KilnFusedActivation Activation(std::mt19937& rng) {
  const KilnFusedActivation all[] = {kKilnActNone, kKilnActRelu, kKilnActRelu6, kKilnActReluN1To1};
  return all[std::uniform_int_distribution<int>(0, 3)(rng)];
}

// CONV_2D and DEPTHWISE_CONV_2D: filters per-channel or per-tensor, SAME and VALID, strides 1 and 2, fused
// activations, input zero points at the limits, requantization multipliers from 1e-3 to 0.9.
TEST(HostEngineInt8, ConvolutionsWithinOneStep) {
  std::mt19937 rng(20261203);
  Tally conv{"CONV_2D"}, depthwise{"DEPTHWISE_CONV_2D"};
  for (int c = 0; c < 48; ++c) {
    const bool is_depthwise = c % 2 == 1;
    const int h = std::uniform_int_distribution<int>(1, 12)(rng), w = std::uniform_int_distribution<int>(1, 12)(rng);
    const int in_c = std::uniform_int_distribution<int>(1, 9)(rng);
    const int multiplier = is_depthwise ? std::uniform_int_distribution<int>(1, 2)(rng) : 1;
    const int out_c = is_depthwise ? in_c * multiplier : std::uniform_int_distribution<int>(1, 17)(rng);
    const int k = std::uniform_int_distribution<int>(0, 1)(rng) ? 3 : 1;
    const int stride = std::uniform_int_distribution<int>(1, 2)(rng);
    const bool same = std::uniform_int_distribution<int>(0, 1)(rng);
    if (!same && (h < k || w < k)) continue;
    const int oh = same ? (h + stride - 1) / stride : (h - k) / stride + 1;
    const int ow = same ? (w + stride - 1) / stride : (w - k) / stride + 1;
    const bool per_channel = std::uniform_int_distribution<int>(0, 2)(rng) != 0;
    const float in_scale = LogUniform(rng, 1e-3f, 1.0f);
    const int in_zero = ZeroPoint(rng);
    std::vector<float> filter_scales(per_channel ? out_c : 1);
    for (float& s : filter_scales) s = LogUniform(rng, 1e-3f, 0.1f);
    const int depth = is_depthwise ? 1 : in_c;  // accumulated terms per output: k * k * depth
    // Output scale: multiplier in*filter/out between about 1e-3 and 0.9 of the accumulation's typical range.
    const float out_scale =
        in_scale * filter_scales[0] * std::sqrt(static_cast<float>(k * k * depth)) * LogUniform(rng, 2.0f, 1000.0f);
    const int out_zero = ZeroPoint(rng);

    ModelWriter m;
    const int x = m.AddTensor(kKilnInt8, {1, h, w, in_c}, "x");
    const std::vector<int> filter_shape =
        is_depthwise ? std::vector<int>{1, k, k, out_c} : std::vector<int>{out_c, k, k, in_c};
    std::vector<int8_t> filter = RandomInt8(k * k * in_c * out_c / (is_depthwise ? in_c : 1), rng);
    for (int8_t& f : filter) f = std::max<int8_t>(f, -127);  // LiteRT's int8 filters are [-127, 127]
    const int f = m.AddConstTensor(kKilnInt8, filter_shape, "filter", filter);
    std::vector<int32_t> bias(out_c);
    for (int32_t& b : bias) b = std::uniform_int_distribution<int32_t>(-20000, 20000)(rng);
    const int b = m.AddConstTensor(kKilnInt32, {out_c}, "bias", bias);
    const int y = m.AddTensor(kKilnInt8, {1, oh, ow, out_c}, "y");
    m.SetQuantization(x, {in_scale}, {in_zero});
    m.SetQuantization(f, filter_scales, std::vector<int64_t>(filter_scales.size(), 0), is_depthwise ? 3 : 0);
    std::vector<float> bias_scales;
    for (float s : filter_scales) bias_scales.push_back(in_scale * s);
    m.SetQuantization(b, bias_scales, std::vector<int64_t>(bias_scales.size(), 0), 0);
    m.SetQuantization(y, {out_scale}, {out_zero});
    const KilnPadding padding = same ? kKilnPaddingSame : kKilnPaddingValid;
    const KilnFusedActivation activation = Activation(rng);
    if (is_depthwise) {
      m.AddOp(kKilnBuiltinDepthwiseConv2d, {x, f, b}, {y},
              KilnDepthwiseConvParams{padding, stride, stride, multiplier, activation, 1, 1});
    } else {
      m.AddOp(kKilnBuiltinConv2d, {x, f, b}, {y}, KilnConvParams{padding, stride, stride, 1, 1, activation});
    }
    m.SetInputs({x});
    m.SetOutputs({y});
    const std::string what = std::string(is_depthwise ? "depthwise" : "conv") + " case " + std::to_string(c) +
                             " (" + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(in_c) +
                             " -> " + std::to_string(out_c) + ", k" + std::to_string(k) + ", s" +
                             std::to_string(stride) + (per_channel ? ", per-channel" : ", per-tensor") + ")";
    ExpectWithinOneStep(what, m.Finish(), {RandomInt8(h * w * in_c, rng)}, is_depthwise ? &depthwise : &conv);
  }
}

// FULLY_CONNECTED with per-tensor weights, batches of rows, with and without bias.
TEST(HostEngineInt8, FullyConnectedWithinOneStep) {
  std::mt19937 rng(7);
  Tally tally{"FULLY_CONNECTED"};
  for (int c = 0; c < 24; ++c) {
    const int batch = std::uniform_int_distribution<int>(1, 4)(rng);
    const int depth = std::uniform_int_distribution<int>(1, 70)(rng);
    const int units = std::uniform_int_distribution<int>(1, 33)(rng);
    const float in_scale = LogUniform(rng, 1e-3f, 1.0f), w_scale = LogUniform(rng, 1e-3f, 0.1f);
    const float out_scale = in_scale * w_scale * std::sqrt(static_cast<float>(depth)) * LogUniform(rng, 2.0f, 500.0f);
    ModelWriter m;
    const int x = m.AddTensor(kKilnInt8, {batch, depth}, "x");
    std::vector<int8_t> weights = RandomInt8(units * depth, rng);
    for (int8_t& v : weights) v = std::max<int8_t>(v, -127);
    const int wt = m.AddConstTensor(kKilnInt8, {units, depth}, "weights", weights);
    std::vector<int32_t> bias(units);
    for (int32_t& b : bias) b = std::uniform_int_distribution<int32_t>(-5000, 5000)(rng);
    const bool with_bias = c % 3 != 0;
    const int b = with_bias ? m.AddConstTensor(kKilnInt32, {units}, "bias", bias) : -1;
    const int y = m.AddTensor(kKilnInt8, {batch, units}, "y");
    m.SetQuantization(x, {in_scale}, {ZeroPoint(rng)});
    m.SetQuantization(wt, {w_scale}, {0});
    if (with_bias) m.SetQuantization(b, {in_scale * w_scale}, {0});
    m.SetQuantization(y, {out_scale}, {ZeroPoint(rng)});
    KilnFullyConnectedParams params = {};
    params.activation = Activation(rng);
    m.AddOp(kKilnBuiltinFullyConnected, {x, wt, b}, {y}, params);
    m.SetInputs({x});
    m.SetOutputs({y});
    ExpectWithinOneStep("fully connected case " + std::to_string(c), m.Finish(), {RandomInt8(batch * depth, rng)},
                        &tally);
  }
}

// ADD, SUB and MUL with and without broadcasting (a per-channel operand), inputs of different scales and zero
// points, fused activations.
TEST(HostEngineInt8, BinaryOpsWithinOneStep) {
  std::mt19937 rng(11);
  Tally add{"ADD"}, sub{"SUB"}, mul{"MUL"};
  for (int c = 0; c < 48; ++c) {
    const KilnBuiltinOperator code = c % 3 == 0 ? kKilnBuiltinAdd : c % 3 == 1 ? kKilnBuiltinSub : kKilnBuiltinMul;
    const int h = std::uniform_int_distribution<int>(1, 9)(rng), ch = std::uniform_int_distribution<int>(1, 16)(rng);
    const bool broadcast = c % 2 == 1;
    const std::vector<int> a_shape = {1, h, h, ch};
    const std::vector<int> b_shape = broadcast ? std::vector<int>{1, 1, 1, ch} : a_shape;
    const float a_scale = LogUniform(rng, 1e-2f, 1.0f), b_scale = a_scale * LogUniform(rng, 0.1f, 10.0f);
    // MUL's output spans the product's range: about 128 * 128 steps of a_scale * b_scale.
    const float out_scale = code == kKilnBuiltinMul ? a_scale * b_scale * LogUniform(rng, 16.0f, 256.0f)
                                                    : std::max(a_scale, b_scale) * LogUniform(rng, 1.0f, 4.0f);
    ModelWriter m;
    const int a = m.AddTensor(kKilnInt8, a_shape, "a");
    const int b = m.AddTensor(kKilnInt8, b_shape, "b");
    const int y = m.AddTensor(kKilnInt8, a_shape, "y");
    m.SetQuantization(a, {a_scale}, {ZeroPoint(rng)});
    m.SetQuantization(b, {b_scale}, {ZeroPoint(rng)});
    m.SetQuantization(y, {out_scale}, {ZeroPoint(rng)});
    if (code == kKilnBuiltinMul) {
      m.AddOp(code, {a, b}, {y}, KilnMulParams{Activation(rng)});
    } else {
      m.AddOp(code, {a, b}, {y}, KilnAddParams{Activation(rng), false});
    }
    m.SetInputs({a, b});
    m.SetOutputs({y});
    Tally* tally = code == kKilnBuiltinAdd ? &add : code == kKilnBuiltinSub ? &sub : &mul;
    ExpectWithinOneStep(std::string(KilnBuiltinOperatorGetName(code)) + " case " + std::to_string(c), m.Finish(),
                        {RandomInt8(h * h * ch, rng), RandomInt8(broadcast ? ch : h * h * ch, rng)}, tally);
  }
}

// RELU, RELU6 and RELU_N1_TO_1 with the input's quantization (XNNPACK's clamps keep it).
TEST(HostEngineInt8, ClampsWithinOneStep) {
  std::mt19937 rng(19);
  Tally tally{"RELU, RELU6, RELU_N1_TO_1"};
  const KilnBuiltinOperator codes[] = {kKilnBuiltinRelu, kKilnBuiltinRelu6, kKilnBuiltinReluN1To1};
  for (int c = 0; c < 18; ++c) {
    const int n = std::uniform_int_distribution<int>(1, 300)(rng);
    const float scale = LogUniform(rng, 1e-3f, 0.2f);
    const int zero = ZeroPoint(rng);
    ModelWriter m;
    const int x = m.AddTensor(kKilnInt8, {n}, "x");
    const int y = m.AddTensor(kKilnInt8, {n}, "y");
    m.SetQuantization(x, {scale}, {zero});
    m.SetQuantization(y, {scale}, {zero});
    m.AddOp(codes[c % 3], {x}, {y});
    m.SetInputs({x});
    m.SetOutputs({y});
    ExpectWithinOneStep("clamp case " + std::to_string(c), m.Finish(), {RandomInt8(n, rng)}, &tally);
  }
}

// LOGISTIC (into LiteRT's fixed output quantization) and ELU over every int8 input value, with input scales
// that reach their curves' bends and flat ends.
TEST(HostEngineInt8, LogisticAndEluWithinOneStep) {
  std::mt19937 rng(23);
  Tally logistic{"LOGISTIC"}, elu{"ELU"};
  std::vector<int8_t> every(256);
  for (int v = -128; v < 128; ++v) every[v + 128] = static_cast<int8_t>(v);
  for (int c = 0; c < 16; ++c) {
    const bool is_logistic = c % 2 == 0;
    const float scale = LogUniform(rng, 1e-3f, 0.5f);
    ModelWriter m;
    const int x = m.AddTensor(kKilnInt8, {256}, "x");
    const int y = m.AddTensor(kKilnInt8, {256}, "y");
    m.SetQuantization(x, {scale}, {ZeroPoint(rng)});
    if (is_logistic) {
      m.SetQuantization(y, {1.0f / 256}, {-128});
    } else {
      m.SetQuantization(y, {scale * LogUniform(rng, 0.5f, 2.0f)}, {ZeroPoint(rng)});
    }
    m.AddOp(is_logistic ? kKilnBuiltinLogistic : kKilnBuiltinElu, {x}, {y});
    m.SetInputs({x});
    m.SetOutputs({y});
    ExpectWithinOneStep(std::string(is_logistic ? "logistic" : "elu") + " case " + std::to_string(c), m.Finish(),
                        {every}, is_logistic ? &logistic : &elu);
  }
}

// MAX_POOL_2D (XNNPACK keeps the input's quantization, as LiteRT requires) and MEAN over height and width
// (XNNPACK's global average pooling) with keep_dims, the form the int8 reference kernel has.
TEST(HostEngineInt8, PoolingWithinOneStep) {
  std::mt19937 rng(13);
  Tally max_pool{"MAX_POOL_2D"}, mean{"MEAN"};
  for (int c = 0; c < 24; ++c) {
    const int h = std::uniform_int_distribution<int>(2, 15)(rng), ch = std::uniform_int_distribution<int>(1, 24)(rng);
    const float scale = LogUniform(rng, 1e-3f, 1.0f);
    const int zero = ZeroPoint(rng);
    ModelWriter m;
    const int x = m.AddTensor(kKilnInt8, {1, h, h, ch}, "x");
    m.SetQuantization(x, {scale}, {zero});
    if (c % 2 == 0) {
      const bool same = c % 4 == 0;
      const int o = same ? (h + 1) / 2 : (h - 2) / 2 + 1;
      const int y = m.AddTensor(kKilnInt8, {1, o, o, ch}, "y");
      m.SetQuantization(y, {scale}, {zero});
      m.AddOp(kKilnBuiltinMaxPool2d, {x}, {y},
              KilnPoolParams{same ? kKilnPaddingSame : kKilnPaddingValid, 2, 2, 2, 2, kKilnActNone});
      m.SetInputs({x});
      m.SetOutputs({y});
      ExpectWithinOneStep("max pool case " + std::to_string(c), m.Finish(), {RandomInt8(h * h * ch, rng)},
                          &max_pool);
    } else {
      const bool keep_dims = true;  // the int8 reference MEAN has only keep_dims (docs/ops.md)
      const int axes = m.AddConstTensor<int32_t>(kKilnInt32, {2}, "axes", {1, 2});
      const int y = m.AddTensor(kKilnInt8, keep_dims ? std::vector<int>{1, 1, 1, ch} : std::vector<int>{1, ch}, "y");
      m.SetQuantization(y, {scale * LogUniform(rng, 0.5f, 2.0f)}, {ZeroPoint(rng)});
      m.AddOp(kKilnBuiltinMean, {x, axes}, {y}, KilnReducerParams{keep_dims});
      m.SetInputs({x});
      m.SetOutputs({y});
      ExpectWithinOneStep("mean case " + std::to_string(c), m.Finish(), {RandomInt8(h * h * ch, rng)}, &mean);
    }
  }
}

// PAD (height and width, asymmetric) feeding a VALID convolution: the engine folds the PAD into the
// convolution's own padding, which pads with the input's zero point as PAD does. Also a PAD whose output is a
// model output too, which stays a PAD.
TEST(HostEngineInt8, PadFoldedIntoConvolutionWithinOneStep) {
  std::mt19937 rng(17);
  Tally tally{"PAD + convolution"};
  for (int c = 0; c < 16; ++c) {
    const bool is_depthwise = c % 2 == 1, pad_is_output = c % 4 == 3;
    const int h = std::uniform_int_distribution<int>(2, 9)(rng), ch = std::uniform_int_distribution<int>(1, 6)(rng);
    const int top = c % 3, bottom = (c + 1) % 3, left = (c + 2) % 2, right = 1;
    const int ph = h + top + bottom, pw = h + left + right;
    const float in_scale = LogUniform(rng, 1e-2f, 1.0f), f_scale = LogUniform(rng, 1e-2f, 0.1f);
    const int in_zero = ZeroPoint(rng);
    ModelWriter m;
    const int x = m.AddTensor(kKilnInt8, {1, h, h, ch}, "x");
    const int paddings = m.AddConstTensor<int32_t>(kKilnInt32, {4, 2}, "paddings",
                                                   {0, 0, top, bottom, left, right, 0, 0});
    const int padded = m.AddTensor(kKilnInt8, {1, ph, pw, ch}, "padded");
    const int out_c = is_depthwise ? ch : 5;
    std::vector<int8_t> filter = RandomInt8(9 * ch * out_c / (is_depthwise ? ch : 1), rng);
    for (int8_t& f : filter) f = std::max<int8_t>(f, -127);
    const int f = m.AddConstTensor(kKilnInt8, is_depthwise ? std::vector<int>{1, 3, 3, ch} : std::vector<int>{out_c, 3, 3, ch},
                                   "filter", filter);
    const int y = m.AddTensor(kKilnInt8, {1, ph - 2, pw - 2, out_c}, "y");
    m.SetQuantization(x, {in_scale}, {in_zero});
    m.SetQuantization(padded, {in_scale}, {in_zero});
    m.SetQuantization(f, {f_scale}, {0});
    m.SetQuantization(y, {in_scale * f_scale * LogUniform(rng, 5.0f, 100.0f)}, {ZeroPoint(rng)});
    m.AddOp(kKilnBuiltinPad, {x, paddings}, {padded});
    if (is_depthwise) {
      m.AddOp(kKilnBuiltinDepthwiseConv2d, {padded, f, -1}, {y},
              KilnDepthwiseConvParams{kKilnPaddingValid, 1, 1, 1, kKilnActNone, 1, 1});
    } else {
      m.AddOp(kKilnBuiltinConv2d, {padded, f, -1}, {y}, KilnConvParams{kKilnPaddingValid, 1, 1, 1, 1, kKilnActNone});
    }
    m.SetInputs({x});
    m.SetOutputs(pad_is_output ? std::vector<int>{y, padded} : std::vector<int>{y});
    ExpectWithinOneStep("pad case " + std::to_string(c), m.Finish(), {RandomInt8(h * h * ch, rng)}, &tally);
  }
}

// Whether the fast path runs int8 1x1 convolutions on Kiln's own VNNI GEMM here (ops/simd/int8_gemm.h): a CPU
// with AVX-512 VNNI, and KILN_DISABLE_VNNI not set.
bool VnniExpected() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  const char* disable = std::getenv("KILN_DISABLE_VNNI");
  if (disable != nullptr && disable[0] != '\0' && disable[0] != '0') return false;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

// The filter, stride, dilation and padding of a test CONV_2D (padding -1: SAME or VALID at random).
struct Geometry {
  int kernel_h = 1, kernel_w = 1, stride = 1, dilation = 1, padding = -1;
};

// An int8 CONV_2D of x [batch, h, w, in_c] into out_c channels, added to `m` (a pointwise one by default: 1x1,
// stride 1). *out_dims, when given, receives the output's shape.
int AddConv(ModelWriter& m, std::mt19937& rng, int x, const std::vector<int>& x_dims, float in_scale, int out_c,
            bool per_channel, KilnFusedActivation activation, float* out_scale, const std::string& name,
            int* out_zero = nullptr, Geometry geometry = {}, std::vector<int>* out_dims = nullptr) {
  const int in_c = x_dims[3];
  const int taps = geometry.kernel_h * geometry.kernel_w;
  std::vector<int8_t> filter = RandomInt8(static_cast<size_t>(taps * in_c * out_c), rng);
  for (int8_t& f : filter) f = std::max<int8_t>(f, -127);
  const int f = m.AddConstTensor(kKilnInt8, {out_c, geometry.kernel_h, geometry.kernel_w, in_c}, name + "_filter",
                                 filter);
  std::vector<float> filter_scales(per_channel ? out_c : 1);
  for (float& s : filter_scales) s = LogUniform(rng, 1e-3f, 0.1f);
  std::vector<int32_t> bias(static_cast<size_t>(out_c));
  for (int32_t& b : bias) b = std::uniform_int_distribution<int32_t>(-20000, 20000)(rng);
  const int b = m.AddConstTensor(kKilnInt32, {out_c}, name + "_bias", bias);
  *out_scale =
      in_scale * filter_scales[0] * std::sqrt(static_cast<float>(taps * in_c)) * LogUniform(rng, 2.0f, 300.0f);
  const KilnPadding padding = geometry.padding >= 0 ? static_cast<KilnPadding>(geometry.padding)
                              : std::uniform_int_distribution<int>(0, 1)(rng) ? kKilnPaddingSame
                                                                              : kKilnPaddingValid;
  auto side = [&](int in, int kernel) {
    const int extent = (kernel - 1) * geometry.dilation + 1;
    return padding == kKilnPaddingSame ? (in + geometry.stride - 1) / geometry.stride
                                       : (in - extent) / geometry.stride + 1;
  };
  const std::vector<int> y_dims = {x_dims[0], side(x_dims[1], geometry.kernel_h), side(x_dims[2], geometry.kernel_w),
                                   out_c};
  if (out_dims != nullptr) *out_dims = y_dims;
  const int y = m.AddTensor(kKilnInt8, y_dims, name);
  m.SetQuantization(f, filter_scales, std::vector<int64_t>(filter_scales.size(), 0), 0);
  std::vector<float> bias_scales;
  for (float s : filter_scales) bias_scales.push_back(in_scale * s);
  m.SetQuantization(b, bias_scales, std::vector<int64_t>(bias_scales.size(), 0), 0);
  const int zero = ZeroPoint(rng);
  if (out_zero != nullptr) *out_zero = zero;
  m.SetQuantization(y, {*out_scale}, {zero});
  m.AddOp(kKilnBuiltinConv2d, {x, f, b}, {y},
          KilnConvParams{padding, geometry.stride, geometry.stride, geometry.dilation, geometry.dilation, activation});
  return y;
}

int AddPointwise(ModelWriter& m, std::mt19937& rng, int x, const std::vector<int>& x_dims, float in_scale, int out_c,
                 bool per_channel, KilnFusedActivation activation, float* out_scale, const std::string& name,
                 int* out_zero = nullptr) {
  return AddConv(m, rng, x, x_dims, in_scale, out_c, per_channel, activation, out_scale, name, out_zero);
}

// A model of one int8 CONV_2D (AddConv, a random fused activation) of x `dims` into out_c channels, and a random
// input for it in *input.
std::vector<uint8_t> OneConvModel(std::mt19937& rng, const std::vector<int>& dims, int out_c, bool per_channel,
                                  Geometry geometry, std::vector<int8_t>* input) {
  const float in_scale = LogUniform(rng, 1e-3f, 1.0f);
  ModelWriter m;
  const int x = m.AddTensor(kKilnInt8, dims, "x");
  m.SetQuantization(x, {in_scale}, {ZeroPoint(rng)});
  float out_scale = 0.0f;
  const int y =
      AddConv(m, rng, x, dims, in_scale, out_c, per_channel, Activation(rng), &out_scale, "y", nullptr, geometry);
  m.SetInputs({x});
  m.SetOutputs({y});
  *input = RandomInt8(static_cast<size_t>(dims[0]) * dims[1] * dims[2] * dims[3], rng);
  return m.Finish();
}

// Runs `model` on both paths: every node named in `vnni_nodes` must say it ran on Kiln's VNNI kernel (where the
// CPU has it), and the outputs must be equal byte for byte (`exact`) or within one step.
void ExpectVnni(const std::string& what, const std::vector<uint8_t>& model, const std::vector<int8_t>& input,
                const std::vector<int>& vnni_nodes, bool exact) {
  const Outcome reference = RunInt8(model, {input}, true);
  const Outcome fast = RunInt8(model, {input}, false);
  ASSERT_FALSE(reference.y.empty()) << what << ": " << reference.errors;
  ASSERT_EQ(fast.y.size(), reference.y.size()) << what << ": " << fast.errors;
  for (int n : vnni_nodes) {
    ASSERT_LT(static_cast<size_t>(n), fast.nodes.size()) << what;
    // As XNNPACK, the VNNI path refuses a fused activation that pins the output to (nearly) one value.
    if (fast.nodes[n].find("the fused activation leaves the int8 output fewer than two steps") != std::string::npos) {
      continue;
    }
    EXPECT_NE(fast.nodes[n].find("xnnpack, in host run 0, on kiln-vnni int8 gemm"), std::string::npos)
        << what << ": " << fast.nodes[n];
  }
  for (size_t i = 0; i < fast.y.size(); ++i) {
    const int diff = std::abs(fast.y[i] - reference.y[i]);
    ASSERT_LE(diff, exact ? 0 : 1) << what << ", element " << i << ": " << int{fast.y[i]} << " vs reference "
                                   << int{reference.y[i]};
  }
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

// Pointwise convolutions run on Kiln's VNNI GEMM where the CPU has VNNI: by default with XNNPACK's float
// requantization (within one step of the reference kernels; the kernel test holds it byte for byte to XNNPACK's
// own convolution), and with KILN_VNNI_EXACT=1 equal to the reference kernels byte for byte. Batches, channel
// counts on and off the kernel's blocks, per-tensor and per-channel filters, fused activations, zero points at
// the limits.
TEST(HostEngineInt8, PointwiseConvolutionsOnVnni) {
  if (!VnniExpected()) GTEST_SKIP() << "this CPU has no AVX-512 VNNI (or KILN_DISABLE_VNNI is set)";
  for (bool exact : {false, true}) {
  ScopedEnv env("KILN_VNNI_EXACT", exact ? "1" : "0");
  std::mt19937 rng(20261204);
  for (int c = 0; c < 40; ++c) {
    const int batch = std::uniform_int_distribution<int>(1, 3)(rng);
    const int h = std::uniform_int_distribution<int>(1, 13)(rng), w = std::uniform_int_distribution<int>(1, 9)(rng);
    const int in_c = c == 0 ? 1 : std::uniform_int_distribution<int>(1, 70)(rng);
    const int out_c = std::uniform_int_distribution<int>(1, 50)(rng);
    std::vector<int8_t> input;
    const std::vector<uint8_t> model = OneConvModel(rng, {batch, h, w, in_c}, out_c, c % 3 != 0, {}, &input);
    ExpectVnni(std::string(exact ? "exact" : "default") + " pointwise case " + std::to_string(c), model, input, {0},
               exact);
  }
  }
}

// Convolutions of other filters, strides, dilations and paddings over one or two input channels run on the same
// VNNI GEMM over each pixel's gathered taps (mt_kws_dscnn_int8's 10x4 first layer of stride 2 among them): within
// one step of the reference kernels by default, equal to them byte for byte with KILN_VNNI_EXACT=1. Over more
// channels they stay on XNNPACK (faster there), still within one step.
TEST(HostEngineInt8, ConvolutionsOnVnniGatherTheirTaps) {
  if (!VnniExpected()) GTEST_SKIP() << "this CPU has no AVX-512 VNNI (or KILN_DISABLE_VNNI is set)";
  const std::vector<Geometry> geometries = {{10, 4, 2, 1, kKilnPaddingSame}, {3, 3, 2, 1, kKilnPaddingSame},
                                            {3, 3, 1, 1, kKilnPaddingValid}, {1, 1, 2, 1, kKilnPaddingSame},
                                            {3, 3, 1, 2, kKilnPaddingSame},  {5, 2, 3, 1, -1}};
  for (bool exact : {false, true}) {
    ScopedEnv env("KILN_VNNI_EXACT", exact ? "1" : "0");
    std::mt19937 rng(20261207);
    for (int c = 0; c < 24; ++c) {
      const Geometry g = geometries[static_cast<size_t>(c) % geometries.size()];
      const int batch = std::uniform_int_distribution<int>(1, 2)(rng);
      const int h = std::uniform_int_distribution<int>(10, 20)(rng), w = std::uniform_int_distribution<int>(6, 12)(rng);
      const bool gathered = c % 3 != 2;
      const int in_c = gathered ? 1 + c % 2 : std::uniform_int_distribution<int>(3, 40)(rng);
      const int out_c = std::uniform_int_distribution<int>(1, 70)(rng);
      std::vector<int8_t> input;
      const std::vector<uint8_t> model = OneConvModel(rng, {batch, h, w, in_c}, out_c, c % 3 != 0, g, &input);
      const std::string what = std::string(exact ? "exact" : "default") + " convolution case " + std::to_string(c);
      if (gathered) {
        ExpectVnni(what, model, input, {0}, exact);
        continue;
      }
      ExpectVnni(what, model, input, {}, false);
      const Outcome fast = RunInt8(model, {input}, false);
      ASSERT_FALSE(fast.nodes.empty()) << what;
      EXPECT_EQ(fast.nodes[0].find("kiln-vnni"), std::string::npos) << what << ": " << fast.nodes[0];
    }
  }
}

// A host run that mixes the two kernels: pointwise convolutions on VNNI, the nodes between them on XNNPACK, with
// tensors passing from one to the other inside the run (memory of the run's own) and a graph input read by two
// VNNI nodes. With KILN_VNNI_EXACT=1, and MAX_POOL_2D exact on XNNPACK, the whole run equals the reference; ADD
// may be one step off.
TEST(HostEngineInt8, VnniAndXnnpackStepsInOneRun) {
  if (!VnniExpected()) GTEST_SKIP() << "this CPU has no AVX-512 VNNI (or KILN_DISABLE_VNNI is set)";
  ScopedEnv env("KILN_VNNI_EXACT", "1");
  std::mt19937 rng(5);
  for (int c = 0; c < 12; ++c) {
    const int h = std::uniform_int_distribution<int>(2, 12)(rng), in_c = std::uniform_int_distribution<int>(1, 40)(rng);
    const int mid = std::uniform_int_distribution<int>(1, 40)(rng), out_c = std::uniform_int_distribution<int>(1, 40)(rng);
    const bool with_add = c % 2 == 1;
    const float in_scale = LogUniform(rng, 1e-2f, 1.0f);
    ModelWriter m;
    const std::vector<int> dims = {1, h, h, in_c};
    const int x = m.AddTensor(kKilnInt8, dims, "x");
    m.SetQuantization(x, {in_scale}, {ZeroPoint(rng)});
    float s1 = 0.0f, s3 = 0.0f;
    int z1 = 0;
    const int y1 = AddPointwise(m, rng, x, dims, in_scale, mid, true, kKilnActRelu, &s1, "y1", &z1);  // node 0
    // y2 = MAX_POOL_2D(y1), same quantization (node 1, on XNNPACK).
    const int y2 = m.AddTensor(kKilnInt8, {1, h, h, mid}, "y2");
    m.SetQuantization(y2, {s1}, {z1});
    m.AddOp(kKilnBuiltinMaxPool2d, {y1}, {y2}, KilnPoolParams{kKilnPaddingSame, 1, 1, 2, 2, kKilnActNone});
    const int y3 = AddPointwise(m, rng, y2, {1, h, h, mid}, s1, out_c, false, kKilnActNone, &s3, "y3");  // node 2
    int out = y3;
    std::vector<int> vnni = {0, 2};
    if (with_add) {
      float s4 = 0.0f;
      const int y4 = AddPointwise(m, rng, x, dims, in_scale, out_c, true, kKilnActNone, &s4, "y4");  // node 3
      out = m.AddTensor(kKilnInt8, {1, h, h, out_c}, "sum");
      m.SetQuantization(out, {std::sqrt(s3 * s4) * 2.0f}, {ZeroPoint(rng)});  // within XNNPACK's add ratios
      m.AddOp(kKilnBuiltinAdd, {y3, y4}, {out}, KilnAddParams{kKilnActNone, false});
      vnni.push_back(3);
    }
    m.SetInputs({x});
    m.SetOutputs({out});
    ExpectVnni("mixed case " + std::to_string(c), m.Finish(), RandomInt8(h * h * in_c, rng), vnni, !with_add);
  }
}

// A node XNNPACK has no int8 form of runs on its reference kernel, and the decision says why.
TEST(HostEngineInt8, UnmappedInt8NodesSayWhy) {
  ModelWriter m;
  const int x = m.AddTensor(kKilnInt8, {2, 10}, "x");
  const int y = m.AddTensor(kKilnInt8, {2, 10}, "y");
  m.SetQuantization(x, {0.1f}, {3});
  m.SetQuantization(y, {1.0f / 256}, {-128});
  m.AddOp(kKilnBuiltinSoftmax, {x}, {y}, KilnSoftmaxParams{1.0f});
  m.SetInputs({x});
  m.SetOutputs({y});
  std::mt19937 rng(3);
  const Outcome fast = RunInt8(m.Finish(), {RandomInt8(20, rng)}, false);
  ASSERT_EQ(fast.nodes.size(), 1u) << fast.errors;
  if (fast.nodes[0].find("no host engine in this build") == std::string::npos) {
    EXPECT_NE(fast.nodes[0].find("reference kernel (xnnpack: XNNPACK here has no int8 SOFTMAX)"), std::string::npos)
        << fast.nodes[0];
  }
}

}  // namespace
}  // namespace kiln
