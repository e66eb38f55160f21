// LOGISTIC, TANH and SOFTMAX int16 through a real interpreter: the kernels' results on every shape (rank 0 to 6,
// empty), and LiteRT's Prepare refusals (asymmetric tensors, the output quantization, input scales beyond its
// arithmetic, SOFTMAX ranks above 4), each naming the op and the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api.h"
#include "ops/reference/quantized_int16.h"
#include "ops/reference/quantized_kernels.h"
#include "ops/reference/tensor_ops.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

struct Quant {
  float scale;
  int32_t zero_point;
};

// One LOGISTIC / TANH / SOFTMAX node on int16 (or `out_type`) tensors of `dims`.
void Build(ModelWriter& w, KilnBuiltinOperator code, const std::vector<int32_t>& dims, Quant in, Quant out,
           KilnType out_type = kKilnInt16) {
  const int x = w.AddTensor(kKilnInt16, dims, "x16");
  const int y = w.AddTensor(out_type, dims, "y16");
  w.SetQuantization(x, {in.scale}, {in.zero_point});
  w.SetQuantization(y, {out.scale}, {out.zero_point});
  if (code == kKilnBuiltinSoftmax) {
    w.AddOp(code, {x}, {y}, KilnSoftmaxParams{1.0f});
  } else {
    w.AddOp(code, {x}, {y});
  }
  w.SetInputs({x});
  w.SetOutputs({y});
}

std::vector<int16_t> Ramp(size_t n) {
  std::vector<int16_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<int16_t>(-32768 + static_cast<int64_t>(i * 65535 / (n > 1 ? n - 1 : 1)));
  return v;
}

TEST(Int16ActivationWrapperTest, LogisticAndTanhRunTheKernelsOnEveryRank) {
  const std::vector<std::vector<int32_t>> shapes = {
      {}, {1}, {7}, {3, 5}, {2, 1, 3}, {2, 3, 4, 5}, {1, 2, 1, 3, 2}, {2, 1, 2, 1, 2, 3}, {0, 4}};
  for (KilnBuiltinOperator code : {kKilnBuiltinLogistic, kKilnBuiltinTanh}) {
    for (float scale : {1.0f / 4096, 1.0f / 2048, 7e-4f, 0.05f}) {
      for (const auto& dims : shapes) {
        ModelWriter w;
        Build(w, code, dims, {scale, 0}, {1.0f / 32768, 0});
        Runner r(w);
        ASSERT_EQ(r.status(), kKilnOk) << r.errors();
        size_t n = 1;
        for (int32_t d : dims) n *= static_cast<size_t>(d);
        const std::vector<int16_t> in = Ramp(n);
        if (n > 0) r.SetInput(0, in.data(), n * 2);
        ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
        EXPECT_EQ(r.OutputDims(), std::vector<int>(dims.begin(), dims.end()));
        reference::SigmoidTanhInt16Params p;
        std::vector<int16_t> want(n);
        if (code == kKilnBuiltinLogistic) {
          ASSERT_TRUE(reference::PrepareLogisticInt16(scale, &p));
          reference::LogisticInt16(p, static_cast<int64_t>(n), in.data(), want.data());
        } else {
          ASSERT_TRUE(reference::PrepareTanhInt16(scale, &p));
          reference::TanhInt16(p, static_cast<int64_t>(n), in.data(), want.data());
        }
        EXPECT_EQ(r.OutputAs<int16_t>(), want) << code << " scale " << scale << " rank " << dims.size();
      }
    }
  }
}

TEST(Int16ActivationWrapperTest, LogisticAndTanhRefuseWhatLiteRTRefuses) {
  for (KilnBuiltinOperator code : {kKilnBuiltinLogistic, kKilnBuiltinTanh}) {
    const std::string op = code == kKilnBuiltinLogistic ? "LOGISTIC" : "TANH";
    {  // an input zero point
      ModelWriter w;
      Build(w, code, {4}, {1e-3f, 3}, {1.0f / 32768, 0});
      Runner r(w);
      ExpectErrorMentions(r, {op, "x16", "zero point 3"});
    }
    {  // an output zero point
      ModelWriter w;
      Build(w, code, {4}, {1e-3f, 0}, {1.0f / 32768, -5});
      Runner r(w);
      ExpectErrorMentions(r, {op, "y16", "zero point -5"});
    }
    {  // the output scale must be 2^-15
      ModelWriter w;
      Build(w, code, {4}, {1e-3f, 0}, {1.0f / 16384, 0});
      Runner r(w);
      ExpectErrorMentions(r, {op, "y16", "int16", "2^-15"});
    }
    {  // an input scale whose multiplier passes int32
      ModelWriter w;
      Build(w, code, {4}, {1e6f, 0}, {1.0f / 32768, 0});
      Runner r(w);
      ExpectErrorMentions(r, {op, "x16", "int16", "scale"});
    }
    {  // int16 input, int8 output
      ModelWriter w;
      Build(w, code, {4}, {1e-3f, 0}, {1.0f / 256, -128}, kKilnInt8);
      Runner r(w);
      ExpectErrorMentions(r, {op, "y16"});
    }
  }
  {  // TANH's output scale is a power of two within LiteRT's tolerance; LOGISTIC's exactly 1/32768
    ModelWriter w;
    Build(w, kKilnBuiltinTanh, {4}, {1e-3f, 0}, {1.0f / 32768 * 1.0002f, 0});
    Runner r(w);
    EXPECT_EQ(r.status(), kKilnOk) << r.errors();
    ModelWriter w2;
    Build(w2, kKilnBuiltinLogistic, {4}, {1e-3f, 0}, {1.0f / 32768 * 1.0002f, 0});
    Runner r2(w2);
    ExpectErrorMentions(r2, {"LOGISTIC", "y16", "2^-15"});
  }
}

TEST(Int16SoftmaxWrapperTest, RunsRanksOneToFour) {
  const std::vector<std::vector<int32_t>> shapes = {{1}, {9}, {3, 5}, {2, 1, 7}, {2, 3, 2, 4}, {0, 3}, {3, 0}};
  for (float scale : {1e-4f, 1e-3f, 0.05f}) {
    for (const auto& dims : shapes) {
      ModelWriter w;
      Build(w, kKilnBuiltinSoftmax, dims, {scale, 0}, {1.0f / 32768, 0});
      Runner r(w);
      ASSERT_EQ(r.status(), kKilnOk) << r.errors();
      size_t n = 1;
      for (int32_t d : dims) n *= static_cast<size_t>(d);
      const std::vector<int16_t> in = Ramp(n);
      if (n > 0) r.SetInput(0, in.data(), n * 2);
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      reference::SoftmaxInt16Params p;
      p.depth = dims.back();
      p.outer = p.depth == 0 ? 0 : static_cast<int64_t>(n) / p.depth;
      reference::PrepareSoftmaxInt16(scale, 1.0f, &p);
      std::vector<int16_t> want(n);
      if (n > 0) { ASSERT_TRUE(reference::SoftmaxInt16(p, in.data(), want.data())); }
      EXPECT_EQ(r.OutputAs<int16_t>(), want) << "scale " << scale << " rank " << dims.size();
    }
  }
}

TEST(Int16SoftmaxWrapperTest, RefusesWhatLiteRTRefuses) {
  {  // rank 5 (LiteRT's int16 kernel takes ranks 1 to 4)
    ModelWriter w;
    Build(w, kKilnBuiltinSoftmax, {1, 2, 1, 2, 3}, {1e-3f, 0}, {1.0f / 32768, 0});
    Runner r(w);
    ExpectErrorMentions(r, {"SOFTMAX", "x16", "rank 5"});
  }
  {  // rank 0
    ModelWriter w;
    Build(w, kKilnBuiltinSoftmax, {}, {1e-3f, 0}, {1.0f / 32768, 0});
    Runner r(w);
    ExpectErrorMentions(r, {"SOFTMAX", "x16"});
  }
  {  // the output scale: 1/32768 within 0.1%
    ModelWriter w;
    Build(w, kKilnBuiltinSoftmax, {4}, {1e-3f, 0}, {1.0f / 32768 * 1.002f, 0});
    Runner r(w);
    ExpectErrorMentions(r, {"SOFTMAX", "y16", "1/32768"});
    ModelWriter ok;
    Build(ok, kKilnBuiltinSoftmax, {4}, {1e-3f, 0}, {1.0f / 32768 * 1.0009f, 0});
    Runner r_ok(ok);
    EXPECT_EQ(r_ok.status(), kKilnOk) << r_ok.errors();
  }
  {  // zero points
    ModelWriter w;
    Build(w, kKilnBuiltinSoftmax, {4}, {1e-3f, 2}, {1.0f / 32768, 0});
    Runner r(w);
    ExpectErrorMentions(r, {"SOFTMAX", "x16", "zero point 2"});
    ModelWriter w2;
    Build(w2, kKilnBuiltinSoftmax, {4}, {1e-3f, 0}, {1.0f / 32768, 1});
    Runner r2(w2);
    ExpectErrorMentions(r2, {"SOFTMAX", "y16", "zero point 1"});
  }
  {  // int16 input, int8 output
    ModelWriter w;
    Build(w, kKilnBuiltinSoftmax, {4}, {1e-3f, 0}, {1.0f / 256, -128}, kKilnInt8);
    Runner r(w);
    ExpectErrorMentions(r, {"SOFTMAX", "y16", "int16"});
  }
}

// MEAN and SUM on int16: symmetric tensors only (LiteRT's Prepare check); results as the kernel's.
TEST(Int16ReduceWrapperTest, MeanAndSumRunAndRefuseZeroPoints) {
  for (KilnBuiltinOperator code : {kKilnBuiltinMean, kKilnBuiltinSum}) {
    const std::string op = code == kKilnBuiltinMean ? "MEAN" : "SUM";
    for (int32_t in_zp : {0, 4}) {
      ModelWriter w;
      const int x = w.AddTensor(kKilnInt16, {1, 3, 4, 2}, "m16_in");
      const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "axes", {1, 2});
      const int y = w.AddTensor(kKilnInt16, {1, 1, 1, 2}, "m16_out");
      w.SetQuantization(x, {1e-3f}, {in_zp});
      w.SetQuantization(y, {2e-3f}, {0});
      w.AddOp(code, {x, axes}, {y}, KilnReducerParams{true});
      w.SetInputs({x});
      w.SetOutputs({y});
      Runner r(w);
      if (in_zp != 0) {
        ExpectErrorMentions(r, {op, "m16_in", "zero point 4"});
        continue;
      }
      ASSERT_EQ(r.status(), kKilnOk) << r.errors();
      const std::vector<int16_t> in = Ramp(24);
      r.SetInput(0, in.data(), in.size() * 2);
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      reference::ReduceInt8Params p;
      reference::Dims out_dims;
      std::string error;
      ASSERT_TRUE(reference::MakeMeanParams({1, 3, 4, 2}, {1, 2}, true, &p.shape, &out_dims, &error));
      reference::PrepareReduceInt8(code == kKilnBuiltinSum, 1e-3f, 2e-3f, &p);
      std::vector<int16_t> want(2);
      reference::ReduceQuantized<int16_t>(p, in.data(), want.data());
      EXPECT_EQ(r.OutputAs<int16_t>(), want) << op;
    }
  }
}

// REDUCE_PROD on quantized int8 and int16 (LiteRT's rescaled product) runs the kernel; uint8, an int16 zero point
// and a scaling beyond LiteRT's int64 multiply are refused naming the tensor.
TEST(QuantizedReduceProdWrapperTest, RunsInt8AndInt16AndRefusesTheRest) {
  struct Case {
    KilnType type;
    float in_scale;
    int32_t in_zp;
    float out_scale;
    int32_t out_zp;
    std::vector<std::string> error;  // empty: runs
  };
  const Case cases[] = {{kKilnInt8, 0.05f, -3, 0.5f, 2, {}},
                        {kKilnInt16, 1e-3f, 0, 1e-3f, 0, {}},
                        {kKilnUInt8, 0.05f, 128, 0.5f, 128, {"REDUCE_PROD", "p_in", "uint8"}},
                        {kKilnInt16, 1e-3f, 7, 1e-3f, 0, {"REDUCE_PROD", "p_in", "zero point 7"}},
                        {kKilnInt8, 1e5f, 0, 1e-5f, 0, {"REDUCE_PROD", "p_out", "2^14"}}};
  for (const Case& c : cases) {
    ModelWriter w;
    const int x = w.AddTensor(c.type, {2, 3, 2}, "p_in");
    const int axes = w.AddConstTensor<int32_t>(kKilnInt32, {2}, "axes", {1, -1});
    const int y = w.AddTensor(c.type, {2}, "p_out");
    w.SetQuantization(x, {c.in_scale}, {c.in_zp});
    w.SetQuantization(y, {c.out_scale}, {c.out_zp});
    w.AddOp(kKilnBuiltinReduceProd, {x, axes}, {y}, KilnReducerParams{false});
    w.SetInputs({x});
    w.SetOutputs({y});
    Runner r(w);
    if (!c.error.empty()) {
      ExpectErrorMentions(r, c.error);
      continue;
    }
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    reference::ReduceProdQuantizedParams p;
    reference::Dims out_dims;
    std::string error;
    ASSERT_TRUE(reference::MakeMeanParams({2, 3, 2}, {1, -1}, false, &p.shape, &out_dims, &error));
    p.input_zero_point = c.in_zp;
    p.output_zero_point = c.out_zp;
    ASSERT_TRUE(reference::PrepareReduceProdQuantized(c.in_scale, c.out_scale, &p));
    if (c.type == kKilnInt8) {
      const std::vector<int8_t> in = {-128, 127, 3, -3, 50, 60, 1, 2, 100, -100, 7, 0};
      r.SetInput(0, in.data(), in.size());
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      std::vector<int8_t> want(2);
      reference::ReduceProdQuantized<int8_t>(p, in.data(), want.data());
      EXPECT_EQ(r.OutputAs<int8_t>(), want);
    } else {
      const std::vector<int16_t> in = Ramp(12);
      r.SetInput(0, in.data(), in.size() * 2);
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      std::vector<int16_t> want(2);
      reference::ReduceProdQuantized<int16_t>(p, in.data(), want.data());
      EXPECT_EQ(r.OutputAs<int16_t>(), want);
    }
  }
}

// Hybrid BATCH_MATMUL: float32 lhs, a constant int8 rhs (per tensor, or per channel along its columns) dequantized
// once, the float kernel: the result equals the float product with the dequantized rhs (a plain loop here); a
// non-constant int8 rhs and scales along another dimension are refused naming the tensor.
TEST(HybridBatchMatMulWrapperTest, DequantizedRhsAndRefusals) {
  for (bool adj_y : {false, true}) {
    for (bool per_channel : {false, true}) {
      // lhs [2, 2, 3] x rhs [3, 4] (adj_y: stored [4, 3]).
      const std::vector<int8_t> q = {1, -2, 3, 127, -128, 5, 0, 9, -7, 11, 60, -1};
      const std::vector<float> scales =
          per_channel ? std::vector<float>{0.5f, 0.25f, 0.125f, 2.0f} : std::vector<float>{0.5f};
      ModelWriter w;
      const int a = w.AddTensor(kKilnFloat32, {2, 2, 3}, "h_lhs");
      const std::vector<int32_t> rhs_dims = adj_y ? std::vector<int32_t>{4, 3} : std::vector<int32_t>{3, 4};
      const int b = w.AddConstTensor<int8_t>(kKilnInt8, rhs_dims, "h_rhs", q);
      w.SetQuantization(b, scales, std::vector<int64_t>(scales.size(), 0), adj_y ? 0 : 1);
      const int y = w.AddTensor(kKilnFloat32, {2, 2, 4}, "h_out");
      w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, adj_y, false});
      w.SetInputs({a});
      w.SetOutputs({y});
      Runner r(w);
      ASSERT_EQ(r.status(), kKilnOk) << r.errors();
      const std::vector<float> in = {0.5f, -1.0f, 2.0f, 0.25f, 3.0f, -0.5f, 1.0f, 1.0f, 1.0f, -2.0f, 0.0f, 0.125f};
      r.SetInput(0, in.data(), in.size() * 4);
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      std::vector<float> want(16, 0.0f);
      for (int row = 0; row < 4; ++row) {
        for (int col = 0; col < 4; ++col) {
          float sum = 0.0f;
          for (int k = 0; k < 3; ++k) {
            const int8_t v = adj_y ? q[static_cast<size_t>(col * 3 + k)] : q[static_cast<size_t>(k * 4 + col)];
            sum += in[static_cast<size_t>(row * 3 + k)] * (v * scales[per_channel ? static_cast<size_t>(col) : 0]);
          }
          want[static_cast<size_t>(row * 4 + col)] = sum;
        }
      }
      const std::vector<float> got = r.Output();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::fabs(want[i])));
    }
  }
  {  // a non-constant int8 rhs
    ModelWriter w;
    const int a = w.AddTensor(kKilnFloat32, {2, 3}, "h_lhs");
    const int b = w.AddTensor(kKilnInt8, {3, 2}, "h_rhs");
    w.SetQuantization(b, {0.5f}, {0});
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "h_out");
    w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, false, false});
    w.SetInputs({a, b});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"BATCH_MATMUL", "h_rhs", "constant"});
  }
  {  // per-channel scales along the summed dimension
    ModelWriter w;
    const int a = w.AddTensor(kKilnFloat32, {2, 3}, "h_lhs");
    const int b = w.AddConstTensor<int8_t>(kKilnInt8, {3, 2}, "h_rhs", {1, 2, 3, 4, 5, 6});
    w.SetQuantization(b, {0.5f, 0.25f, 0.125f}, {0, 0, 0}, 0);
    const int y = w.AddTensor(kKilnFloat32, {2, 2}, "h_out");
    w.AddOp(kKilnBuiltinBatchMatmul, {a, b}, {y}, KilnBatchMatMulParams{false, false, false});
    w.SetInputs({a});
    w.SetOutputs({y});
    Runner r(w);
    ExpectErrorMentions(r, {"BATCH_MATMUL", "h_rhs", "3 scales"});
  }
}

// SOFTMAX int8 / uint8 -> int16 runs LiteRT's reference kernel with the output quantized 1/65536, -32768, and
// refuses any other output quantization (LiteRT's two paths disagree there) naming the tensor.
TEST(SoftmaxTo16WrapperTest, RunsWithLiteRTsOutputQuantizationOnly) {
  for (KilnType type : {kKilnInt8, kKilnUInt8}) {
    for (bool standard : {true, false}) {
      ModelWriter w;
      const int x = w.AddTensor(type, {2, 5}, "s_in");
      const int y = w.AddTensor(kKilnInt16, {2, 5}, "s_out");
      w.SetQuantization(x, {0.1f}, {type == kKilnInt8 ? -3 : 125});
      w.SetQuantization(y, {standard ? 1.0f / 65536 : 1.0f / 32768}, {standard ? -32768 : 0});
      w.AddOp(kKilnBuiltinSoftmax, {x}, {y}, KilnSoftmaxParams{1.0f});
      w.SetInputs({x});
      w.SetOutputs({y});
      Runner r(w);
      if (!standard) {
        ExpectErrorMentions(r, {"SOFTMAX", "s_out", "1/65536, -32768"});
        continue;
      }
      ASSERT_EQ(r.status(), kKilnOk) << r.errors();
      const std::vector<int8_t> in = {-128, 0, 5, 127, 127, 3, 3, 3, 3, 3};
      std::vector<uint8_t> bytes(in.size());
      for (size_t i = 0; i < in.size(); ++i)
        bytes[i] = type == kKilnInt8 ? static_cast<uint8_t>(in[i]) : static_cast<uint8_t>(in[i] + 128);
      r.SetInput(0, bytes.data(), bytes.size());
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      reference::SoftmaxTo16Params p;
      p.outer = 2;
      p.depth = 5;
      reference::PrepareSoftmaxTo16(0.1f, 1.0f, &p);
      std::vector<int16_t> want(10);
      ASSERT_TRUE(reference::SoftmaxTo16<int8_t>(p, in.data(), want.data()));
      EXPECT_EQ(r.OutputAs<int16_t>(), want);
      EXPECT_NEAR(want[5], 65536.0 / 5 - 32768, 3.0);  // a row of equal values
    }
  }
}

}  // namespace
}  // namespace kiln::ops
