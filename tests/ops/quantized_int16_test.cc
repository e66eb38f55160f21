// The int16 LOGISTIC, TANH and SOFTMAX kernels (ops/reference/quantized_int16.h) against LiteRT's integer
// formulas written out again here in plain int64 arithmetic (divisions and floors rather than shifts and
// masks), over every int16 input and many scales; the tables against the functions they sample; the results
// against the real functions (LiteRT's kernels are accurate to a few steps); the multiplier choices of Prepare.
#include "ops/reference/quantized_int16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "ops/reference/elementwise.h"
#include "ops/reference/quantized.h"
#include "ops/reference/quantized_kernels.h"
#include "ops/reference/tensor_ops.h"
#include "tests/ops/quantized_test_helpers.h"

namespace kiln::ops::reference {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

std::vector<int16_t> AllInt16() {
  std::vector<int16_t> v;
  for (int x = -32768; x <= 32767; ++x) v.push_back(static_cast<int16_t>(x));
  return v;
}

// LOGISTIC / TANH spelled out: the input in the table's domain, then the interpolation and the mirroring.
int64_t TableDomain(int16_t in, const SigmoidTanhInt16Params& p) {
  int64_t multiplier = p.multiplier, shift = p.left_shift;
  if (multiplier == 0) {
    multiplier = 3 * (int64_t{1} << shift);
    shift = 0;
  }
  const int64_t scaled = in * multiplier + (shift > 0 ? (int64_t{1} << shift) / 2 : 0);
  return FloorDiv(scaled, int64_t{1} << shift);  // no wrap: the tests keep multipliers below 2^16
}

int64_t Interpolated(int64_t magnitude, int64_t fraction_bits, int64_t saturated) {
  const int64_t unit = int64_t{1} << fraction_bits;
  const int64_t index = magnitude / unit;
  if (index >= 255) return saturated;
  const int64_t a = SigmoidTable()[index], b = SigmoidTable()[index + 1];
  return a * unit + (magnitude % unit) * (b - a);
}

int16_t PlainLogistic(int16_t in, const SigmoidTanhInt16Params& p) {
  const int64_t x = TableDomain(in, p);
  int64_t r = Interpolated(std::abs(x), 9, 32767 * 1024);
  r = x >= 0 ? r + 512 : 33554432 - r + 511;
  return static_cast<int16_t>(FloorDiv(r, 1024));
}

int16_t PlainTanh(int16_t in, const SigmoidTanhInt16Params& p) {
  const int64_t x = TableDomain(in, p);
  int64_t r = Interpolated(std::abs(x), 8, 65535 * 256);
  r = x >= 0 ? r - 8388608 + 128 : -r + 8388608 + 127;
  return static_cast<int16_t>(FloorDiv(r, 256));
}

TEST(SigmoidTableTest, SamplesTheSigmoidAt24ths) {
  const uint16_t* table = SigmoidTable();
  EXPECT_EQ(table[0], 32768);
  EXPECT_EQ(table[255], 65535);
  for (int i = 0; i < 256; ++i) {
    const double exact = 65536.0 / (1.0 + std::exp(-i / 24.0));
    EXPECT_NEAR(table[i], exact, 1.2) << i;
    if (i > 0) { EXPECT_GE(table[i], table[i - 1]) << i; }
  }
}

TEST(CheckedLog2Test, PowersOfTwoWithinTolerance) {
  int l = 0;
  EXPECT_TRUE(CheckedLog2(1.0f / 32768, &l));
  EXPECT_EQ(l, -15);
  EXPECT_TRUE(CheckedLog2(1.0f / 32768 * 1.0002f, &l));  // |log2 error| < 1e-3
  EXPECT_EQ(l, -15);
  EXPECT_FALSE(CheckedLog2(1.0f / 32768 * 1.01f, &l));
  EXPECT_TRUE(CheckedLog2(4096.0f, &l));
  EXPECT_EQ(l, 12);
  EXPECT_FALSE(CheckedLog2(1e-3f, &l));
  EXPECT_FALSE(CheckedLog2(0.0f, &l));
  EXPECT_FALSE(CheckedLog2(-1.0f, &l));
  EXPECT_FALSE(CheckedLog2(std::nanf(""), &l));
}

TEST(SigmoidTanhInt16Test, PrepareChoosesLiteRTsMultipliers) {
  SigmoidTanhInt16Params p;
  // The scales the table takes directly.
  ASSERT_TRUE(PrepareLogisticInt16(1.0f / 4096, &p));
  EXPECT_EQ(p.multiplier, 0);
  EXPECT_EQ(p.left_shift, 0);
  ASSERT_TRUE(PrepareTanhInt16(1.0f / 4096, &p));
  EXPECT_EQ(p.multiplier, 0);
  EXPECT_EQ(p.left_shift, 0);
  ASSERT_TRUE(PrepareTanhInt16(1.0f / 2048, &p));
  EXPECT_EQ(p.multiplier, 0);
  EXPECT_EQ(p.left_shift, 1);
  // Others: s * 12288 doubled until above 16383.5.
  for (float scale : {1.0f / 2048, 1.0f / 1024, 1e-3f, 1e-5f, 0.1f, 1.0f, 4.5f, 3e-7f}) {
    for (bool tanh : {false, true}) {
      if (tanh && scale == 1.0f / 2048) continue;
      ASSERT_TRUE(tanh ? PrepareTanhInt16(scale, &p) : PrepareLogisticInt16(scale, &p)) << scale;
      double m = static_cast<double>(scale) * 12288.0;
      int shift = 0;
      while (m <= 16383.5 && shift <= 30) {
        m *= 2;
        ++shift;
      }
      EXPECT_EQ(p.left_shift, shift) << scale;
      EXPECT_EQ(p.multiplier, static_cast<int32_t>(m)) << scale;
    }
  }
  // Beyond LiteRT's arithmetic: a multiplier past int32, or 0 after 31 doublings.
  EXPECT_FALSE(PrepareLogisticInt16(1e6f, &p));
  EXPECT_FALSE(PrepareTanhInt16(1e-16f, &p));
}

TEST(SigmoidTanhInt16Test, EveryInputMatchesThePlainFormulas) {
  const std::vector<int16_t> in = AllInt16();
  std::vector<int16_t> out(in.size());
  for (float scale :
       {1.0f / 4096, 1.0f / 2048, 1.0f / 1024, 1.0f / 8192, 1e-3f, 3e-4f, 1e-5f, 3.1e-7f, 0.01f, 0.1f, 1.0f, 4.5f}) {
    SigmoidTanhInt16Params p;
    ASSERT_TRUE(PrepareLogisticInt16(scale, &p));
    LogisticInt16(p, static_cast<int64_t>(in.size()), in.data(), out.data());
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_EQ(out[i], PlainLogistic(in[i], p)) << "scale " << scale << " input " << in[i];
      // Within 2 steps of the function (LiteRT's table and interpolation).
      const double exact = std::round(32768.0 / (1.0 + std::exp(-static_cast<double>(in[i]) * scale)));
      ASSERT_LE(std::abs(out[i] - std::min(exact, 32767.0)), 2.0) << "scale " << scale << " input " << in[i];
      ASSERT_GE(out[i], 0);
    }
    ASSERT_TRUE(PrepareTanhInt16(scale, &p));
    TanhInt16(p, static_cast<int64_t>(in.size()), in.data(), out.data());
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_EQ(out[i], PlainTanh(in[i], p)) << "scale " << scale << " input " << in[i];
      const double exact = std::round(32768.0 * std::tanh(static_cast<double>(in[i]) * scale));
      ASSERT_LE(std::abs(out[i] - std::clamp(exact, -32767.0, 32767.0)), 3.0)
          << "scale " << scale << " input " << in[i];
    }
  }
}

TEST(SigmoidTanhInt16Test, SymmetryAndEndpoints) {
  SigmoidTanhInt16Params p;
  ASSERT_TRUE(PrepareTanhInt16(1.0f / 4096, &p));
  const int16_t in[] = {0, 1, -1, 32767, -32768, -32767};
  int16_t out[6];
  TanhInt16(p, 6, in, out);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], -out[2]);
  EXPECT_EQ(out[3], 32767);
  EXPECT_EQ(out[4], -32767);
  EXPECT_EQ(out[5], -32767);
  ASSERT_TRUE(PrepareLogisticInt16(1.0f / 4096, &p));
  LogisticInt16(p, 6, in, out);
  EXPECT_EQ(out[0], 16384);
  EXPECT_NEAR(out[3], 32768.0 / (1.0 + std::exp(-8.0)), 1.0);  // 32767 stands for 8 at 2^-12
  EXPECT_NEAR(out[4], 32768.0 / (1.0 + std::exp(8.0)), 1.0);
  EXPECT_EQ(out[1] + out[2], 32768);
  LogisticInt16(p, 0, in, out);  // an empty tensor writes nothing
}

// A huge input multiplier (LiteRT's arithmetic wraps in int32 there) stays defined: the same formula on wrapped
// values, and no sanitizer report.
TEST(SigmoidTanhInt16Test, WrappingMultiplierIsDefined) {
  SigmoidTanhInt16Params p;
  ASSERT_TRUE(PrepareLogisticInt16(1000.0f, &p));
  EXPECT_EQ(p.left_shift, 0);
  EXPECT_EQ(p.multiplier, 12288000);
  const std::vector<int16_t> in = AllInt16();
  std::vector<int16_t> out(in.size());
  LogisticInt16(p, static_cast<int64_t>(in.size()), in.data(), out.data());
  TanhInt16(p, static_cast<int64_t>(in.size()), in.data(), out.data());
  for (int16_t v : out) ASSERT_GE(v, -32767);
}

// LiteRT's LUTPopulate<int16_t> written again: the 512 samples less half the rounded midpoint error.
std::vector<int> PlainTable(double in_min, double in_max, double (*f)(double)) {
  const double scale = 65536.0 / (2.0 / 65535 * 32767 - 2.0 / 65535 * -32768);
  const double step = (in_max - in_min) / 512;
  std::vector<int> table(513);
  for (int i = 0; i <= 512; ++i) {
    const double at = in_min + i * step;
    double v = std::round(f(i == 512 ? in_max : at) * scale);
    if (i < 512) {
      const double interpolated = std::round((f(in_min + (i + 1) * step) * scale + v) / 2);
      v -= std::round((interpolated - std::round(f(at + step / 2) * scale)) / 2);
    }
    table[i] = static_cast<int>(std::clamp(v, -32768.0, 32767.0));
  }
  return table;
}

double Exp(double x) { return std::exp(x); }
double Reciprocal(double x) { return 1.0 / (1.0 + x); }

TEST(SoftmaxInt16Test, TablesSampleTheirFunctions) {
  const std::vector<int> exp_table = PlainTable(10.0 / 65535 * -65535, 0.0, &Exp);
  const std::vector<int> reciprocal_table = PlainTable(0.0, 1.0, &Reciprocal);
  for (int i = 0; i <= 512; ++i) {
    EXPECT_EQ(SoftmaxExpTable().values[i], exp_table[i]) << i;
    EXPECT_EQ(SoftmaxReciprocalTable().values[i], reciprocal_table[i]) << i;
    EXPECT_NEAR(SoftmaxExpTable().values[i], 32768.0 * std::exp(-10.0 + i * 10.0 / 512), 2.0) << i;
  }
  EXPECT_EQ(SoftmaxExpTable().values[512], 32767);
  EXPECT_EQ(SoftmaxReciprocalTable().values[0], 32767);
  EXPECT_EQ(SoftmaxReciprocalTable().values[512], 16384);
  // The lookup interpolates between entries (value >> 7 picks the entry, the low 7 bits the fraction).
  for (int v = -32768; v <= 32767; v += 37) {
    const int index = 256 + static_cast<int>(FloorDiv(v, 128)), offset = v - FloorDiv(v, 128) * 128;
    const int base = exp_table[index], slope = exp_table[index + 1] - exp_table[index];
    ASSERT_EQ(LookupInt16(SoftmaxExpTable(), static_cast<int16_t>(v)),
              base + static_cast<int>(FloorDiv(slope * offset + 64, 128)))
        << v;
  }
}

// SOFTMAX spelled out: the exps from the lookup, their sum normalised by its leading zeros, the reciprocal.
std::vector<int16_t> PlainSoftmax(const SoftmaxInt16Params& p, const std::vector<int16_t>& in) {
  std::vector<int16_t> out(in.size());
  for (int64_t row = 0; row < p.outer; ++row) {
    const auto first = in.begin() + row * p.depth;
    const int max = *std::max_element(first, first + p.depth);
    std::vector<int64_t> exps(p.depth);
    int64_t sum = 0;
    for (int64_t c = 0; c < p.depth; ++c) {
      const int64_t scaled = testing::ApplyDouble(first[c] - max, p.multiplier);
      exps[c] =
          LookupInt16(SoftmaxExpTable(), static_cast<int16_t>(std::clamp<int64_t>(scaled + 32767, -32768, 32767)));
      sum += exps[c];
    }
    int bits = 0;  // the sum's bit length
    while ((int64_t{1} << bits) <= sum) ++bits;
    const int64_t normalised = FloorDiv(sum * (int64_t{1} << (31 - bits)) + 8192, 16384);
    const int64_t reciprocal = LookupInt16(
        SoftmaxReciprocalTable(), static_cast<int16_t>(std::clamp<int64_t>(normalised - 98304, -32768, 32767)));
    const int64_t divisor = int64_t{1} << (bits - 1);
    for (int64_t c = 0; c < p.depth; ++c) {
      const int64_t v = FloorDiv(exps[c] * reciprocal + divisor / 2, divisor);
      out[row * p.depth + c] = static_cast<int16_t>(std::clamp<int64_t>(v, 0, 32767));
    }
  }
  return out;
}

TEST(SoftmaxInt16Test, MatchesThePlainFormulasAndTheFunction) {
  std::mt19937 rng(5);
  struct Case {
    float scale, beta;
    int64_t outer, depth;
    int spread;  // inputs drawn in [-spread, spread]
  };
  const Case cases[] = {{1e-5f, 1.0f, 4, 256, 32767},  {1e-4f, 1.0f, 8, 128, 32767},
                        {1e-3f, 1.0f, 2, 1000, 32767}, {1.0f / 1024, 1.0f, 64, 16, 2000},
                        {0.01f, 1.0f, 3, 7, 300},      {0.1f, 1.0f, 1, 37, 30},
                        {1.0f, 1.0f, 16, 8, 5},        {3e-4f, 0.5f, 16, 64, 32767},
                        {3e-4f, 2.0f, 16, 64, 32767},  {2e-5f, 1.0f, 1, 1, 32767},
                        {5e-4f, 1.0f, 200, 1, 100},    {100.0f, 1.0f, 2, 9, 32767}};
  for (const Case& c : cases) {
    SoftmaxInt16Params p;
    p.outer = c.outer;
    p.depth = c.depth;
    PrepareSoftmaxInt16(c.scale, c.beta, &p);
    EXPECT_EQ(p.multiplier.multiplier,
              QuantizeMultiplier(static_cast<double>(c.scale * c.beta) / (10.0 / 65535)).multiplier);
    std::uniform_int_distribution<int> dist(-c.spread, c.spread);
    std::vector<int16_t> in(static_cast<size_t>(c.outer * c.depth));
    for (int16_t& v : in) v = static_cast<int16_t>(dist(rng));
    in[0] = -32768;
    std::vector<int16_t> out(in.size());
    ASSERT_TRUE(SoftmaxInt16(p, in.data(), out.data()));
    EXPECT_EQ(out, PlainSoftmax(p, in)) << c.scale;
    // Near the real softmax where exp(-10) is negligible (the table ends at -10): a few steps, plus the
    // table's 2^-15 resolution of each exp relative to the sum. (Not at scale 100, where LiteRT's multiplier
    // shifts the differences left out of int32: the formula's wrapped result, as LiteRT's.)
    for (int64_t row = 0; row < c.outer && c.scale < 100; ++row) {
      double max = -1e30, sum = 0;
      for (int64_t k = 0; k < c.depth; ++k) max = std::max(max, static_cast<double>(in[row * c.depth + k]));
      for (int64_t k = 0; k < c.depth; ++k) sum += std::exp((in[row * c.depth + k] - max) * c.scale * c.beta);
      for (int64_t k = 0; k < c.depth; ++k) {
        const double exact = 32768.0 * std::exp((in[row * c.depth + k] - max) * c.scale * c.beta) / sum;
        ASSERT_LE(std::abs(out[row * c.depth + k] - std::min(exact, 32767.0)),
                  2.0 + 2.0 * c.depth * 2.0 / sum + 0.01 * exact)
            << c.scale << " row " << row;
      }
    }
  }
}

TEST(SoftmaxInt16Test, RowOfOneIsOneAndHugeRowsAreRefused) {
  SoftmaxInt16Params p;
  p.outer = 3;
  p.depth = 1;
  PrepareSoftmaxInt16(0.001f, 1.0f, &p);
  const int16_t in[] = {-32768, 0, 32767};
  int16_t out[3];
  ASSERT_TRUE(SoftmaxInt16(p, in, out));
  for (int16_t v : out) EXPECT_EQ(v, 32767);
  // 70000 equal elements: the sum of exps passes int32, which LiteRT's kernel does not handle.
  p.outer = 1;
  p.depth = 70000;
  std::vector<int16_t> big(70000, 5), big_out(70000);
  EXPECT_FALSE(SoftmaxInt16(p, big.data(), big_out.data()));
  p.depth = 65000;
  EXPECT_TRUE(SoftmaxInt16(p, big.data(), big_out.data()));
}

// MEAN int16 (LiteRT's QuantizedMeanOrSum): each output's inputs summed in int32, scaled by in_scale / out_scale
// with 1 / n folded into the multiplier (k = min(floor(log2 n), 32, 31 + shift): (q * 2^k) / n, shift - k), double
// rounding, clamped. SUM: in float, round(s * (in_scale / out_scale)). Outputs found by unravelling indices.
TEST(ReduceInt16Test, MeanAndSumMatchThePlainFormulas) {
  std::mt19937 rng(11);
  struct Case {
    Dims dims;
    std::vector<int32_t> axes;
    bool keep_dims;
    float in_scale, out_scale;
  };
  const Case cases[] = {{{2, 3, 4, 5}, {1, 2}, false, 1e-3f, 5e-4f},
                        {{2, 3, 4, 5}, {-1}, true, 1e-3f, 1e-3f},
                        {{2, 3, 4, 5}, {0, 1, 2, 3}, false, 1e-4f, 2e-4f},
                        {{1, 7, 9, 8}, {1, 2}, true, 1.0f / 1024, 1.0f / 4096},
                        {{3, 300, 4}, {1}, false, 1e-4f, 3e-5f},
                        {{5}, {0}, false, 0.01f, 0.02f},
                        {{2, 0, 3}, {1}, false, 1e-3f, 1e-3f},
                        {{4, 6}, {0, -1, 0}, true, 1e-5f, 2.0f}};
  for (const Case& c : cases) {
    for (bool is_sum : {false, true}) {
      ReduceInt8Params p;
      Dims out_dims;
      std::string error;
      ASSERT_TRUE(MakeMeanParams(c.dims, c.axes, c.keep_dims, &p.shape, &out_dims, &error)) << error;
      const float out_scale = is_sum ? c.out_scale * 16 : c.out_scale;
      PrepareReduceInt8(is_sum, c.in_scale, out_scale, &p);
      int64_t in_count = 1, out_count = 1, n = 1;
      for (size_t d = 0; d < c.dims.size(); ++d) {
        in_count *= c.dims[d];
        (p.shape.reduced[d] ? n : out_count) *= c.dims[d];
      }
      std::uniform_int_distribution<int> dist(-32768, 32767);
      std::vector<int16_t> in(static_cast<size_t>(in_count));
      for (int16_t& v : in) v = static_cast<int16_t>(dist(rng));
      std::vector<int16_t> out(static_cast<size_t>(out_count));
      ReduceQuantized<int16_t>(p, in.data(), out.data());
      // The plain formula: each input's output index from its coordinates.
      std::vector<int64_t> sums(static_cast<size_t>(out_count), 0);
      for (int64_t i = 0; i < in_count; ++i) {
        int64_t rest = i, o = 0, stride = 1;
        for (size_t k = c.dims.size(); k-- > 0;) {
          const int64_t coordinate = rest % c.dims[k];
          rest /= c.dims[k];
          if (!p.shape.reduced[k]) {
            o += coordinate * stride;
            stride *= c.dims[k];
          }
        }
        sums[static_cast<size_t>(o)] += in[static_cast<size_t>(i)];
      }
      const QuantizedMultiplier base = QuantizeMultiplier(static_cast<double>(c.in_scale) / out_scale);
      int k = 0;
      while (n > 0 && (int64_t{1} << (k + 1)) <= n) ++k;
      k = std::max(0, std::min({k, 32, 31 + base.shift}));
      const QuantizedMultiplier folded{
          static_cast<int32_t>(n > 0 ? (static_cast<int64_t>(base.multiplier) << k) / n : 0), base.shift - k};
      for (int64_t o = 0; o < out_count; ++o) {
        const int64_t s = sums[static_cast<size_t>(o)];  // |s| < 2^31 in these cases
        int64_t want = 0;
        if (n > 0) {
          want = is_sum ? static_cast<int64_t>(std::round(static_cast<float>(s) * (c.in_scale / out_scale)))
                        : testing::ApplyDouble(s, folded);
        }
        ASSERT_EQ(out[static_cast<size_t>(o)], std::clamp<int64_t>(want, -32768, 32767))
            << (is_sum ? "SUM" : "MEAN") << " output " << o;
        if (!is_sum && n > 0) {  // within a step of the real mean
          const double exact = static_cast<double>(s) / n * c.in_scale / out_scale;
          ASSERT_LE(std::abs(out[static_cast<size_t>(o)] - std::clamp(exact, -32768.0, 32767.0)), 1.0);
        }
      }
    }
  }
}

// REDUCE_PROD int8 / int16 spelled out: per output, its inputs found by unravelling indices, the product rescaled
// at each step by LiteRT's int64 multiply written again (the multiplier's top 16 bits, one rounding half up).
int64_t Int64Multiply(int64_t x, const QuantizedMultiplier& m) {
  const int64_t reduced = m.multiplier < 0x7FFF0000 ? (m.multiplier + 32768) / 65536 : 0x7FFF;
  const int64_t total_shift = 15 - m.shift;
  const int64_t result = FloorDiv(x * reduced + (int64_t{1} << (total_shift - 1)), int64_t{1} << total_shift);
  // LiteRT returns it as int32 (and keeps the running product in int32): wrapped to 32 bits.
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(result)));
}

template <typename T>
void CheckReduceProd(const Dims& dims, const std::vector<int32_t>& axes, float in_scale, int32_t in_zp, float out_scale,
                     int32_t out_zp, std::mt19937& rng) {
  ReduceProdQuantizedParams p;
  Dims out_dims;
  std::string error;
  ASSERT_TRUE(MakeMeanParams(dims, axes, false, &p.shape, &out_dims, &error)) << error;
  p.input_zero_point = in_zp;
  p.output_zero_point = out_zp;
  ASSERT_TRUE(PrepareReduceProdQuantized(in_scale, out_scale, &p));
  int64_t in_count = 1, out_count = 1, n = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    in_count *= dims[d];
    (p.shape.reduced[d] ? n : out_count) *= dims[d];
  }
  EXPECT_EQ(p.count, n);
  const QuantizedMultiplier m = QuantizeMultiplier(in_scale / std::pow(static_cast<double>(out_scale), 1.0 / n));
  EXPECT_EQ(p.multiplier.multiplier, m.multiplier);
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  std::vector<T> in(static_cast<size_t>(in_count));
  for (T& v : in) v = static_cast<T>(dist(rng));
  std::vector<T> out(static_cast<size_t>(out_count));
  ReduceProdQuantized<T>(p, in.data(), out.data());
  std::vector<int64_t> products(static_cast<size_t>(out_count));
  std::vector<int> seen(static_cast<size_t>(out_count), 0);
  for (int64_t i = 0; i < in_count; ++i) {
    int64_t rest = i, o = 0, stride = 1;
    for (size_t k = dims.size(); k-- > 0;) {
      const int64_t coordinate = rest % dims[k];
      rest /= dims[k];
      if (!p.shape.reduced[k]) {
        o += coordinate * stride;
        stride *= dims[k];
      }
    }
    const int64_t x = in[static_cast<size_t>(i)] - in_zp;
    int64_t& product = products[static_cast<size_t>(o)];
    product = seen[static_cast<size_t>(o)]++ == 0 ? x : Int64Multiply(product * x, m);
  }
  for (int64_t o = 0; o < out_count; ++o) {
    const int64_t want = std::clamp<int64_t>(Int64Multiply(products[static_cast<size_t>(o)], m) + out_zp,
                                             std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    ASSERT_EQ(out[static_cast<size_t>(o)], want) << "output " << o;
  }
}

TEST(ReduceProdQuantizedTest, Int8AndInt16MatchThePlainFormula) {
  std::mt19937 rng(13);
  CheckReduceProd<int8_t>({2, 3, 4, 5}, {1}, 0.05f, -3, 0.5f, 2, rng);
  CheckReduceProd<int8_t>({2, 3, 4, 5}, {-1}, 0.02f, 127, 0.01f, -128, rng);
  CheckReduceProd<int8_t>({6, 2}, {0}, 0.01f, -128, 1e-4f, 0, rng);
  CheckReduceProd<int8_t>({3, 4}, {0, 1}, 1.0f, 0, 64.0f, 0, rng);
  CheckReduceProd<int8_t>({7}, {0}, 0.1f, 5, 0.1f, 5, rng);
  CheckReduceProd<int16_t>({2, 3, 4, 5}, {1}, 1e-4f, 0, 1e-4f, 0, rng);
  CheckReduceProd<int16_t>({6, 3}, {0}, 1e-3f, 0, 1e-6f, 0, rng);
  CheckReduceProd<int16_t>({4, 2, 2}, {1, 2}, 0.01f, 0, 0.2f, 0, rng);
}

TEST(ReduceProdQuantizedTest, EmptyReductionIsOneAndHugeScalingIsRefused) {
  ReduceProdQuantizedParams p;
  Dims out_dims;
  std::string error;
  ASSERT_TRUE(MakeMeanParams({3, 0}, {1}, false, &p.shape, &out_dims, &error));
  p.output_zero_point = -5;
  ASSERT_TRUE(PrepareReduceProdQuantized(0.1f, 0.25f, &p));
  int8_t out[3];
  ReduceProdQuantized<int8_t>(p, nullptr, out);
  for (int8_t v : out) EXPECT_EQ(v, -1);  // 1 / 0.25 - 5
  ASSERT_TRUE(MakeMeanParams({3, 2}, {1}, false, &p.shape, &out_dims, &error));
  EXPECT_FALSE(PrepareReduceProdQuantized(1e5f, 1e-5f, &p));
}

// GELU int16: LiteRT's LUTPopulate<int16_t> in float written again (the same steps as PlainTable, in float), then
// the lookup; within 4 steps of the function (interpolating 512 samples) away from the output range's ends.
TEST(GeluInt16Test, TableInFloatAndLookup) {
  for (bool approximate : {false, true}) {
    for (const auto& [in_scale, in_zp, out_scale, out_zp] :
         {std::tuple<float, int32_t, float, int32_t>{1e-3f, 0, 1e-3f, 0},
          {3e-4f, 0, 2e-4f, 0},
          {0.2f, 0, 0.3f, 0},
          {2e-3f, 100, 1e-3f, -50}}) {
      Int16Table table;
      PrepareGeluInt16(approximate, in_scale, in_zp, out_scale, out_zp, &table);
      const float in_min = in_scale * static_cast<float>(-32768 - in_zp);
      const float in_max = in_scale * static_cast<float>(32767 - in_zp);
      const float inv =
          65536.0f / (out_scale * static_cast<float>(32767 - out_zp) - out_scale * static_cast<float>(-32768 - out_zp));
      const float step = (in_max - in_min) / 512.0f;
      const auto f = [approximate](float x) { return Gelu(approximate, x); };
      for (int i = 0; i <= 512; ++i) {
        float v = std::round(f(i == 512 ? in_max : in_min + static_cast<float>(i) * step) * inv);
        if (i < 512) {
          const float at = in_min + static_cast<float>(i) * step;
          const float interpolated = std::round((f(in_min + static_cast<float>(i + 1) * step) * inv + v) / 2.0f);
          v -= std::round((interpolated - std::round(f(at + step / 2.0f) * inv)) / 2.0f);
        }
        ASSERT_EQ(table.values[i], static_cast<int16_t>(std::clamp(v, -32768.0f, 32767.0f))) << i;
      }
      const std::vector<int16_t> in = AllInt16();
      std::vector<int16_t> out(in.size());
      LookupInt16(table, static_cast<int64_t>(in.size()), in.data(), out.data());
      for (size_t k = 0; k < in.size(); ++k) {
        ASSERT_EQ(out[k], LookupInt16(table, in[k]));
        if (in_zp == 0 && out_zp == 0) {
          const double x = static_cast<double>(in[k]) * in_scale;
          const double exact =
              std::clamp<double>(std::round(Gelu(approximate, static_cast<float>(x)) / out_scale), -32768.0, 32767.0);
          if (std::abs(exact) < 30000) { ASSERT_LE(std::abs(out[k] - exact), 4.0) << in[k] << " scale " << in_scale; }
        }
      }
    }
  }
}

// SOFTMAX int8 / uint8 -> int16: the multiplier and diff_min as LiteRT's PreprocessSoftmaxScaling written again,
// and every output within 3 steps of 65536 * softmax - 32768 (the gemmlowp exp and reciprocal are exact to a few
// units of 2^-31); the row maximum's share never below the others'.
TEST(SoftmaxTo16Test, MultiplierAndOutputsNearTheFunction) {
  std::mt19937 rng(17);
  for (const auto& [scale, beta, outer, depth] : {std::tuple<float, float, int64_t, int64_t>{0.1f, 1.0f, 4, 256},
                                                  {0.02f, 1.0f, 8, 128},
                                                  {1e-3f, 1.0f, 2, 300},
                                                  {0.5f, 0.5f, 16, 64},
                                                  {0.25f, 2.0f, 100, 3},
                                                  {1.0f, 1.0f, 3, 1}}) {
    SoftmaxTo16Params p;
    p.outer = outer;
    p.depth = depth;
    PrepareSoftmaxTo16(scale, beta, &p);
    const double real = std::min(static_cast<double>(beta) * scale * 67108864.0, 2147483647.0);
    EXPECT_EQ(p.multiplier.multiplier, QuantizeMultiplier(real).multiplier);
    EXPECT_EQ(p.diff_min, -static_cast<int32_t>(std::floor(31.0 * 67108864.0 / std::ldexp(1.0, p.multiplier.shift))));
    std::uniform_int_distribution<int> dist(-128, 127);
    std::vector<int8_t> in(static_cast<size_t>(outer * depth));
    for (int8_t& v : in) v = static_cast<int8_t>(dist(rng));
    std::vector<int16_t> out(in.size());
    ASSERT_TRUE(SoftmaxTo16<int8_t>(p, in.data(), out.data()));
    for (int64_t row = 0; row < outer; ++row) {
      double sum = 0;
      int max = -128;
      for (int64_t k = 0; k < depth; ++k) max = std::max<int>(max, in[static_cast<size_t>(row * depth + k)]);
      for (int64_t k = 0; k < depth; ++k)
        sum += std::exp((in[static_cast<size_t>(row * depth + k)] - max) * scale * beta);
      for (int64_t k = 0; k < depth; ++k) {
        const size_t i = static_cast<size_t>(row * depth + k);
        const double exact = 65536.0 * std::exp((in[i] - max) * static_cast<double>(scale) * beta) / sum - 32768.0;
        ASSERT_LE(std::abs(out[i] - std::min(exact, 32767.0)), 3.0) << scale << " row " << row << " k " << k;
      }
    }
    std::vector<uint8_t> in8(in.size());
    for (size_t i = 0; i < in.size(); ++i) in8[i] = static_cast<uint8_t>(in[i] + 128);
    std::vector<int16_t> out8(in.size());
    ASSERT_TRUE(SoftmaxTo16<uint8_t>(p, in8.data(), out8.data()));
    EXPECT_EQ(out8, out);  // the same differences from the row maximum
  }
}

}  // namespace
}  // namespace kiln::ops::reference
