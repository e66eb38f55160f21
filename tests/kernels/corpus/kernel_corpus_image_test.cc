// kernel_corpus_tests, images: kernels as RenderScript apps wrote them (greyscale, levels, color matrix, 3x3
// convolution, a separable blur script, vignette) over uchar4 pixels (tests/kernels/corpus/image_*.rs).
#include "tests/kernels/corpus/kernel_corpus_fixture.h"

namespace kiln {
namespace corpus {
namespace {

// ---------------------------------------------------------------------------------------------------------
// Image kernels as RenderScript apps wrote them: uchar4 pixels in a uint8 tensor [H, W, 4] (or [W, 4])

// Within one step of 255 per channel (rs_fp_relaxed: a contracted weighted sum may round across .5).
void ExpectWithinOne(const std::vector<uint8_t>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  Mismatches bad;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(got[i] - want[i]) > 1.0) bad.Add(i / 4, std::string(what) + " lane " + std::to_string(i % 4) +
                                                          " got " + Text(got[i]) + " want " + Text(want[i]));
  }
  EXPECT_EQ(bad.count(), 0) << bad.Report();
}
// (uchar)(clamp(v, 0, 1) * 255 + 0.5) in exact arithmetic.
double PackExact(double v) { return std::floor(std::min(std::max(v, 0.0), 1.0) * 255 + 0.5); }

std::vector<uint8_t> RandomImage(size_t pixels, uint32_t seed) {
  // Smooth-ish content with noise, like a photo, rather than pure noise.
  auto px = RandomFull<uint8_t>(4 * pixels, seed);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>((px[i] / 4) + ((i / 4) % 191));
  return px;
}

TEST_F(Corpus, ImageGreyscale) {
  KilnScript* s = Script("image_grey");
  ASSERT_NE(s, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto px = RandomImage(n, 1800);
    const auto out = Map<uint8_t>(s, "grey", {In(cells, 4, px)}, cells, 4);
    std::vector<double> want(4 * n);
    for (size_t k = 0; k < n; ++k) {
      const double y = (0.2126 * px[4 * k] + 0.7152 * px[4 * k + 1] + 0.0722 * px[4 * k + 2]) / 255.0;
      want[4 * k] = want[4 * k + 1] = want[4 * k + 2] = PackExact(y);
      want[4 * k + 3] = px[4 * k + 3];
    }
    ExpectWithinOne(out, want, "grey");
    Release();
  }
}

TEST_F(Corpus, ImageLevels) {
  KilnScript* s = Script("image_levels");
  ASSERT_NE(s, nullptr) << messages_.All();
  const float args[6] = {20.0f, 230.0f, 10.0f, 250.0f, 0.8f, 1.3f};
  ASSERT_EQ(KilnScriptInvoke(s, "setLevels", args, sizeof args), kKilnOk) << messages_.All();
  const double sat = args[5];
  const double w[3] = {0.299 * (1 - sat), 0.587 * (1 - sat), 0.114 * (1 - sat)};
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto px = RandomImage(n, 1900);
    const auto out = Map<uint8_t>(s, "levels", {In(cells, 4, px)}, cells, 4);
    std::vector<double> want(4 * n);
    for (size_t k = 0; k < n; ++k) {
      const uint8_t* p = &px[4 * k];
      for (int ch = 0; ch < 3; ++ch) {
        // Row ch of the column-major saturation matrix: w[col] + (col == ch ? sat : 0).
        double v = 0;
        for (int col = 0; col < 3; ++col) v += (w[col] + (col == ch ? sat : 0.0)) * p[col];
        v = std::min(std::max((v - args[0]) / (args[1] - args[0]), 0.0), 1.0);
        v = std::pow(v, static_cast<double>(args[4]));
        want[4 * k + ch] = std::floor(std::min(std::max(v * (args[3] - args[2]) + args[2] + 0.5, 0.0), 255.0));
      }
      want[4 * k + 3] = p[3];
    }
    ExpectWithinOne(out, want, "levels");
    Release();
  }
}

TEST_F(Corpus, ImageColorMatrix) {
  KilnScript* s = Script("image_color_matrix");
  ASSERT_NE(s, nullptr) << messages_.All();
  // Sepia on RGB (column-major), alpha kept, plus a small offset.
  const float m[16] = {0.393f, 0.349f, 0.272f, 0, 0.769f, 0.686f, 0.534f, 0, 0.189f, 0.168f, 0.131f, 0, 0, 0, 0, 1};
  const float add[4] = {0.02f, -0.01f, 0.0f, 0.0f};
  ASSERT_EQ(KilnScriptSetGlobal(s, "gMatrix", m, sizeof m), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptSetGlobal(s, "gAdd", add, sizeof add), kKilnOk) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto px = RandomImage(n, 2000);
    const auto out = Map<uint8_t>(s, "color_matrix", {In(cells, 4, px)}, cells, 4);
    std::vector<double> want(4 * n);
    for (size_t k = 0; k < n; ++k) {
      for (int r = 0; r < 4; ++r) {
        double v = add[r];
        for (int c = 0; c < 4; ++c) v += static_cast<double>(m[c * 4 + r]) * (px[4 * k + c] / 255.0);
        want[4 * k + r] = PackExact(v);
      }
    }
    ExpectWithinOne(out, want, "color_matrix");
    Release();
  }
}

// With dyadic (1/16) and integer coefficients every sum is exact in float, so the result must match exactly.
TEST_F(Corpus, ImageConvolve3x3) {
  KilnScript* s = Script("image_convolve");
  ASSERT_NE(s, nullptr) << messages_.All();
  const float gaussian[9] = {1 / 16.f, 2 / 16.f, 1 / 16.f, 2 / 16.f, 4 / 16.f, 2 / 16.f, 1 / 16.f, 2 / 16.f, 1 / 16.f};
  const float sharpen[9] = {0, -1, 0, -1, 5, -1, 0, -1, 0};
  for (const float* coeffs : {gaussian, sharpen}) {
    ASSERT_EQ(KilnScriptSetGlobal(s, "gCoeffs", coeffs, 36), kKilnOk) << messages_.All();
    for (const Cells& cells : OddShapes()) {
      SCOPED_TRACE(ShapeName(cells) + (coeffs == sharpen ? " sharpen" : " gaussian"));
      const size_t n = CellCount(cells);
      const auto px = RandomImage(n, 2100);
      ASSERT_EQ(KilnScriptBindAllocation(s, "gIn", In(cells, 4, px)), kKilnOk) << messages_.All();
      const auto out = Map<uint8_t>(s, "convolve", {}, cells, 4);
      ASSERT_EQ(out.size(), 4 * n);
      const int w = static_cast<int>(DimOf(cells, 0)), h = static_cast<int>(DimOf(cells, 1));
      Mismatches bad;
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          for (int ch = 0; ch < 4; ++ch) {
            float sum = 0;
            for (int j = -1; j <= 1; ++j) {
              for (int i = -1; i <= 1; ++i) {
                const int xi = std::min(std::max(x + i, 0), w - 1), yj = std::min(std::max(y + j, 0), h - 1);
                sum += px[(static_cast<size_t>(yj) * w + xi) * 4 + ch] * coeffs[(j + 1) * 3 + (i + 1)];
              }
            }
            const uint8_t want = static_cast<uint8_t>(std::min(std::max(sum + 0.5f, 0.0f), 255.0f));
            const size_t idx = (static_cast<size_t>(y) * w + x) * 4 + ch;
            if (out[idx] != want) bad.Add(idx / 4, "got " + Text(out[idx]) + " want " + Text(want));
          }
        }
      }
      EXPECT_EQ(bad.count(), 0) << bad.Report();
      KilnScriptBindAllocation(s, "gIn", nullptr);
      Release();
    }
  }
}

// One blur pass over channel-interleaved RGBA: sum of weights[i + r] * src at the clamped neighbour i along x
// (horizontal) or y, in double.
template <typename T>
std::vector<double> BlurPass(const std::vector<T>& src, int w, int h, const float* weights, int r, bool horizontal) {
  std::vector<double> out(src.size());
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int ch = 0; ch < 4; ++ch) {
        double sum = 0;
        for (int i = -r; i <= r; ++i) {
          const int xi = horizontal ? std::min(std::max(x + i, 0), w - 1) : x;
          const int yi = horizontal ? y : std::min(std::max(y + i, 0), h - 1);
          sum += static_cast<double>(src[(static_cast<size_t>(yi) * w + xi) * 4 + ch]) * weights[i + r];
        }
        out[(static_cast<size_t>(y) * w + x) * 4 + ch] = sum;
      }
    }
  }
  return out;
}
std::vector<double> ToPixels(std::vector<double> sums) {
  for (double& v : sums) v = std::floor(std::min(std::max(v + 0.5, 0.0), 255.0));
  return sums;
}

class CorpusBlur : public Corpus {
 protected:
  // Runs the script's `invokable` (blur or blurFloat) at radius 3 (init's default) and 5 (setRadius) and checks
  // each pass: the intermediate image against the horizontal pass of the input, the output against the
  // vertical pass of the intermediate the script actually produced (each within 1 in 255, rs_fp_relaxed).
  template <typename Tmp>
  void RunBlur(const char* invokable, const char* tmp_name) {
    KilnScript* s = Script("image_blur");
    ASSERT_NE(s, nullptr) << messages_.All();
    int32_t radius = 0;
    ASSERT_EQ(KilnScriptGetGlobal(s, "gRadius", &radius, 4), kKilnOk);
    EXPECT_EQ(radius, 3) << "init() computed the default weights";
    for (int r : {3, 5}) {
      if (r != 3) {
        ASSERT_EQ(KilnScriptInvoke(s, "setRadius", &r, 4), kKilnOk) << messages_.All();
      }
      float weights[17] = {};
      ASSERT_EQ(KilnScriptGetGlobal(s, "gWeights", weights, sizeof weights), kKilnOk);
      // A normalized Gaussian with sigma = 0.4 r + 0.6 (exp within 3 ulp, then float sums and a division).
      const double sigma = 0.4 * r + 0.6;
      double total = 0;
      for (int i = -r; i <= r; ++i) total += std::exp(-(i * i) / (2 * sigma * sigma));
      for (int i = -r; i <= r; ++i) {
        EXPECT_NEAR(weights[i + r], std::exp(-(i * i) / (2 * sigma * sigma)) / total, 1e-6) << "weight " << i;
      }
      for (const Cells& cells : OddShapes()) {
        SCOPED_TRACE(ShapeName(cells) + " radius " + std::to_string(r));
        const size_t n = CellCount(cells);
        const auto px = RandomImage(n, 2200);
        KilnTensor* tmp = Out<Tmp>(cells, 4);
        KilnTensor* out = Out<uint8_t>(cells, 4);
        ASSERT_EQ(KilnScriptBindAllocation(s, "gIn", In(cells, 4, px)), kKilnOk) << messages_.All();
        ASSERT_EQ(KilnScriptBindAllocationWithElement(s, tmp_name, tmp, 4), kKilnOk) << messages_.All();
        ASSERT_EQ(KilnScriptBindAllocation(s, "gOut", out), kKilnOk) << messages_.All();
        ASSERT_EQ(KilnScriptInvoke(s, invokable, nullptr, 0), kKilnOk) << messages_.All();
        const int w = static_cast<int>(DimOf(cells, 0)), h = static_cast<int>(DimOf(cells, 1));
        const std::vector<Tmp> got_tmp = Read<Tmp>(tmp);
        const std::vector<double> want_tmp = BlurPass(px, w, h, weights, r, true);
        if constexpr (std::is_same_v<Tmp, uint8_t>) {
          ExpectWithinOne(got_tmp, ToPixels(want_tmp), "horizontal");
        } else {
          Mismatches bad;  // 17 float products and sums of values <= 255: well within 1e-3
          for (size_t i = 0; i < got_tmp.size(); ++i) {
            if (std::fabs(got_tmp[i] - want_tmp[i]) > 1e-3) bad.Add(i / 4, "horizontal got " + Text(got_tmp[i]));
          }
          EXPECT_EQ(bad.count(), 0) << bad.Report();
        }
        ExpectWithinOne(Read<uint8_t>(out), ToPixels(BlurPass(got_tmp, w, h, weights, r, false)), "vertical");
        for (const char* name : {"gIn", tmp_name, "gOut"}) KilnScriptBindAllocation(s, name, nullptr);
        Release();
      }
    }
  }
};

TEST_F(CorpusBlur, ImageBlurScriptWithInitAndInvokables) { RunBlur<uint8_t>("blur", "gTmp"); }

// The same blur with a float4 intermediate image, bound as float4 elements.
TEST_F(CorpusBlur, ImageBlurWithFloatIntermediate) { RunBlur<float>("blurFloat", "gTmpF"); }

TEST_F(Corpus, ImageVignetteUsesXY) {
  KilnScript* s = Script("image_vignette");
  ASSERT_NE(s, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const float center[2] = {DimOf(cells, 0) / 2.0f, DimOf(cells, 1) / 2.0f};
    const float inv_radius = 1.0f / std::max(center[0], center[1]);
    ASSERT_EQ(KilnScriptSetGlobal(s, "gCenter", center, 8), kKilnOk);
    ASSERT_EQ(KilnScriptSetGlobal(s, "gInvRadius", &inv_radius, 4), kKilnOk);
    const auto px = RandomImage(n, 2300);
    const auto out = Map<uint8_t>(s, "vignette", {In(cells, 4, px)}, cells, 4);
    std::vector<double> want(4 * n);
    for (size_t k = 0; k < n; ++k) {
      const auto c = Coords(cells, k);
      const double dx = (c[0] - static_cast<double>(center[0])) * inv_radius;
      const double dy = (c[1] - static_cast<double>(center[1])) * inv_radius;
      const double keep = std::min(std::max(1.0 - 0.8 * (dx * dx + dy * dy), 0.0), 1.0);
      for (int ch = 0; ch < 3; ++ch) want[4 * k + ch] = PackExact(px[4 * k + ch] / 255.0 * keep);
      want[4 * k + 3] = px[4 * k + 3];
    }
    ExpectWithinOne(out, want, "vignette");
    Release();
  }
}

}  // namespace
}  // namespace corpus
}  // namespace kiln
