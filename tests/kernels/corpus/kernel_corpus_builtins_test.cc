// kernel_corpus_tests, runtime functions: convert_<T><N>, rsPackColorTo8888/rsUnpackColor8888, rsClamp and
// rsFrac, rsRand, rs_matrix globals and rsMatrix* functions, rsDebug and rsSendToClient
// (tests/kernels/corpus/conversions.rs, colors.rs, clamp_frac.rs, random.rs, matrix.rs, messages.rs).
#include "tests/kernels/corpus/kernel_corpus_fixture.h"

namespace kiln {
namespace corpus {
namespace {

// ---------------------------------------------------------------------------------------------------------
// Conversions, colors, rsClamp/rsFrac, rsRand, matrices, messages

TEST_F(Corpus, Conversions) {
  KilnScript* s = Script("conversions");
  ExpectExact1<float, int32_t>(s, "float4_to_int4", 4, 4, 4, Uniform(-2e9, 2e9), [](const float* in, int32_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<int32_t>(in[l]);  // truncation toward zero
  });
  ExpectExact1<int32_t, float>(s, "int4_to_float4", 4, 4, 4, FullRange<int32_t>(), [](const int32_t* in, float* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<float>(in[l]);
  });
  ExpectExact1<uint8_t, float>(s, "uchar3_to_float3", 4, 4, 3, FullRange<uint8_t>(), [](const uint8_t* in, float* out) {
    for (int l = 0; l < 3; ++l) out[l] = in[l];
  });
  ExpectExact1<float, uint8_t>(s, "float4_to_uchar4", 4, 4, 4, Uniform(0, 255.99), [](const float* in, uint8_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<uint8_t>(in[l]);
  });
  ExpectExact1<int16_t, int32_t>(s, "short2_to_int2", 2, 2, 2, FullRange<int16_t>(), [](const int16_t* in, int32_t* out) {
    out[0] = in[0];
    out[1] = in[1];
  });
  ExpectExact1<int32_t, int8_t>(s, "int4_to_char4", 4, 4, 4, FullRange<int32_t>(), [](const int32_t* in, int8_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<int8_t>(in[l]);  // integer narrowing wraps
  });
  ExpectExact1<uint64_t, float>(s, "ulong2_to_float2", 2, 2, 2, FullRange<uint64_t>(), [](const uint64_t* in, float* out) {
    out[0] = static_cast<float>(in[0]);
    out[1] = static_cast<float>(in[1]);
  });
  ExpectExact1<double, float>(s, "double2_to_float2", 2, 2, 2, [](size_t n, uint32_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-1e30, 1e30);
    std::vector<double> v(n);
    for (double& x : v) x = dist(rng) * std::ldexp(1.0, -static_cast<int>(rng() % 200));
    return v;
  }, [](const double* in, float* out) {
    out[0] = static_cast<float>(in[0]);
    out[1] = static_cast<float>(in[1]);
  });
  ExpectExact1<uint32_t, uint16_t>(s, "uint4_to_ushort4", 4, 4, 4, FullRange<uint32_t>(), [](const uint32_t* in, uint16_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<uint16_t>(in[l]);
  });
  ExpectExact1<int32_t, int64_t>(s, "int3_to_long3", 4, 4, 3, FullRange<int32_t>(), [](const int32_t* in, int64_t* out) {
    for (int l = 0; l < 3; ++l) out[l] = in[l];
  });
}

// rsPackColorTo8888(c) = (uchar4)(clamp(c, 0, 1) * 255 + 0.5), where the multiply-add may fuse.
uint8_t PackLane(float v, bool fused) {
  const float c = std::min(std::max(v, 0.0f), 1.0f);
  const float p = c * 255.0f;
  return static_cast<uint8_t>(fused ? std::fma(c, 255.0f, 0.5f) : p + 0.5f);
}

TEST_F(Corpus, Colors) {
  KilnScript* s = Script("colors");
  ExpectExact1<uint8_t, float>(s, "unpack", 4, 4, 4, FullRange<uint8_t>(), [](const uint8_t* in, float* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<float>(in[l]) * (1.0f / 255.0f);
  });
  ExpectExact1<uint8_t, uint8_t>(s, "roundtrip", 4, 4, 4, FullRange<uint8_t>(),
                                 [](const uint8_t* in, uint8_t* out) { std::memcpy(out, in, 4); });
  ASSERT_NE(s, nullptr);
  uint32_t seed = 1500;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto f = RandomFloats(4 * n, -0.2, 1.2, seed++);
    KilnTensor* tf = In(cells, 4, f);
    const auto p4 = Map<uint8_t>(s, "pack4", {tf}, cells, 4);
    const auto p3 = Map<uint8_t>(s, "pack3", {tf}, cells, 4);
    const auto prgba = Map<uint8_t>(s, "pack_rgba", {tf}, cells, 4);
    ASSERT_TRUE(p4.size() == 4 * n && p3.size() == 4 * n && prgba.size() == 4 * n);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      for (int l = 0; l < 4; ++l) {
        const auto ok = [&](uint8_t got, float v) { return got == PackLane(v, true) || got == PackLane(v, false); };
        if (!ok(p4[4 * k + l], f[4 * k + l])) bad.Add(k, "pack4 lane " + std::to_string(l));
        if (!ok(p3[4 * k + l], l == 3 ? 1.0f : f[4 * k + l])) bad.Add(k, "pack3 lane " + std::to_string(l));
        if (!ok(prgba[4 * k + l], f[4 * k + 3 - l])) bad.Add(k, "pack_rgba lane " + std::to_string(l));
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
}

TEST_F(Corpus, RsClampAndRsFrac) {
  KilnScript* s = Script("clamp_frac");
  ExpectExact1<int8_t, int8_t>(s, "clamp_char", 1, 1, 1, FullRange<int8_t>(),
                               [](const int8_t* in, int8_t* out) { *out = std::min<int8_t>(std::max<int8_t>(*in, -20), 90); });
  ExpectExact1<uint8_t, uint8_t>(s, "clamp_uchar", 1, 1, 1, FullRange<uint8_t>(),
                                 [](const uint8_t* in, uint8_t* out) { *out = std::min<uint8_t>(std::max<uint8_t>(*in, 16), 235); });
  ExpectExact1<int16_t, int16_t>(s, "clamp_short", 1, 1, 1, FullRange<int16_t>(), [](const int16_t* in, int16_t* out) {
    *out = std::min<int16_t>(std::max<int16_t>(*in, -1000), 1000);
  });
  ExpectExact1<uint16_t, uint16_t>(s, "clamp_ushort", 1, 1, 1, FullRange<uint16_t>(), [](const uint16_t* in, uint16_t* out) {
    *out = std::min<uint16_t>(std::max<uint16_t>(*in, 300), 60000);
  });
  ExpectExact1<int32_t, int32_t>(s, "clamp_int", 1, 1, 1, FullRange<int32_t>(),
                                 [](const int32_t* in, int32_t* out) { *out = std::min(std::max(*in, -123456), 654321); });
  ExpectExact1<uint32_t, uint32_t>(s, "clamp_uint", 1, 1, 1, FullRange<uint32_t>(), [](const uint32_t* in, uint32_t* out) {
    *out = std::min(std::max(*in, 1000u), 4000000000u);
  });
  ExpectExact1<float, float>(s, "frac", 1, 1, 1, Uniform(-1e4, 1e4),
                             [](const float* in, float* out) { *out = static_cast<float>(Fract(*in)); });
  // A clamp range set from the API.
  const int8_t lo = 5, hi = 6;
  ASSERT_EQ(KilnScriptSetGlobal(s, "gLowChar", &lo, 1), kKilnOk);
  ASSERT_EQ(KilnScriptSetGlobal(s, "gHighChar", &hi, 1), kKilnOk);
  ExpectExact1<int8_t, int8_t>(s, "clamp_char", 1, 1, 1, FullRange<int8_t>(),
                               [](const int8_t* in, int8_t* out) { *out = std::min<int8_t>(std::max<int8_t>(*in, 5), 6); });
}

// rsRand's values depend on how threads interleave, so only ranges and statistics are checked. The stream is a
// counter, so the multiset of values in one launch is deterministic and the statistics bounds cannot flake.
TEST_F(Corpus, RandomRangesAndStatistics) {
  KilnScript* s = Script("random");
  ASSERT_NE(s, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    KilnTensor* t = In(cells, 1, std::vector<uint8_t>(n));
    const auto below = Map<int32_t>(s, "rand_below", {t}, cells);
    const auto between = Map<int32_t>(s, "rand_between", {t}, cells);
    const auto unit = Map<float>(s, "rand_unit", {t}, cells);
    const auto range = Map<float>(s, "rand_range", {t}, cells);
    ASSERT_TRUE(below.size() == n && between.size() == n && unit.size() == n && range.size() == n);
    std::vector<double> below_hist(10), between_hist(100), unit_hist(10);
    double unit_sum = 0, range_sum = 0;
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      if (below[k] < 0 || below[k] >= 10) bad.Add(k, "rsRand(10) = " + Text(below[k]));
      else ++below_hist[below[k]];
      if (between[k] < -50 || between[k] >= 50) bad.Add(k, "rsRand(-50, 50) = " + Text(between[k]));
      else ++between_hist[between[k] + 50];
      if (!(unit[k] >= 0.0f && unit[k] < 1.0f)) bad.Add(k, "rsRand(1.0f) = " + Text(unit[k]));
      else ++unit_hist[static_cast<int>(unit[k] * 10)];
      if (!(range[k] >= -2.0f && range[k] < 6.0f)) bad.Add(k, "rsRand(-2, 6) = " + Text(range[k]));
      unit_sum += unit[k];
      range_sum += range[k];
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    if (n >= 100000) {
      // Chi-square against uniform buckets: 9 and 99 degrees of freedom, limits far beyond p = 1e-6.
      const auto chi2 = [n](const std::vector<double>& hist) {
        const double expect = static_cast<double>(n) / hist.size();
        double x = 0;
        for (double h : hist) x += (h - expect) * (h - expect) / expect;
        return x;
      };
      EXPECT_LT(chi2(below_hist), 45.0);
      EXPECT_LT(chi2(unit_hist), 45.0);
      EXPECT_LT(chi2(between_hist), 190.0);
      const double sd = std::sqrt(1.0 / 12.0 / n);  // of the mean of n uniform [0, 1) values
      EXPECT_NEAR(unit_sum / n, 0.5, 6 * sd);
      EXPECT_NEAR(range_sum / n, 2.0, 6 * 8 * sd);
    }
    // The rsRand(min, max) bounds come from globals set through the API.
    const int32_t lo = 1000, hi = 1003;
    ASSERT_EQ(KilnScriptSetGlobal(s, "gMin", &lo, 4), kKilnOk);
    ASSERT_EQ(KilnScriptSetGlobal(s, "gMax", &hi, 4), kKilnOk);
    const auto narrow = Map<int32_t>(s, "rand_between", {t}, cells);
    for (int32_t v : narrow) EXPECT_TRUE(v >= 1000 && v < 1003) << v;
    const int32_t dlo = -50, dhi = 50;
    ASSERT_EQ(KilnScriptSetGlobal(s, "gMin", &dlo, 4), kKilnOk);
    ASSERT_EQ(KilnScriptSetGlobal(s, "gMax", &dhi, 4), kKilnOk);
    Release();
  }
}

// rsMatrixMultiply(&m, v): each lane is a sum of n products, within gamma_n * sum |m v| (see Geometry).
TEST_F(Corpus, MatrixGlobalsAndProducts) {
  KilnScript* s = Script("matrix");
  ASSERT_NE(s, nullptr) << messages_.All();
  const auto m4 = RandomFloats(16, -2, 2, 1600), m3 = RandomFloats(9, -2, 2, 1601), m2 = RandomFloats(4, -2, 2, 1602);
  ASSERT_EQ(KilnScriptSetGlobal(s, "gM4", m4.data(), 64), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptSetGlobal(s, "gM3", m3.data(), 36), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptSetGlobal(s, "gM2", m2.data(), 16), kKilnOk) << messages_.All();
  uint32_t seed = 1610;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto v = RandomFloats(4 * n, -100, 100, seed++);
    KilnTensor* tv = In(cells, 4, v);
    const std::vector<float> v2(v.begin(), v.begin() + 2 * n);
    const auto o4 = Map<float>(s, "mul4", {tv}, cells, 4);
    const auto o3 = Map<float>(s, "mul3", {tv}, cells, 4);
    const auto o2 = Map<float>(s, "mul2", {In(cells, 2, v2)}, cells, 2);
    ASSERT_TRUE(o4.size() == 4 * n && o3.size() == 4 * n && o2.size() == 2 * n);
    Mismatches bad;
    const auto check = [&](const char* what, const std::vector<float>& m, int dim, const float* in, const float* got,
                           size_t k) {
      for (int r = 0; r < dim; ++r) {
        double exact = 0, mag = 0;
        for (int c = 0; c < dim; ++c) {
          exact += static_cast<double>(m[c * dim + r]) * in[c];  // column-major: m[column * N + row]
          mag += std::fabs(static_cast<double>(m[c * dim + r]) * in[c]);
        }
        if (std::fabs(got[r] - exact) > Gamma(dim) * mag) bad.Add(k, std::string(what) + " row " + std::to_string(r));
      }
    };
    for (size_t k = 0; k < n; ++k) {
      check("mul4", m4, 4, &v[4 * k], &o4[4 * k], k);
      check("mul3", m3, 3, &v[4 * k], &o3[4 * k], k);
      check("mul2", m2, 2, &v2[2 * k], &o2[2 * k], k);
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
  for (const char* kernel : {"mul4", "mul3", "mul2"}) {
    EXPECT_TRUE(RanOnDriver("matrix", kernel)) << kernel << " did not run on the driver";
  }
}

// The widening forms of rsMatrixMultiply, rsMatrixGet and a kernel-local matrix; with mul4/mul3/mul2 they have a
// GPU form, so on a GPU driver they run there.
TEST_F(Corpus, MatrixReadsInKernels) {
  KilnScript* s = Script("matrix");
  ASSERT_NE(s, nullptr) << messages_.All();
  const auto m4 = RandomFloats(16, -2, 2, 1700), m3 = RandomFloats(9, -2, 2, 1701), m2 = RandomFloats(4, -2, 2, 1702);
  ASSERT_EQ(KilnScriptSetGlobal(s, "gM4", m4.data(), 64), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptSetGlobal(s, "gM3", m3.data(), 36), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptSetGlobal(s, "gM2", m2.data(), 16), kKilnOk) << messages_.All();
  // Row r of m * (v, fill...): the result within gamma_N of the double sum (RenderScript allows either rounding
  // order of the sum, fused or not).
  const auto within = [](const std::vector<float>& m, int dim, const std::vector<double>& in, float got, int r) {
    double exact = 0, mag = 0;
    for (int c = 0; c < dim; ++c) {
      exact += static_cast<double>(m[c * dim + r]) * in[c];
      mag += std::fabs(static_cast<double>(m[c * dim + r]) * in[c]);
    }
    return std::fabs(got - exact) <= Gamma(dim) * mag;
  };
  uint32_t seed = 1710;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto v = RandomFloats(4 * n, -100, 100, seed++);  // float3 cells are 4 lanes wide (the 4th unused)
    const std::vector<float> v2(v.begin(), v.begin() + 2 * n);
    const auto idx = RandomInts<uint32_t>(n, 0, 0xffffffffu, seed++);
    const auto o43 = Map<float>(s, "mul4_xyz", {In(cells, 4, v)}, cells, 4);
    const auto o42 = Map<float>(s, "mul4_xy", {In(cells, 2, v2)}, cells, 4);
    const auto o32 = Map<float>(s, "mul3_xy", {In(cells, 2, v2)}, cells, 4);
    const auto got = Map<float>(s, "get4", {In(cells, 1, idx)}, cells, 1);
    const auto loc = Map<float>(s, "local2", {In(cells, 2, v2)}, cells, 2);
    ASSERT_TRUE(o43.size() == 4 * n && o42.size() == 4 * n && o32.size() == 4 * n && got.size() == n &&
                loc.size() == 2 * n);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      const double x = v[4 * k], y = v[4 * k + 1], z = v[4 * k + 2];
      const double x2 = v2[2 * k], y2 = v2[2 * k + 1];
      for (int r = 0; r < 4; ++r) {
        if (!within(m4, 4, {x, y, z, 1.0}, o43[4 * k + r], r)) bad.Add(k, "mul4_xyz row " + std::to_string(r));
        if (!within(m4, 4, {x2, y2, 0.0, 1.0}, o42[4 * k + r], r)) bad.Add(k, "mul4_xy row " + std::to_string(r));
      }
      for (int r = 0; r < 3; ++r) {
        if (!within(m3, 3, {x2, y2, 0.0}, o32[4 * k + r], r)) bad.Add(k, "mul3_xy row " + std::to_string(r));
      }
      const uint32_t i = idx[k];
      const float want_get = m4[(i % 4) * 4 + (i / 4) % 4] + m2[(i % 2) * 2 + 1];
      if (!Same(got[k], want_get)) bad.Add(k, "get4 got " + Text(got[k]) + " want " + Text(want_get));
      const std::vector<float> local = {v2[2 * k + 1], 2.0f, -1.0f, v2[2 * k]};
      for (int r = 0; r < 2; ++r) {
        if (!within(local, 2, {x2, y2}, loc[2 * k + r], r)) bad.Add(k, "local2 row " + std::to_string(r));
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
  for (const char* kernel : {"mul4_xyz", "mul4_xy", "mul3_xy", "get4", "local2"}) {
    EXPECT_TRUE(RanOnDriver("matrix", kernel)) << kernel << " did not run on the driver";
  }
}

// build(angle, scale, tx): T(tx) * S(scale) * Rz(angle) (post-multiplied, degrees), its inverse, and
// rsMatrixGet/Set/Transpose. Compared with a double-precision construction within 1e-5 (entries are O(1)).
TEST_F(Corpus, MatrixTransformsFromAnInvokable) {
  KilnScript* s = Script("matrix");
  ASSERT_NE(s, nullptr) << messages_.All();
  const float args[3] = {30.0f, 2.0f, 5.0f};
  ASSERT_EQ(KilnScriptInvoke(s, "build", args, sizeof args), kKilnOk) << messages_.All();
  float built[16], inverse[16], m2[4];
  bool invertible = false;
  float probe = 0;
  KilnScriptGetGlobal(s, "gBuilt", built, 64);
  KilnScriptGetGlobal(s, "gInverse", inverse, 64);
  KilnScriptGetGlobal(s, "gInvertible", &invertible, 1);
  KilnScriptGetGlobal(s, "gProbe", &probe, 4);
  KilnScriptGetGlobal(s, "gM2", m2, 16);
  const double c = std::cos(30.0 * M_PI / 180), sn = std::sin(30.0 * M_PI / 180);
  // Row-major math notation of T * S * R.
  const double want[4][4] = {{2 * c, -2 * sn, 0, 5}, {2 * sn, 2 * c, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
  for (int r = 0; r < 4; ++r) {
    for (int col = 0; col < 4; ++col) EXPECT_NEAR(built[col * 4 + r], want[r][col], 1e-5) << r << "," << col;
  }
  EXPECT_TRUE(invertible);
  for (int r = 0; r < 4; ++r) {
    for (int col = 0; col < 4; ++col) {
      double sum = 0;
      for (int k = 0; k < 4; ++k) sum += static_cast<double>(inverse[k * 4 + r]) * built[col * 4 + k];
      EXPECT_NEAR(sum, r == col ? 1.0 : 0.0, 1e-5) << "inverse * built at " << r << "," << col;
    }
  }
  EXPECT_NEAR(probe, 5.0f, 1e-6);
  EXPECT_EQ(m2[2], probe) << "rsMatrixSet(&gM2, 1, 0, ...) writes column 1, row 0";
}

TEST_F(Corpus, DebugAndClientMessages) {
  KilnScript* s = Script("messages");
  ASSERT_NE(s, nullptr) << messages_.All();
  const int32_t args[2] = {3, 4};
  ASSERT_EQ(KilnScriptInvoke(s, "report", args, sizeof args), kKilnOk) << messages_.All();
  EXPECT_TRUE(messages_.Contains("corpus progress 3")) << messages_.All();
  EXPECT_TRUE(messages_.Contains("corpus fraction 0.75")) << messages_.All();
  EXPECT_TRUE(messages_.Contains("corpus pair {3, 4}")) << messages_.All();
  {
    std::lock_guard<std::mutex> lock(client_mutex_);
    ASSERT_EQ(client_messages_.size(), 2u);
    EXPECT_EQ(client_messages_[0].script, s);
    EXPECT_EQ(client_messages_[0].command, 7);
    ASSERT_EQ(client_messages_[0].data.size(), 8u);
    int32_t done = 0;
    float fraction = 0;
    std::memcpy(&done, client_messages_[0].data.data(), 4);
    std::memcpy(&fraction, client_messages_[0].data.data() + 4, 4);
    EXPECT_EQ(done, 3);
    EXPECT_EQ(fraction, 0.75f);
    EXPECT_EQ(client_messages_[1].command, 8);
    EXPECT_TRUE(client_messages_[1].data.empty());
    client_messages_.clear();
  }
  // From a kernel, on every thread: one message per negative input, command 100 + x.
  uint32_t seed = 1700;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    auto in = RandomInts<int32_t>(n, 0, 1000, seed++);
    std::multiset<int32_t> want;
    for (size_t k = 0; k < n; ++k) {
      if (k % 97 == 3 || n == 1) {
        in[k] = -1;
        want.insert(100 + static_cast<int32_t>(Coords(cells, k)[0]));
      }
    }
    KilnTensor* t = In(cells, 1, in);
    ASSERT_EQ(KilnScriptForEach(s, "flag_negative", &t, 1, nullptr, nullptr), kKilnOk) << messages_.All();
    std::multiset<int32_t> got;
    {
      std::lock_guard<std::mutex> lock(client_mutex_);
      for (const ClientMessage& m : client_messages_) got.insert(m.command);
      client_messages_.clear();
    }
    EXPECT_TRUE(got == want) << "got " << got.size() << " messages, want " << want.size();
    Release();
  }
}

}  // namespace
}  // namespace corpus
}  // namespace kiln
