// The CONV_3D reference kernel against a plain formulation written here: each output element sums over every
// input position, keeping those a filter tap lands on ((i + pad - o * stride) a multiple of the dilation, inside
// the filter), rather than over the filter taps. Random shapes, SAME and VALID, strides, dilations, bias,
// activations, empty outputs.
#include "ops/reference/conv3d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace kiln::ops::reference {
namespace {

std::vector<float> Plain(const Conv3DShape& s, const std::vector<float>& in, const std::vector<float>& f,
                         const float* bias) {
  std::vector<float> out;
  const int64_t D = s.in_depth, H = s.in_height, W = s.in_width, C = s.in_channels, O = s.out_channels;
  for (int64_t n = 0; n < s.batches; ++n)
    for (int64_t z = 0; z < s.depth.output; ++z)
      for (int64_t y = 0; y < s.rows.output; ++y)
        for (int64_t x = 0; x < s.cols.output; ++x)
          for (int64_t o = 0; o < O; ++o) {
            double total = bias ? bias[o] : 0.0;
            for (int64_t iz = 0; iz < D; ++iz) {
              const int64_t dz = iz + s.depth.pad_before - z * s.stride_depth;
              if (dz < 0 || dz % s.dilation_depth != 0 || dz / s.dilation_depth >= s.filter_depth) continue;
              for (int64_t iy = 0; iy < H; ++iy) {
                const int64_t dy = iy + s.rows.pad_before - y * s.stride_height;
                if (dy < 0 || dy % s.dilation_height != 0 || dy / s.dilation_height >= s.filter_height) continue;
                for (int64_t ix = 0; ix < W; ++ix) {
                  const int64_t dx = ix + s.cols.pad_before - x * s.stride_width;
                  if (dx < 0 || dx % s.dilation_width != 0 || dx / s.dilation_width >= s.filter_width) continue;
                  const int64_t kz = dz / s.dilation_depth, ky = dy / s.dilation_height, kx = dx / s.dilation_width;
                  for (int64_t c = 0; c < C; ++c) {
                    total += double(in[(((n * D + iz) * H + iy) * W + ix) * C + c]) *
                             f[(((kz * s.filter_height + ky) * s.filter_width + kx) * C + c) * O + o];
                  }
                }
              }
            }
            out.push_back(Activate(s.activation, static_cast<float>(total)));
          }
  return out;
}

TEST(Conv3DTest, RandomShapesAgainstPlainFormulation) {
  std::mt19937 gen(21);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(gen() % static_cast<unsigned>(hi - lo + 1)); };
  const Activation activations[] = {Activation::kNone, Activation::kRelu, Activation::kRelu6, Activation::kReluN1To1};
  int nonempty = 0;
  for (int trial = 0; trial < 120; ++trial) {
    Conv3DShape s;
    s.batches = pick(1, 2);
    s.in_depth = pick(1, 6), s.in_height = pick(1, 6), s.in_width = pick(1, 6);
    s.in_channels = pick(1, 3), s.out_channels = pick(1, 3);
    s.filter_depth = pick(1, 3), s.filter_height = pick(1, 3), s.filter_width = pick(1, 3);
    s.stride_depth = pick(1, 3), s.stride_height = pick(1, 3), s.stride_width = pick(1, 3);
    s.dilation_depth = pick(1, 2), s.dilation_height = pick(1, 2), s.dilation_width = pick(1, 2);
    s.activation = activations[trial % 4];
    const Padding padding = trial % 2 ? Padding::kSame : Padding::kValid;
    // A VALID filter larger than the input has no output size: the op refuses it in Prepare.
    if (!ComputeWindowSize(padding, s.in_depth, s.filter_depth, s.stride_depth, s.dilation_depth, &s.depth) ||
        !ComputeWindowSize(padding, s.in_height, s.filter_height, s.stride_height, s.dilation_height, &s.rows) ||
        !ComputeWindowSize(padding, s.in_width, s.filter_width, s.stride_width, s.dilation_width, &s.cols)) {
      continue;
    }
    std::vector<float> in(s.batches * s.in_depth * s.in_height * s.in_width * s.in_channels);
    std::vector<float> f(s.filter_depth * s.filter_height * s.filter_width * s.in_channels * s.out_channels);
    std::vector<float> bias(s.out_channels);
    for (float& v : in) v = value(gen);
    for (float& v : f) v = value(gen);
    for (float& v : bias) v = value(gen);
    const float* b = trial % 3 ? bias.data() : nullptr;
    const std::vector<float> want = Plain(s, in, f, b);
    std::vector<float> got(want.size(), -99.0f);
    Conv3D(s, in.data(), f.data(), b, got.data());
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << "trial " << trial << " " << i;
    nonempty += !want.empty();
  }
  EXPECT_GT(nonempty, 60);
}

TEST(Conv3DTest, HandCase) {
  // 1x2x2x2x1 input, 2x2x2x1x1 filter of ones, VALID: the sum of the input, plus the bias.
  Conv3DShape s;
  s.batches = 1, s.in_depth = 2, s.in_height = 2, s.in_width = 2, s.in_channels = 1, s.out_channels = 1;
  s.filter_depth = 2, s.filter_height = 2, s.filter_width = 2;
  ASSERT_TRUE(ComputeWindowSize(Padding::kValid, 2, 2, 1, 1, &s.depth));
  ASSERT_TRUE(ComputeWindowSize(Padding::kValid, 2, 2, 1, 1, &s.rows));
  ASSERT_TRUE(ComputeWindowSize(Padding::kValid, 2, 2, 1, 1, &s.cols));
  const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8}, f(8, 1.0f);
  const float bias = 0.5f;
  float out = 0;
  Conv3D(s, in.data(), f.data(), &bias, &out);
  EXPECT_EQ(out, 36.5f);
  s.activation = Activation::kRelu6;
  Conv3D(s, in.data(), f.data(), &bias, &out);
  EXPECT_EQ(out, 6.0f);
}

// CONV_3D_TRANSPOSE written from the output side: each output element gathers every (input position, tap) that
// lands on it.
std::vector<float> PlainTranspose(const Conv3DShape& s, const std::vector<float>& in, const std::vector<float>& f,
                                  const float* bias) {
  const int64_t OC = s.in_channels, IC = s.out_channels;
  std::vector<float> out;
  for (int64_t n = 0; n < s.batches; ++n)
    for (int64_t oz = 0; oz < s.in_depth; ++oz)
      for (int64_t oy = 0; oy < s.in_height; ++oy)
        for (int64_t ox = 0; ox < s.in_width; ++ox)
          for (int64_t o = 0; o < OC; ++o) {
            double total = 0;
            for (int64_t z = 0; z < s.depth.output; ++z)
              for (int64_t kz = 0; kz < s.filter_depth; ++kz) {
                if (z * s.stride_depth - s.depth.pad_before + kz * s.dilation_depth != oz) continue;
                for (int64_t y = 0; y < s.rows.output; ++y)
                  for (int64_t ky = 0; ky < s.filter_height; ++ky) {
                    if (y * s.stride_height - s.rows.pad_before + ky * s.dilation_height != oy) continue;
                    for (int64_t x = 0; x < s.cols.output; ++x)
                      for (int64_t kx = 0; kx < s.filter_width; ++kx) {
                        if (x * s.stride_width - s.cols.pad_before + kx * s.dilation_width != ox) continue;
                        for (int64_t c = 0; c < IC; ++c) {
                          total +=
                              double(
                                  in[(((n * s.depth.output + z) * s.rows.output + y) * s.cols.output + x) * IC + c]) *
                              f[(((kz * s.filter_height + ky) * s.filter_width + kx) * OC + o) * IC + c];
                        }
                      }
                  }
              }
            if (bias != nullptr) total += bias[o];
            out.push_back(Activate(s.activation, static_cast<float>(total)));
          }
  return out;
}

TEST(Conv3DTransposeTest, RandomShapesAgainstPlainFormulation) {
  std::mt19937 gen(23);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(gen() % static_cast<unsigned>(hi - lo + 1)); };
  int run = 0;
  for (int trial = 0; trial < 120; ++trial) {
    Conv3DShape s;  // the forward convolution from the transpose's output to its input
    s.batches = pick(1, 2);
    s.in_depth = pick(1, 6), s.in_height = pick(1, 6), s.in_width = pick(1, 6);
    s.in_channels = pick(1, 3), s.out_channels = pick(1, 3);
    s.filter_depth = pick(1, 3), s.filter_height = pick(1, 3), s.filter_width = pick(1, 3);
    s.stride_depth = pick(1, 3), s.stride_height = pick(1, 3), s.stride_width = pick(1, 3);
    s.dilation_depth = pick(1, 2), s.dilation_height = pick(1, 2), s.dilation_width = pick(1, 2);
    s.activation = trial % 2 ? Activation::kRelu : Activation::kNone;
    const Padding padding = trial % 3 ? Padding::kSame : Padding::kValid;
    if (!ComputeWindowSize(padding, s.in_depth, s.filter_depth, s.stride_depth, s.dilation_depth, &s.depth) ||
        !ComputeWindowSize(padding, s.in_height, s.filter_height, s.stride_height, s.dilation_height, &s.rows) ||
        !ComputeWindowSize(padding, s.in_width, s.filter_width, s.stride_width, s.dilation_width, &s.cols)) {
      continue;
    }
    std::vector<float> in(s.batches * s.depth.output * s.rows.output * s.cols.output * s.out_channels);
    std::vector<float> f(s.filter_depth * s.filter_height * s.filter_width * s.in_channels * s.out_channels);
    std::vector<float> bias(s.in_channels);
    for (float& v : in) v = value(gen);
    for (float& v : f) v = value(gen);
    for (float& v : bias) v = value(gen);
    const float* b = trial % 4 ? bias.data() : nullptr;
    const std::vector<float> want = PlainTranspose(s, in, f, b);
    std::vector<float> got(want.size(), -99.0f);
    Conv3DTranspose(s, in.data(), f.data(), b, got.data());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << "trial " << trial << " " << i;
    ++run;
  }
  EXPECT_GT(run, 60);
}

}  // namespace
}  // namespace kiln::ops::reference
