// examples/selfie_segmentation: MediaPipe's Convolution2DTransposeBias served by the kilnc kernel
// conv_transpose_bias, checked against a transposed convolution written here, on the CPU driver and on
// Vulkan, alone (the model's real weights and options, random activations; other shapes and paddings) and
// inside mp_selfie_segmentation.tflite.
//
// Bound: an output element is bias + a sum of n - 1 products. Whatever order the kernel sums them in, fused
// or not, its float result lies within gamma_n * (|bias| + sum |products|) of the exact sum, gamma_n = n u /
// (1 - n u), u = 2^-24 (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1). The reference is
// computed in double. That bound holds on both drivers (Vulkan's float multiply and add are correctly
// rounded); the whole model adds its LOGISTIC, which shrinks a difference by 4 and rounds once more.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "conv_transpose_bias_op.h"
#include "kiln/c_api.h"
#include "kiln/c_api_opaque.h"
#include "kiln/compute.h"
#include "kiln/device.h"
#include "kiln/operator.h"
#include "ops/reference/dequantize.h"
#include "runtime/model/model.h"
#include "runtime/model/model_writer.h"
#include "tests/test_util.h"
#include "tests/vulkan_probe.h"

namespace kiln {
namespace {

const char kModel[] = "mp_selfie_segmentation.tflite";
const char kOpName[] = "Convolution2DTransposeBias";

std::string KmodPath() { return std::string(KILN_SELFIE_KMOD_DIR) + "/conv_transpose_bias.kmod"; }

// --- The reference: a plain scatter over the input, MediaPipe's definition of the op ---

struct Conv {
  std::vector<int> in_shape;  // [batch, height, width, in_channels]
  std::vector<float> input;
  std::vector<int> w_shape;  // [out_channels, kernel_height, kernel_width, in_channels]
  std::vector<float> weights;
  std::vector<float> bias;  // [out_channels]
  int padding = 1;          // 1 SAME, 2 VALID
  int stride_w = 1, stride_h = 1;

  std::vector<uint8_t> Options() const {
    std::vector<uint8_t> bytes(12);
    const int32_t v[3] = {padding, stride_w, stride_h};
    for (int i = 0; i < 3; ++i) {
      for (int b = 0; b < 4; ++b)
        bytes[i * 4 + b] = static_cast<uint8_t>(static_cast<uint32_t>(v[i]) >> (8 * b));
    }
    return bytes;
  }
};

struct Reference {
  std::vector<int> shape;         // the output's
  std::vector<double> sum;        // exact enough: double
  std::vector<double> bound;      // gamma_n * (|bias| + sum |products|), per element
  std::vector<double> magnitude;  // |bias| + sum |products|
};

Reference TransposedConvolution(const Conv& c) {
  const int batch = c.in_shape[0], ih = c.in_shape[1], iw = c.in_shape[2], ic = c.in_shape[3];
  const int oc = c.w_shape[0], kh = c.w_shape[1], kw = c.w_shape[2];
  // MediaPipe's Prepare: SAME pads max(0, k - (in - 1) % stride - 1) in all, the smaller half first.
  const int pad_h = c.padding == 1 ? std::max(0, kh - (ih - 1) % c.stride_h - 1) : 0;
  const int pad_w = c.padding == 1 ? std::max(0, kw - (iw - 1) % c.stride_w - 1) : 0;
  const int oh = c.stride_h * (ih - 1) + kh - pad_h, ow = c.stride_w * (iw - 1) + kw - pad_w;
  Reference r;
  r.shape = {batch, oh, ow, oc};
  const size_t count = static_cast<size_t>(batch) * oh * ow * oc;
  r.sum.assign(count, 0.0);
  std::vector<double> magnitude(count, 0.0);
  std::vector<int> terms(count, 1);
  for (int b = 0; b < batch; ++b) {
    for (int y = 0; y < oh; ++y) {
      for (int x = 0; x < ow; ++x) {
        for (int o = 0; o < oc; ++o) {
          const size_t at = ((static_cast<size_t>(b) * oh + y) * ow + x) * oc + o;
          r.sum[at] = c.bias[o];
          magnitude[at] = std::fabs(c.bias[o]);
        }
      }
    }
    for (int y = 0; y < ih; ++y) {
      for (int x = 0; x < iw; ++x) {
        for (int i = 0; i < ic; ++i) {
          const double v = c.input[((static_cast<size_t>(b) * ih + y) * iw + x) * ic + i];
          for (int fy = 0; fy < kh; ++fy) {
            for (int fx = 0; fx < kw; ++fx) {
              const int oy = y * c.stride_h - pad_h / 2 + fy, ox = x * c.stride_w - pad_w / 2 + fx;
              if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
              for (int o = 0; o < oc; ++o) {
                const double p = v * c.weights[((static_cast<size_t>(o) * kh + fy) * kw + fx) * ic + i];
                const size_t at = ((static_cast<size_t>(b) * oh + oy) * ow + ox) * oc + o;
                r.sum[at] += p;
                magnitude[at] += std::fabs(p);
                terms[at] += 1;
              }
            }
          }
        }
      }
    }
  }
  const double u = std::ldexp(1.0, -24);
  r.bound.resize(count);
  for (size_t k = 0; k < count; ++k) r.bound[k] = terms[k] * u / (1 - terms[k] * u) * magnitude[k];
  r.magnitude = std::move(magnitude);
  return r;
}

// --- Running the op ---

struct OpRun {
  std::vector<int> shape;
  std::vector<float> y;
  std::string decisions;
  std::string errors;
  double ms = 0;  // per Invoke, after the first
};

// Runs `model_bytes` with `op`; the inputs are `inputs` in order. `gpu`: the GPU policy on the Vulkan driver.
OpRun RunModel(const std::vector<uint8_t>& model_bytes, KilnOperator* op,
               const std::vector<std::vector<float>>& inputs, bool gpu, int timed_runs = 0) {
  OpRun run;
  KilnModel* model = KilnModelCreate(model_bytes.data(), model_bytes.size());
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, testing::CollectErrors, &run.errors);
  KilnInterpreterOptionsAddOperator(options, op);
  KilnInterpreterOptionsSetNumThreads(options, 2);
  KilnInterpreterOptionsSetDevicePolicy(options, gpu ? kKilnDevicePreferGpu : kKilnDeviceCpuOnly);
  if (gpu) KilnInterpreterOptionsSetDriverPath(options, KILN_VULKAN_DRIVER);
  KilnInterpreter* interpreter = model ? KilnInterpreterCreate(model, options) : nullptr;
  KilnInterpreterOptionsDelete(options);
  KilnModelDelete(model);
  bool ok = interpreter != nullptr && KilnInterpreterAllocateTensors(interpreter) == kKilnOk;
  // The inputs are written before every Invoke (they also survive one; interpreter_test checks that).
  auto invoke = [&]() {
    for (size_t i = 0; ok && i < inputs.size(); ++i) {
      ok = KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, static_cast<int32_t>(i)),
                                    inputs[i].data(), inputs[i].size() * sizeof(float)) == kKilnOk;
    }
    ok = ok && KilnInterpreterInvoke(interpreter) == kKilnOk;
  };
  invoke();
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; ok && r < timed_runs; ++r) invoke();
  if (timed_runs > 0) {
    run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
             timed_runs;
  }
  if (ok) {
    const KilnTensor* out = KilnInterpreterGetOutputTensor(interpreter, 0);
    for (int d = 0; d < KilnTensorNumDims(out); ++d) run.shape.push_back(KilnTensorDim(out, d));
    run.y.resize(KilnTensorByteSize(out) / sizeof(float));
    KilnTensorCopyToBuffer(out, run.y.data(), run.y.size() * sizeof(float));
  }
  for (int i = 0; interpreter != nullptr && i < KilnInterpreterGetDecisionCount(interpreter); ++i) {
    KilnDecisionKind kind;
    const char* message = nullptr;
    if (KilnInterpreterGetDecision(interpreter, i, &kind, nullptr, &message) == kKilnOk) {
      run.decisions += std::string("[") + KilnDecisionKindName(kind) + "] " + message + "\n";
    }
  }
  KilnInterpreterDelete(interpreter);
  return run;
}

// A model of the op alone: activation input, constant weights and bias, the raw options.
std::vector<uint8_t> OneOpModel(const Conv& c) {
  ModelWriter w;
  const int x = w.AddTensor(kKilnFloat32, c.in_shape, "activation");
  const int k = w.AddConstTensor<float>(kKilnFloat32, c.w_shape, "weights", c.weights);
  const int b = w.AddConstTensor<float>(kKilnFloat32, {c.w_shape[0]}, "bias", c.bias);
  const int y = w.AddTensor(kKilnFloat32, {}, "output");
  w.AddCustomOp(kOpName, {x, k, b}, {y}, c.Options());
  w.SetInputs({x});
  w.SetOutputs({y});
  return w.Finish();
}

struct KernelOperator {
  KilnModule* module = KilnModuleCreateFromFile(KmodPath().c_str());
  KilnOperator* op = module ? ConvTransposeBiasOperatorCreate(module) : nullptr;
  ~KernelOperator() {
    KilnOperatorDelete(op);
    KilnModuleDelete(module);
  }
};

// Whether every element of `run` lies within the bound of the reference; reports the first miss and the
// largest differences. max_rel is relative to the element's magnitude |bias| + sum |products| (where the sum
// cancels, relative to the value itself means little).
struct Distance {
  double max_abs = 0, max_rel = 0, worst_bound_ratio = 0;
};
Distance Compare(const OpRun& run, const Reference& r, const std::string& what) {
  Distance d;
  EXPECT_EQ(run.shape, r.shape) << what;
  if (run.y.size() != r.sum.size()) {
    ADD_FAILURE() << what << ": " << run.y.size() << " outputs, want " << r.sum.size() << "\n" << run.errors;
    return d;
  }
  size_t misses = 0;
  for (size_t i = 0; i < run.y.size(); ++i) {
    const double diff = std::fabs(run.y[i] - r.sum[i]);
    d.max_abs = std::max(d.max_abs, diff);
    if (r.magnitude[i] > 0) d.max_rel = std::max(d.max_rel, diff / r.magnitude[i]);
    if (r.bound[i] > 0) d.worst_bound_ratio = std::max(d.worst_bound_ratio, diff / r.bound[i]);
    if (!(diff <= r.bound[i]) && misses++ < 5) {
      ADD_FAILURE() << what << ": element " << i << " is " << run.y[i] << ", want " << r.sum[i] << " within "
                    << r.bound[i];
    }
  }
  EXPECT_EQ(misses, 0u) << what;
  std::printf("%s: max |diff| %.3g, max relative to the magnitude %.3g, %.2f of the bound\n", what.c_str(),
              d.max_abs, d.max_rel, d.worst_bound_ratio);
  return d;
}

// --- The op as the model has it: real weights, shapes and options ---

// Reads a float tensor of the model that is a constant, or the output of a DEQUANTIZE of a float16 constant.
bool ConstantFloats(const SubgraphDesc& g, int tensor, std::vector<float>* out) {
  const TensorDesc& t = g.tensors[tensor];
  if (t.data != nullptr && t.type == kKilnFloat32) {
    out->resize(t.data_size / 4);
    std::memcpy(out->data(), t.data, out->size() * 4);
    return true;
  }
  for (const OperatorDesc& op : g.operators) {
    if (op.builtin_code != kKilnBuiltinDequantize || op.outputs.empty() || op.outputs[0] != tensor) continue;
    const TensorDesc& h = g.tensors[op.inputs[0]];
    if (h.data == nullptr || h.type != kKilnFloat16) return false;
    out->resize(h.data_size / 2);
    for (size_t i = 0; i < out->size(); ++i) {
      uint16_t bits;
      std::memcpy(&bits, h.data + 2 * i, 2);
      (*out)[i] = ops::reference::HalfToFloat(bits);
    }
    return true;
  }
  return false;
}

// The model's Convolution2DTransposeBias: shapes, weights, bias and options (activation left empty).
bool ModelsConv(const std::vector<uint8_t>& bytes, Conv* c, std::string* error) {
  ModelDesc desc;
  if (!ReadModel(bytes.data(), bytes.size(), &desc, error)) return false;
  const SubgraphDesc& g = desc.subgraphs[0];
  for (const OperatorDesc& op : g.operators) {
    if (op.custom_name != kOpName) continue;
    if (op.inputs.size() != 3 || op.custom_options_size != 12) break;
    c->in_shape = g.tensors[op.inputs[0]].shape;
    c->w_shape = g.tensors[op.inputs[1]].shape;
    if (!ConstantFloats(g, op.inputs[1], &c->weights) || !ConstantFloats(g, op.inputs[2], &c->bias)) break;
    int32_t v[3];
    std::memcpy(v, op.custom_options, 12);  // little-endian host, as the tests run
    c->padding = v[0];
    c->stride_w = v[1];
    c->stride_h = v[2];
    return true;
  }
  *error = "no Convolution2DTransposeBias with 3 inputs, 12 option bytes and constant weights";
  return false;
}

std::vector<float> Uniform(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

size_t Count(const std::vector<int>& shape) {
  size_t n = 1;
  for (int d : shape) n *= static_cast<size_t>(d);
  return n;
}

class SelfieModel : public ::testing::Test {
 protected:
  void SetUp() override {
    KILN_REQUIRE_MODELS();
    bytes_ = testing::ReadFileBytes(testing::ModelPath(kModel));
    KILN_SKIP_WITHOUT_SHARED_DATA(bytes_.empty(), kModel << " not found in " << testing::ModelsDir());
    std::string error;
    ASSERT_TRUE(ModelsConv(bytes_, &conv_, &error)) << error;
  }
  std::vector<uint8_t> bytes_;
  Conv conv_;
};

TEST_F(SelfieModel, TheModelsOpIsWhatTheManifestSays) {
  EXPECT_EQ(conv_.in_shape, (std::vector<int>{1, 128, 128, 16}));
  EXPECT_EQ(conv_.w_shape, (std::vector<int>{1, 2, 2, 16}));
  EXPECT_EQ(conv_.bias.size(), 1u);
  EXPECT_EQ(conv_.padding, 1);
  EXPECT_EQ(conv_.stride_w, 2);
  EXPECT_EQ(conv_.stride_h, 2);
  ConvTransposeBiasOptions parsed;
  const std::vector<uint8_t> raw = conv_.Options();
  ASSERT_EQ(ConvTransposeBiasParseOptions(raw.data(), static_cast<int>(raw.size()), &parsed), kKilnOk);
  EXPECT_EQ(parsed.padding, 1);
  EXPECT_EQ(parsed.stride_width, 2);
  EXPECT_EQ(parsed.stride_height, 2);
  EXPECT_NE(ConvTransposeBiasParseOptions(raw.data(), 8, &parsed), kKilnOk);
}

TEST_F(SelfieModel, OpWithRealWeightsMatchesTheReferenceOnCpu) {
  KernelOperator op;
  ASSERT_NE(op.op, nullptr);
  Conv c = conv_;
  c.input = Uniform(Count(c.in_shape), -4.0f, 4.0f, 11);
  const OpRun run = RunModel(OneOpModel(c), op.op, {c.input}, /*gpu=*/false, /*timed_runs=*/5);
  ASSERT_FALSE(run.y.empty()) << run.errors;
  EXPECT_NE(run.decisions.find("kernel 'conv_transpose_bias') runs on kiln-cpu"), std::string::npos)
      << run.decisions;
  const Distance d = Compare(run, TransposedConvolution(c), "CPU, the model's op");
  EXPECT_LE(d.max_rel, 1e-5);  // the brief's CPU bound, besides gamma_n
  std::printf("CPU: %.3f ms per Invoke of the op alone\n", run.ms);
}

TEST_F(SelfieModel, OpWithRealWeightsMatchesTheReferenceOnVulkan) {
  KernelOperator op;
  ASSERT_NE(op.op, nullptr);
  Conv c = conv_;
  c.input = Uniform(Count(c.in_shape), -4.0f, 4.0f, 12);
  const OpRun run = RunModel(OneOpModel(c), op.op, {c.input}, /*gpu=*/true, /*timed_runs=*/3);
  KILN_SKIP_UNLESS_VULKAN_USED(
      run.decisions.find("kernel 'conv_transpose_bias') runs on kiln-vulkan") != std::string::npos,
      run.decisions << run.errors);
  Compare(run, TransposedConvolution(c), "Vulkan, the model's op");
  std::printf("Vulkan: %.3f ms per Invoke of the op alone\n", run.ms);
}

// Shapes the model does not have: several channels both ways, kernels larger than the stride (SAME pads),
// unequal strides, batch 2, VALID.
TEST(ConvTransposeBiasKernel, OtherShapesAndPaddingsOnBothDrivers) {
  KernelOperator op;
  ASSERT_NE(op.op, nullptr);
  const struct {
    std::vector<int> in, w;
    int padding, stride_w, stride_h;
  } cases[] = {
      {{2, 7, 5, 3}, {4, 3, 2, 3}, 1, 3, 2}, {{2, 7, 5, 3}, {4, 3, 2, 3}, 2, 3, 2},
      {{1, 6, 9, 5}, {2, 4, 4, 5}, 1, 2, 2}, {{1, 1, 1, 1}, {1, 1, 1, 1}, 2, 1, 1},
      {{1, 4, 3, 8}, {3, 5, 3, 8}, 1, 1, 1},
  };
  uint32_t seed = 100;
  for (const auto& k : cases) {
    Conv c;
    c.in_shape = k.in;
    c.w_shape = k.w;
    c.padding = k.padding;
    c.stride_w = k.stride_w;
    c.stride_h = k.stride_h;
    c.input = Uniform(Count(k.in), -2.0f, 2.0f, seed++);
    c.weights = Uniform(Count(k.w), -1.0f, 1.0f, seed++);
    c.bias = Uniform(static_cast<size_t>(k.w[0]), -0.5f, 0.5f, seed++);
    const Reference want = TransposedConvolution(c);
    const std::string what = "in " + ::testing::PrintToString(k.in) + " weights " +
                             ::testing::PrintToString(k.w) + (k.padding == 1 ? " SAME" : " VALID") +
                             " strides w" + std::to_string(k.stride_w) + " h" + std::to_string(k.stride_h);
    const OpRun cpu = RunModel(OneOpModel(c), op.op, {c.input}, false);
    Compare(cpu, want, "CPU, " + what);
    const OpRun gpu = RunModel(OneOpModel(c), op.op, {c.input}, true);
    if (gpu.decisions.find("runs on kiln-vulkan") != std::string::npos) {
      Compare(gpu, want, "Vulkan, " + what);
    } else if (::kiln::testing::VulkanDeviceExists()) {
      ADD_FAILURE() << "a Vulkan device exists, but Kiln did not use it:\n" << gpu.decisions << gpu.errors;
    }
  }
}

// --- The whole model ---

// The op written plainly, as a C-callback custom op: what the kernel-served op must agree with inside the
// model. It also keeps the activation it saw, for the bound.
Conv g_seen;

KilnStatus PlainPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const KilnOpaqueTensor* in = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* w = KilnOpaqueNodeGetInput(context, node, 1);
  const void* raw = nullptr;
  int size = 0;
  if (KilnOpaqueNodeGetCustomInitialData(node, &raw, &size) != kKilnOk || size != 12) return kKilnError;
  std::memcpy(&g_seen.padding, raw, 4);
  std::memcpy(&g_seen.stride_w, static_cast<const char*>(raw) + 4, 4);
  std::memcpy(&g_seen.stride_h, static_cast<const char*>(raw) + 8, 4);
  g_seen.in_shape.clear();
  g_seen.w_shape.clear();
  for (int d = 0; d < 4; ++d) g_seen.in_shape.push_back(KilnOpaqueTensorDim(in, d));
  for (int d = 0; d < 4; ++d) g_seen.w_shape.push_back(KilnOpaqueTensorDim(w, d));
  g_seen.input.assign(Count(g_seen.in_shape), 0.0f);
  g_seen.weights.assign(Count(g_seen.w_shape), 0.0f);
  g_seen.bias.assign(static_cast<size_t>(g_seen.w_shape[0]), 0.0f);
  const Reference r = TransposedConvolution(g_seen);  // for the shape only
  KilnIntArray* dims = KilnIntArrayCreate(4);
  for (int d = 0; d < 4; ++d) dims->data[d] = r.shape[d];
  return KilnOpaqueContextResizeTensor(context, KilnOpaqueNodeGetOutput(context, node, 0), dims);
}

KilnStatus PlainInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  const auto copy = [&](int index, std::vector<float>* to) {
    const KilnOpaqueTensor* t = KilnOpaqueNodeGetInput(context, node, index);
    std::memcpy(to->data(), KilnOpaqueTensorData(t), to->size() * sizeof(float));
  };
  copy(0, &g_seen.input);
  copy(1, &g_seen.weights);
  copy(2, &g_seen.bias);
  const Reference r = TransposedConvolution(g_seen);
  float* out = static_cast<float*>(KilnOpaqueTensorData(KilnOpaqueNodeGetOutput(context, node, 0)));
  for (size_t i = 0; i < r.sum.size(); ++i) out[i] = static_cast<float>(r.sum[i]);
  return kKilnOk;
}

// The model's input: a fixed RGB image in [0, 1] (seeded noise over a bright disc), the same for every run.
std::vector<float> ModelInput() {
  std::vector<float> image = Uniform(256 * 256 * 3, 0.0f, 0.2f, 7);
  for (int y = 0; y < 256; ++y) {
    for (int x = 0; x < 256; ++x) {
      const float dx = (x - 128) / 256.0f, dy = (y - 100) / 256.0f;
      for (int ch = 0; ch < 3; ++ch) image[(y * 256 + x) * 3 + ch] += dx * dx + dy * dy < 0.04f ? 0.7f : 0.2f;
    }
  }
  return image;
}

// Runs the whole model with the plain op (whose bound, passed through LOGISTIC, is returned in `bound`), and
// checks `kernel_run` against it.
void CompareWholeModel(const std::vector<uint8_t>& bytes, const OpRun& kernel_run, const std::string& what) {
  KilnOperator* plain = KilnOperatorCreate(kKilnBuiltinCustom, kOpName, 1);
  KilnOperatorSetPrepare(plain, PlainPrepare);
  KilnOperatorSetInvoke(plain, PlainInvoke);
  const OpRun want = RunModel(bytes, plain, {ModelInput()}, false);
  KilnOperatorDelete(plain);
  ASSERT_EQ(want.y.size(), 256u * 256u) << want.errors;
  ASSERT_EQ(kernel_run.shape, (std::vector<int>{1, 256, 256, 1})) << kernel_run.errors;
  const Reference r = TransposedConvolution(g_seen);
  ASSERT_EQ(r.sum.size(), kernel_run.y.size());
  // LOGISTIC: 1/4-Lipschitz, then one more rounding of a value in [0, 1] (and the plain op's own rounding of
  // the double sum to float, half an ulp of the logit).
  double max_diff = 0;
  float lo = 1, hi = 0;
  size_t misses = 0;
  for (size_t i = 0; i < kernel_run.y.size(); ++i) {
    const float v = kernel_run.y[i];
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    ASSERT_TRUE(v >= 0.0f && v <= 1.0f) << what << ": element " << i << " is " << v << ", not a probability";
    const double logit_ulp = std::ldexp(std::fabs(r.sum[i]) + 1e-30, -24);
    const double bound = 0.25 * (r.bound[i] + logit_ulp) + std::ldexp(1.0, -23);
    const double diff = std::fabs(static_cast<double>(v) - want.y[i]);
    max_diff = std::max(max_diff, diff);
    if (diff > bound && misses++ < 5) {
      ADD_FAILURE() << what << ": element " << i << " is " << v << ", the plain op gives " << want.y[i]
                    << " (bound " << bound << ")";
    }
  }
  EXPECT_EQ(misses, 0u);
  EXPECT_LT(lo, hi) << what << ": a constant mask";
  std::printf("%s: mask in [%.4f, %.4f], max |diff| from the plain op %.3g, %.2f ms per Invoke\n",
              what.c_str(), lo, hi, max_diff, kernel_run.ms);
}

TEST_F(SelfieModel, WholeModelOnCpu) {
  KernelOperator op;
  ASSERT_NE(op.op, nullptr);
  const OpRun run = RunModel(bytes_, op.op, {ModelInput()}, false, /*timed_runs=*/3);
  ASSERT_FALSE(run.y.empty()) << run.errors;
  EXPECT_NE(run.decisions.find("(Convolution2DTransposeBias, kernel 'conv_transpose_bias') runs on kiln-cpu"),
            std::string::npos)
      << run.decisions;
  CompareWholeModel(bytes_, run, "whole model, CPU");
}

TEST_F(SelfieModel, WholeModelWithTheOpOnVulkan) {
  KernelOperator op;
  ASSERT_NE(op.op, nullptr);
  const OpRun run = RunModel(bytes_, op.op, {ModelInput()}, true, /*timed_runs=*/2);
  KILN_SKIP_UNLESS_VULKAN_USED(
      run.decisions.find("(Convolution2DTransposeBias, kernel 'conv_transpose_bias') runs on kiln-vulkan") !=
          std::string::npos,
      run.decisions << run.errors);
  CompareWholeModel(bytes_, run, "whole model, op on Vulkan");
}

}  // namespace
}  // namespace kiln
