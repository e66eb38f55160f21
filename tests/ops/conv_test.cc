// The reference convolutions against hand-computed cases, im2col and per-channel loops (ops/reference/conv.h).

#include "ops/reference/conv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>
#include <string>

#include "tests/ops/test_helpers.h"

namespace kiln::ops::reference {
namespace {

using testing::ExpectAllNear;
using testing::RandomFloats;

WindowSize Window(Padding padding, int64_t in, int64_t filter, int64_t stride, int64_t dilation = 1) {
  WindowSize w;
  EXPECT_TRUE(ComputeWindowSize(padding, in, filter, stride, dilation, &w));
  return w;
}

void ExpectWindow(const WindowSize& w, int64_t output, int64_t before, int64_t after) {
  EXPECT_EQ(w.output, output);
  EXPECT_EQ(w.pad_before, before);
  EXPECT_EQ(w.pad_after, after);
}

TEST(WindowSizeTest, MatchesTfliteArithmetic) {
  ExpectWindow(Window(Padding::kSame, 5, 3, 1), 5, 1, 1);
  ExpectWindow(Window(Padding::kSame, 5, 3, 2), 3, 1, 1);
  ExpectWindow(Window(Padding::kSame, 6, 3, 2), 3, 0, 1);  // odd total: the extra cell goes after
  ExpectWindow(Window(Padding::kSame, 4, 4, 1), 4, 1, 2);
  ExpectWindow(Window(Padding::kSame, 7, 3, 1, 2), 7, 2, 2);  // dilation 2: effective filter 5
  ExpectWindow(Window(Padding::kSame, 10, 1, 3), 4, 0, 0);    // stride > filter
  ExpectWindow(Window(Padding::kSame, 1, 3, 1), 1, 1, 1);
  ExpectWindow(Window(Padding::kSame, 224, 3, 2), 112, 0, 1);
  ExpectWindow(Window(Padding::kValid, 5, 3, 1), 3, 0, 0);
  ExpectWindow(Window(Padding::kValid, 5, 3, 2), 2, 0, 0);
  ExpectWindow(Window(Padding::kValid, 6, 3, 2), 2, 0, 0);
  ExpectWindow(Window(Padding::kValid, 7, 3, 1, 3), 1, 0, 0);
  ExpectWindow(Window(Padding::kValid, 2, 3, 1), 0, 0, 0);  // the filter does not fit: empty output
  ExpectWindow(Window(Padding::kValid, 1, 5, 3), 0, 0, 0);  // C division truncates -1/3 to 0
  WindowSize w;
  EXPECT_FALSE(ComputeWindowSize(Padding::kValid, 1, 5, 1, 1, &w));  // negative output
  EXPECT_FALSE(ComputeWindowSize(Padding::kSame, 5, 3, 0, 1, &w));
  EXPECT_FALSE(ComputeWindowSize(Padding::kSame, 5, 0, 1, 1, &w));
  EXPECT_FALSE(ComputeWindowSize(Padding::kSame, 5, 3, 1, 0, &w));
  EXPECT_FALSE(ComputeWindowSize(Padding::kSame, -1, 3, 1, 1, &w));
}

TEST(WindowSizeTest, SamePaddingProperties) {
  for (int64_t in = 1; in <= 12; ++in) {
    for (int64_t filter = 1; filter <= 5; ++filter) {
      for (int64_t stride = 1; stride <= 4; ++stride) {
        for (int64_t dilation = 1; dilation <= 3; ++dilation) {
          const WindowSize w = Window(Padding::kSame, in, filter, stride, dilation);
          EXPECT_EQ(w.output, static_cast<int64_t>(std::ceil(double(in) / double(stride))));
          const int64_t needed = (w.output - 1) * stride + (filter - 1) * dilation + 1;
          EXPECT_EQ(w.pad_before + w.pad_after, std::max<int64_t>(0, needed - in));
          EXPECT_TRUE(w.pad_after == w.pad_before || w.pad_after == w.pad_before + 1);
        }
      }
    }
  }
}

TEST(ConvFloatTest, HandComputed) {
  // A 3x3 image 1..9 and a 2x2 filter summing the top-left and bottom-right taps.
  const std::vector<float> input = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<float> filter = {1, 0, 0, 1};
  ConvParams p;
  p.batch = 1;
  p.input_height = p.input_width = 3;
  p.input_channels = p.output_channels = 1;
  p.filter_height = p.filter_width = 2;
  p.output_height = p.output_width = 2;  // VALID
  std::vector<float> out(4);
  const float bias = 1;
  ConvFloat(p, input.data(), filter.data(), &bias, out.data());
  EXPECT_EQ(out, (std::vector<float>{7, 9, 13, 15}));
  // SAME: 3x3 output, padding (0, 1) on both axes.
  p.output_height = p.output_width = 3;
  out.assign(9, 0);
  ConvFloat(p, input.data(), filter.data(), nullptr, out.data());
  EXPECT_EQ(out, (std::vector<float>{6, 8, 3, 12, 14, 6, 7, 8, 9}));
  // RELU clips, and two output channels with two input channels mix correctly.
  ConvParams q;
  q.batch = 1;
  q.input_height = q.input_width = 1;
  q.input_channels = 2;
  q.output_channels = 2;
  q.filter_height = q.filter_width = 1;
  q.output_height = q.output_width = 1;
  q.activation = Activation::kRelu;
  const std::vector<float> in2 = {2, 3};
  const std::vector<float> f2 = {1, 1, 1, -1};  // out0 = a + b, out1 = a - b
  std::vector<float> out2(2);
  ConvFloat(q, in2.data(), f2.data(), nullptr, out2.data());
  EXPECT_EQ(out2, (std::vector<float>{5, 0}));
}

// Convolution as explicit im2col + matrix multiply, per group.
std::vector<double> NaiveConv(const ConvParams& p, const std::vector<float>& input,
                              const std::vector<float>& filter, const std::vector<float>& bias) {
  const int64_t gic = p.input_channels / p.groups, goc = p.output_channels / p.groups;
  const int64_t rows = p.batch * p.output_height * p.output_width;
  const int64_t cols = p.filter_height * p.filter_width * gic;
  std::vector<double> out(rows * p.output_channels);
  for (int64_t g = 0; g < p.groups; ++g) {
    std::vector<double> patches(rows * cols, 0.0);
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t oy = 0; oy < p.output_height; ++oy)
        for (int64_t ox = 0; ox < p.output_width; ++ox) {
          const int64_t row = (b * p.output_height + oy) * p.output_width + ox;
          for (int64_t fy = 0; fy < p.filter_height; ++fy)
            for (int64_t fx = 0; fx < p.filter_width; ++fx)
              for (int64_t c = 0; c < gic; ++c) {
                const int64_t y = oy * p.stride_height + fy * p.dilation_height - p.pad_top;
                const int64_t x = ox * p.stride_width + fx * p.dilation_width - p.pad_left;
                const int64_t col = (fy * p.filter_width + fx) * gic + c;
                if (y >= 0 && y < p.input_height && x >= 0 && x < p.input_width) {
                  patches[row * cols + col] =
                      input[((b * p.input_height + y) * p.input_width + x) * p.input_channels + g * gic + c];
                }
              }
        }
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t j = 0; j < goc; ++j) {
        const int64_t oc = g * goc + j;
        double sum = bias.empty() ? 0.0 : bias[oc];
        for (int64_t k = 0; k < cols; ++k) sum += patches[row * cols + k] * filter[oc * cols + k];
        if (p.activation == Activation::kRelu6) sum = std::min(6.0, std::max(0.0, sum));
        out[row * p.output_channels + oc] = sum;
      }
  }
  return out;
}

TEST(ConvFloatTest, MatchesIm2ColOverManyShapes) {
  uint32_t seed = 100;
  int cases = 0;
  for (int64_t batch : {1, 2})
    for (int64_t h : {1, 2, 5, 7})
      for (int64_t w : {1, 3, 6})
        for (int64_t k : {1, 2, 3})
          for (int64_t stride : {1, 2, 3})
            for (int64_t dilation : {1, 2})
              for (Padding padding : {Padding::kSame, Padding::kValid}) {
                // Vary channels, groups and kernel aspect with the case number so the sweep stays small.
                const int64_t groups = (seed % 3 == 0) ? 2 : 1;
                const int64_t in_c = groups * (1 + seed % 3);
                const int64_t out_c = groups * (1 + (seed / 3) % 3);
                const int64_t kw = (seed % 5 == 0) ? k + 1 : k;
                WindowSize rows, cols;
                if (!ComputeWindowSize(padding, h, k, stride, dilation, &rows) ||
                    !ComputeWindowSize(padding, w, kw, stride, dilation, &cols)) {
                  ++seed;
                  continue;
                }
                ConvParams p;
                p.batch = batch;
                p.input_height = h;
                p.input_width = w;
                p.input_channels = in_c;
                p.output_height = rows.output;
                p.output_width = cols.output;
                p.output_channels = out_c;
                p.filter_height = k;
                p.filter_width = kw;
                p.stride_height = stride;
                p.stride_width = stride;
                p.dilation_height = dilation;
                p.dilation_width = dilation;
                p.pad_top = rows.pad_before;
                p.pad_left = cols.pad_before;
                p.groups = groups;
                p.activation = seed % 4 == 0 ? Activation::kRelu6 : Activation::kNone;
                const auto input = RandomFloats(batch * h * w * in_c, seed++);
                const auto filter = RandomFloats(out_c * k * kw * (in_c / groups), seed++);
                const auto bias = seed % 2 ? RandomFloats(out_c, seed) : std::vector<float>();
                std::vector<float> out(batch * p.output_height * p.output_width * out_c, -999.0f);
                ConvFloat(p, input.data(), filter.data(), bias.empty() ? nullptr : bias.data(), out.data());
                ExpectAllNear(out, NaiveConv(p, input, filter, bias),
                              "conv b" + std::to_string(batch) + " h" + std::to_string(h) + " w" +
                                  std::to_string(w) + " k" + std::to_string(k) + "x" + std::to_string(kw) +
                                  " s" + std::to_string(stride) + " d" + std::to_string(dilation) + " g" +
                                  std::to_string(groups));
                ++cases;
              }
  EXPECT_GT(cases, 500);
}

// Depthwise convolution per channel: copy the channel into an explicitly zero-padded image, then correlate.
std::vector<double> NaiveDepthwise(const DepthwiseConvParams& p, const std::vector<float>& input,
                                   const std::vector<float>& filter, const std::vector<float>& bias) {
  const int64_t oc_count = p.input_channels * p.depth_multiplier;
  const int64_t eff_h = (p.filter_height - 1) * p.dilation_height + 1;
  const int64_t eff_w = (p.filter_width - 1) * p.dilation_width + 1;
  const int64_t ph = std::max(p.pad_top + p.input_height, (p.output_height - 1) * p.stride_height + eff_h);
  const int64_t pw = std::max(p.pad_left + p.input_width, (p.output_width - 1) * p.stride_width + eff_w);
  std::vector<double> out(p.batch * p.output_height * p.output_width * oc_count);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t c = 0; c < p.input_channels; ++c) {
      std::vector<double> padded(ph * pw, 0.0);
      for (int64_t y = 0; y < p.input_height; ++y)
        for (int64_t x = 0; x < p.input_width; ++x)
          padded[(y + p.pad_top) * pw + x + p.pad_left] =
              input[((b * p.input_height + y) * p.input_width + x) * p.input_channels + c];
      for (int64_t m = 0; m < p.depth_multiplier; ++m) {
        const int64_t oc = c * p.depth_multiplier + m;
        for (int64_t oy = 0; oy < p.output_height; ++oy)
          for (int64_t ox = 0; ox < p.output_width; ++ox) {
            double sum = bias.empty() ? 0.0 : bias[oc];
            for (int64_t fy = 0; fy < p.filter_height; ++fy)
              for (int64_t fx = 0; fx < p.filter_width; ++fx)
                sum += padded[(oy * p.stride_height + fy * p.dilation_height) * pw + ox * p.stride_width +
                              fx * p.dilation_width] *
                       filter[(fy * p.filter_width + fx) * oc_count + oc];
            out[((b * p.output_height + oy) * p.output_width + ox) * oc_count + oc] = sum;
          }
      }
    }
  return out;
}

TEST(DepthwiseConvFloatTest, HandComputed) {
  // Two channels, multiplier 2: channel 0 scaled by 1 and 2, channel 1 by 3 and 4; 1x1 filter.
  DepthwiseConvParams p;
  p.batch = 1;
  p.input_height = p.input_width = 1;
  p.input_channels = 2;
  p.depth_multiplier = 2;
  p.filter_height = p.filter_width = 1;
  p.output_height = p.output_width = 1;
  const std::vector<float> input = {10, 100};
  const std::vector<float> filter = {1, 2, 3, 4};
  const std::vector<float> bias = {0.5f, 0, 0, -1};
  std::vector<float> out(4);
  DepthwiseConvFloat(p, input.data(), filter.data(), bias.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{10.5f, 20, 300, 399}));
}

TEST(DepthwiseConvFloatTest, MatchesPerChannelLoopsOverManyShapes) {
  uint32_t seed = 7;
  int cases = 0;
  for (int64_t batch : {1, 2})
    for (int64_t h : {1, 3, 4, 7})
      for (int64_t w : {1, 2, 5})
        for (int64_t k : {1, 2, 3})
          for (int64_t stride : {1, 2, 3})
            for (int64_t dilation : {1, 2})
              for (Padding padding : {Padding::kSame, Padding::kValid}) {
                const int64_t channels = 1 + seed % 3;
                const int64_t multiplier = 1 + (seed / 3) % 3;
                WindowSize rows, cols;
                if (!ComputeWindowSize(padding, h, k, stride, dilation, &rows) ||
                    !ComputeWindowSize(padding, w, k, stride, dilation, &cols)) {
                  ++seed;
                  continue;
                }
                DepthwiseConvParams p;
                p.batch = batch;
                p.input_height = h;
                p.input_width = w;
                p.input_channels = channels;
                p.depth_multiplier = multiplier;
                p.output_height = rows.output;
                p.output_width = cols.output;
                p.filter_height = k;
                p.filter_width = k;
                p.stride_height = stride;
                p.stride_width = stride;
                p.dilation_height = dilation;
                p.dilation_width = dilation;
                p.pad_top = rows.pad_before;
                p.pad_left = cols.pad_before;
                const int64_t oc = channels * multiplier;
                const auto input = RandomFloats(batch * h * w * channels, seed++);
                const auto filter = RandomFloats(k * k * oc, seed++);
                const auto bias = seed % 2 ? RandomFloats(oc, seed) : std::vector<float>();
                std::vector<float> out(batch * p.output_height * p.output_width * oc, -999.0f);
                DepthwiseConvFloat(p, input.data(), filter.data(), bias.empty() ? nullptr : bias.data(),
                                   out.data());
                ExpectAllNear(out, NaiveDepthwise(p, input, filter, bias),
                              "depthwise h" + std::to_string(h) + " w" + std::to_string(w) + " k" +
                                  std::to_string(k) + " s" + std::to_string(stride) + " d" +
                                  std::to_string(dilation) + " c" + std::to_string(channels) + " m" +
                                  std::to_string(multiplier));
                ++cases;
              }
  EXPECT_GT(cases, 300);
}

TEST(ConvFloatTest, ZeroSizedBatchWritesNothing) {
  ConvParams p;
  p.batch = 0;
  p.input_height = p.input_width = 3;
  p.input_channels = p.output_channels = 1;
  p.filter_height = p.filter_width = 1;
  p.output_height = p.output_width = 3;
  // Every buffer holds a sentinel: an empty batch reads nothing and writes nothing.
  std::vector<float> input(9, 7.0f), filter(1, 7.0f), bias(1, 7.0f), output(9, -1.0f);
  ConvFloat(p, input.data(), filter.data(), bias.data(), output.data());
  EXPECT_EQ(output, std::vector<float>(9, -1.0f));
  DepthwiseConvParams d;
  d.batch = 0;
  d.input_height = d.input_width = 3;
  d.input_channels = 1;
  d.filter_height = d.filter_width = 1;
  d.output_height = d.output_width = 3;
  DepthwiseConvFloat(d, input.data(), filter.data(), bias.data(), output.data());
  EXPECT_EQ(output, std::vector<float>(9, -1.0f));
}


// TRANSPOSE_CONV float: the scatter kernel against a gather written from the definition (output (oy, ox)
// collects input (y, x) where oy = y * stride - pad + fy), with bias and a fused RELU6; and LiteRT's padding.
TEST(TransposeConvFloatTest, MatchesGatherOverManyShapes) {
  uint32_t seed = 1;
  const auto next = [&seed]() {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int>(seed >> 9) % 2001 - 1000) / 250.0f;
  };
  for (int64_t size : {1, 2, 5}) {
    for (int64_t stride : {1, 2, 3}) {
      for (int64_t kernel : {1, 3, 4}) {
        for (int64_t pad : {int64_t{0}, int64_t{1}}) {
          TransposeConvParams p;
          p.batch = 2;
          p.input_height = size;
          p.input_width = size + 2;
          p.input_channels = 2;
          p.output_channels = 3;
          p.filter_height = kernel;
          p.filter_width = kernel;
          p.stride_height = stride;
          p.stride_width = stride;
          p.pad_top = pad;
          p.pad_left = pad;
          p.output_height = size * stride + 1;
          p.output_width = (size + 2) * stride;
          p.activation = kernel == 3 ? Activation::kRelu6 : Activation::kNone;
          std::vector<float> x(static_cast<size_t>(2 * size * (size + 2) * 2)), f(static_cast<size_t>(3 * kernel * kernel * 2));
          for (float& v : x) v = next();
          for (float& v : f) v = next();
          const std::vector<float> bias = {0.5f, -1.0f, 2.0f};
          std::vector<float> out(static_cast<size_t>(2 * p.output_height * p.output_width * 3));
          TransposeConvFloat(p, x.data(), f.data(), bias.data(), out.data());
          size_t k = 0;
          for (int64_t b = 0; b < 2; ++b) {
            for (int64_t oy = 0; oy < p.output_height; ++oy) {
              for (int64_t ox = 0; ox < p.output_width; ++ox) {
                for (int64_t co = 0; co < 3; ++co) {
                  double acc = 0;
                  for (int64_t y = 0; y < p.input_height; ++y) {
                    for (int64_t xx = 0; xx < p.input_width; ++xx) {
                      const int64_t fy = oy - (y * stride - pad), fx = ox - (xx * stride - pad);
                      if (fy < 0 || fy >= kernel || fx < 0 || fx >= kernel) continue;
                      for (int64_t ci = 0; ci < 2; ++ci) {
                        acc += double{x[static_cast<size_t>(((b * p.input_height + y) * p.input_width + xx) * 2 + ci)]} *
                               f[static_cast<size_t>(((co * kernel + fy) * kernel + fx) * 2 + ci)];
                      }
                    }
                  }
                  acc += bias[static_cast<size_t>(co)];
                  if (p.activation == Activation::kRelu6) acc = std::min(std::max(acc, 0.0), 6.0);
                  ASSERT_NEAR(out[k++], acc, 1e-4) << size << " " << stride << " " << kernel << " " << pad;
                }
              }
            }
          }
        }
      }
    }
  }
  // Padding: a SAME 3x3, stride 2 transpose convolution to 8 rows is a convolution of 8 rows to 4, total
  // padding (4 - 1) * 2 + 3 - 8 = 1, leading 0; VALID pads nothing; to 7 rows: (4 - 1) * 2 + 3 - 7 = 2, leading 1.
  int64_t pad = -1;
  ASSERT_TRUE(TransposeConvPadding(Padding::kSame, 8, 3, 2, &pad));
  EXPECT_EQ(pad, 0);
  ASSERT_TRUE(TransposeConvPadding(Padding::kSame, 7, 3, 2, &pad));
  EXPECT_EQ(pad, 1);
  ASSERT_TRUE(TransposeConvPadding(Padding::kValid, 9, 3, 2, &pad));
  EXPECT_EQ(pad, 0);
}

}  // namespace
}  // namespace kiln::ops::reference
