// kernel_corpus_tests, script state and reductions: globals set from the API, pointer and rs_allocation
// globals, init() and invokables, rsForEach from an invokable, and reductions (tests/kernels/corpus/
// globals.rs, pointer_globals.rs, allocations.rs, object_info.rs, init_invoke.rs, foreach_invokable.rs, reduce_*.rs).
#include "tests/kernels/corpus/kernel_corpus_fixture.h"

namespace kiln {
namespace corpus {
namespace {

// ---------------------------------------------------------------------------------------------------------
// Globals, allocations, init and invokables

// The C++ mirror of globals.rs's Tone: float3 has the size and alignment of a float4.
struct Tone {
  float gain;
  int32_t offset;
  uint8_t tint[4];
  alignas(16) float weights[4];
};
static_assert(sizeof(Tone) == 32, "Tone mirrors the script's 32-byte struct");

TEST_F(Corpus, GlobalsSetFromTheApi) {
  KilnScript* s = Script("globals");
  ASSERT_NE(s, nullptr) << messages_.All();
  Tone tone{};
  ASSERT_EQ(KilnScriptGetGlobal(s, "gTone", &tone, sizeof tone), kKilnOk) << messages_.All();
  EXPECT_EQ(tone.gain, 2.0f);
  EXPECT_EQ(tone.offset, -5);
  EXPECT_EQ(tone.tint[2], 30);
  EXPECT_EQ(tone.weights[2], 0.125f);
  int32_t primes[4] = {};
  ASSERT_EQ(KilnScriptGetGlobal(s, "kPrimes", primes, sizeof primes), kKilnOk) << messages_.All();
  EXPECT_EQ(primes[3], 7);

  // const globals cannot be set; static ones are not visible.
  const float half = 2.0f;
  EXPECT_EQ(KilnScriptSetGlobal(s, "kScale", &half, 4), kKilnInvalidArgument);
  EXPECT_EQ(KilnScriptSetGlobal(s, "kPrimes", primes, sizeof primes), kKilnInvalidArgument);
  const int32_t bias = 1;
  EXPECT_EQ(KilnScriptSetGlobal(s, "sBias", &bias, 4), kKilnInvalidArgument);
  EXPECT_EQ(KilnScriptGetGlobal(s, "sBias", primes, 4), kKilnInvalidArgument);

  const float gain = 3.0f;
  ASSERT_EQ(KilnScriptSetGlobal(s, "gGain", &gain, 4), kKilnOk);
  const int32_t offsets[4] = {-7, 0, 11, 1 << 20};
  ASSERT_EQ(KilnScriptSetGlobal(s, "gOffsets", offsets, sizeof offsets), kKilnOk);
  const int32_t table[8] = {1, -2, 3, -4, 5, -6, 7, -8};
  ASSERT_EQ(KilnScriptSetGlobal(s, "gTable", table, sizeof table), kKilnOk);
  tone = Tone{0.5f, 9, {5, 6, 7, 8}, {0.25f, 2.0f, -1.0f, 0.0f}};
  ASSERT_EQ(KilnScriptSetGlobal(s, "gTone", &tone, sizeof tone), kKilnOk);
  const int32_t new_bias = -33;
  ASSERT_EQ(KilnScriptInvoke(s, "setBias", &new_bias, sizeof new_bias), kKilnOk) << messages_.All();

  ExpectExact1<float, float>(s, "apply_gain", 1, 1, 1, Uniform(-1e6, 1e6), [&](const float* in, float* out) {
    const float scaled = *in * gain;
    *out = scaled * 0.5f;
  });
  ExpectExact1<uint8_t, float>(s, "apply_tone", 4, 4, 4, FullRange<uint8_t>(), [&](const uint8_t* in, float* out) {
    for (int l = 0; l < 3; ++l) out[l] = static_cast<float>(static_cast<uint8_t>(in[l] + tone.tint[l])) * tone.weights[l];
    out[3] = static_cast<float>(in[3] + tone.offset) * tone.gain;
  });
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto in = RandomInts<int32_t>(n, -1000000, 1000000, 600);
    const auto out = Map<int32_t>(s, "apply_offsets", {In(cells, 1, in)}, cells, 4);
    ASSERT_EQ(out.size(), 4 * n);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      const uint32_t x = Coords(cells, k)[0];
      for (int l = 0; l < 4; ++l) {
        const int32_t want = in[k] + offsets[l] + table[x % 8] * primes[x % 4] + new_bias;
        if (out[4 * k + l] != want) bad.Add(k, "lane " + std::to_string(l) + " got " + Text(out[4 * k + l]));
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
  // apply_offsets reads static sBias, which setBias wrote on the CPU: it runs on a GPU driver all the same.
  EXPECT_TRUE(RanOnDriver("globals", "apply_offsets"));
}

TEST_F(Corpus, PointerGlobalsBoundToAllocations) {
  KilnScript* s = Script("pointer_globals");
  ASSERT_NE(s, nullptr) << messages_.All();
  const std::vector<float> weights = RandomFloats(13, -4, 4, 700);
  const int32_t count = 13;
  ASSERT_EQ(KilnScriptSetGlobal(s, "gNumWeights", &count, 4), kKilnOk);
  uint32_t seed = 701;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    ASSERT_EQ(KilnScriptBindAllocation(s, "gWeights", In<float>({13}, 1, weights)), kKilnOk) << messages_.All();
    const auto in = RandomFloats(n, -1e3, 1e3, seed++);
    const auto out = Map<float>(s, "weighted", {In(cells, 1, in)}, cells);
    ASSERT_EQ(out.size(), n);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      const float want = in[k] * weights[Coords(cells, k)[0] % 13];
      if (!Same(out[k], want)) bad.Add(k, "got " + Text(out[k]) + " want " + Text(want));
    }
    KilnTensor* counts = Out<int32_t>({16});
    ASSERT_EQ(KilnScriptBindAllocation(s, "gCounts", counts), kKilnOk) << messages_.All();
    const auto bytes = RandomFull<uint8_t>(n, seed++);
    KilnTensor* tb = In(cells, 1, bytes);
    ASSERT_EQ(KilnScriptForEach(s, "tally", &tb, 1, nullptr, nullptr), kKilnOk) << messages_.All();
    std::vector<int32_t> want(16);
    for (uint8_t b : bytes) ++want[b & 15];
    EXPECT_EQ(Read<int32_t>(counts), want);
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    ASSERT_EQ(KilnScriptBindAllocation(s, "gCounts", nullptr), kKilnOk);
    ASSERT_EQ(KilnScriptBindAllocation(s, "gWeights", nullptr), kKilnOk);
    Release();
  }
}

TEST_F(Corpus, AllocationAccessors) {
  KilnScript* s = Script("allocations");
  ASSERT_NE(s, nullptr) << messages_.All();
  std::vector<uint8_t> lut(256);
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>((i * 167 + 13) & 255);
  uint32_t seed = 800;
  for (const Cells& cells : OddShapes3D()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    Mismatches bad;
    ASSERT_EQ(KilnScriptBindAllocation(s, "gLut", In<uint8_t>({256}, 1, lut)), kKilnOk) << messages_.All();
    // volume_add and extents over every shape (the volume has the launch's shape).
    const auto vol = RandomInts<int32_t>(n, -1000000, 1000000, seed++);
    ASSERT_EQ(KilnScriptBindAllocation(s, "gVolume", In(cells, 1, vol)), kKilnOk) << messages_.All();
    const auto in = RandomInts<int32_t>(n, -1000000, 1000000, seed++);
    const auto summed = Map<int32_t>(s, "volume_add", {In(cells, 1, in)}, cells);
    const auto ext = Map<uint32_t>(s, "extents", {In(cells, 1, std::vector<uint8_t>(n))}, cells, 4);
    ASSERT_TRUE(summed.size() == n && ext.size() == 4 * n);
    for (size_t k = 0; k < n; ++k) {
      if (summed[k] != in[k] + vol[k]) bad.Add(k, "volume_add got " + Text(summed[k]));
      // An allocation's absent dimension is 0 (RenderScript's rsAllocationGetDimY of a 1D allocation).
      const uint32_t want_y = cells.size() >= 2 ? DimOf(cells, 1) : 0u, want_z = cells.size() >= 3 ? DimOf(cells, 2) : 0u;
      if (ext[4 * k] != DimOf(cells, 0) || ext[4 * k + 1] != want_y || ext[4 * k + 2] != want_z || ext[4 * k + 3] != 0) {
        bad.Add(k, "extents got " + Text(ext[4 * k]) + "x" + Text(ext[4 * k + 1]) + "x" + Text(ext[4 * k + 2]) +
                       " lut y " + Text(ext[4 * k + 3]));
      }
    }
    const auto bytes = RandomFull<uint8_t>(n, seed++);
    const auto looked = Map<uint8_t>(s, "lookup", {In(cells, 1, bytes)}, cells);
    ASSERT_EQ(looked.size(), n);
    for (size_t k = 0; k < n; ++k) {
      if (looked[k] != lut[bytes[k]]) bad.Add(k, "lookup got " + Text(looked[k]));
    }
    if (cells.size() <= 2) {
      // transpose: gMatrix is rows x cols (a 1D shape is one row); the output is cols x rows.
      const int rows = cells.size() == 2 ? cells[0] : 1, cols = cells.back();
      const auto m = RandomFloats(n, -1, 1, seed++);
      ASSERT_EQ(KilnScriptBindAllocation(s, "gMatrix", In<float>({rows, cols}, 1, m)), kKilnOk) << messages_.All();
      const auto t = Map<float>(s, "transpose", {}, {cols, rows});
      ASSERT_EQ(t.size(), n);
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
          if (!Same(t[static_cast<size_t>(c) * rows + r], m[static_cast<size_t>(r) * cols + c])) {
            bad.Add(static_cast<size_t>(c) * rows + r, "transpose");
          }
        }
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    for (const char* name : {"gLut", "gVolume", "gMatrix"}) KilnScriptBindAllocation(s, name, nullptr);
    Release();
  }
}

// rs_allocation globals of vector elements other than uchar4 (short2, float4), bound with the element stated
// (KilnScriptBindAllocationWithElement), as RenderScript apps created them with Element.I16_2 / F32_4.
TEST_F(Corpus, VectorElementAllocations) {
  KilnScript* s = Script("allocations");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 850;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    Mismatches bad;
    // store_swapped: a void kernel writing short2 elements of a 2D allocation at (x, y).
    const auto pairs = RandomFull<int16_t>(2 * n, seed++);
    KilnTensor* dst = Out<int16_t>(cells, 2);
    KilnTensor* src = In(cells, 2, pairs);
    ASSERT_EQ(KilnScriptBindAllocationWithElement(s, "gPairs", dst, 2), kKilnOk) << messages_.All();
    ASSERT_EQ(KilnScriptForEach(s, "store_swapped", &src, 1, nullptr, nullptr), kKilnOk) << messages_.All();
    const auto stored = Read<int16_t>(dst);
    for (size_t k = 0; k < n; ++k) {
      if (stored[2 * k] != pairs[2 * k + 1] || stored[2 * k + 1] != pairs[2 * k]) bad.Add(k, "store_swapped");
    }
    // quad_neighbours: a float4 allocation as wide as a row.
    const uint32_t w = DimOf(cells, 0);
    const auto quads = RandomFloats(4 * w, -10, 10, seed++);
    ASSERT_EQ(KilnScriptBindAllocationWithElement(s, "gQuads", In<float>({static_cast<int>(w)}, 4, quads), 4),
              kKilnOk)
        << messages_.All();
    const auto q_in = RandomFloats(4 * n, -10, 10, seed++);
    const auto q_out = Map<float>(s, "quad_neighbours", {In(cells, 4, q_in)}, cells, 4);
    ASSERT_EQ(q_out.size(), 4 * n);
    for (size_t k = 0; k < n; ++k) {
      const uint32_t next = (Coords(cells, k)[0] + 1) % w;
      for (int l = 0; l < 4; ++l) {
        if (!Same(q_out[4 * k + l], q_in[4 * k + l] + quads[4 * next + l])) bad.Add(k, "quad_neighbours");
      }
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    for (const char* name : {"gPairs", "gQuads"}) KilnScriptBindAllocation(s, name, nullptr);
    Release();
  }
}

// Element and type queries on a bound float allocation of 7 x 3 (a tensor binds with scalar elements), and on elements and types the script creates:
// RenderScript's data type numbers, a 3-lane element occupying 4, no sub-elements, and rsCreateType's full form
// refusing what Kiln's allocations cannot hold (mipmaps, cube faces, YUV).
TEST_F(Corpus, ElementAndTypeQueries) {
  KilnScript* s = Script("object_info");
  ASSERT_NE(s, nullptr) << messages_.All();
  const int dims[2] = {3, 7};  // its own tensor: ExpectExact1 releases the fixture's after each shape
  KilnTensor* bound = KilnTensorCreate(context_, kKilnFloat32, dims, 2);
  ASSERT_EQ(KilnScriptBindAllocation(s, "gBound", bound), kKilnOk) << messages_.All();
  ASSERT_EQ(KilnScriptInvoke(s, "ask", nullptr, 0), kKilnOk) << messages_.All();
  uint32_t answers[16] = {};
  ASSERT_EQ(KilnScriptGetGlobal(s, "gAnswers", answers, sizeof answers), kKilnOk) << messages_.All();
  const uint32_t want[16] = {2u /* RS_TYPE_FLOAT_32 */, 1u, 4u, 0u /* RS_KIND_USER */, 0u, 0u, 0u,
                             static_cast<uint32_t>('\0'), 8u, 506u, 0u, 0u, 0u, 7003u, 0u, 1u};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(answers[i], want[i]) << "gAnswers[" << i << "]";
  ExpectExact1<uint32_t, uint32_t>(s, "plus_extent", 1, 1, 1, FullRange<uint32_t>(),
                                   [](const uint32_t* in, uint32_t* out) { *out = *in + 7003u; });
  KilnTensorDelete(bound);
}

TEST_F(Corpus, InitAndInvokables) {
  KilnScript* s = Script("init_invoke");
  ASSERT_NE(s, nullptr) << messages_.All();
  float scale = 0;
  int32_t bias = 0;
  int64_t total = 0;
  float color[4] = {};
  KilnScriptGetGlobal(s, "gScale", &scale, 4);
  KilnScriptGetGlobal(s, "gBias", &bias, 4);
  KilnScriptGetGlobal(s, "gTotal", &total, 8);
  KilnScriptGetGlobal(s, "gColor", color, 16);
  EXPECT_EQ(scale, 1.5f) << "init() ran at creation";
  EXPECT_EQ(bias, 7);
  EXPECT_EQ(total, -1);
  EXPECT_EQ(color[2], 0.75f);
  ExpectExact1<int32_t, int32_t>(s, "apply", 1, 1, 1, [](size_t n, uint32_t seed) {
    return RandomInts<int32_t>(n, -100000, 100000, seed);
  }, [](const int32_t* in, int32_t* out) { *out = *in * 1 + 7; });

  struct {
    float scale;
    int32_t bias;
    alignas(16) float color[4];
  } params = {3.0f, -4, {2.0f, 0.5f, -1.0f, 0.0f}};
  static_assert(sizeof params == 32, "setParams packs float, int, float4 at offsets 0, 4, 16");
  ASSERT_EQ(KilnScriptInvoke(s, "setParams", &params, sizeof params), kKilnOk) << messages_.All();
  EXPECT_EQ(KilnScriptInvoke(s, "setParams", &params, 24), kKilnInvalidArgument);
  struct {
    int64_t amount;
    uint8_t times;
    int16_t sign;
  } acc = {1000000000000, 3, -1};
  static_assert(sizeof acc == 16, "accumulate packs long, uchar, short at offsets 0, 8, 10");
  ASSERT_EQ(KilnScriptInvoke(s, "accumulate", &acc, sizeof acc), kKilnOk) << messages_.All();
  KilnScriptGetGlobal(s, "gTotal", &total, 8);
  EXPECT_EQ(total, -1 - 3000000000000);
  ASSERT_EQ(KilnScriptInvoke(s, "reset", nullptr, 0), kKilnOk) << messages_.All();
  int32_t invocations = 0;
  KilnScriptGetGlobal(s, "gTotal", &total, 8);
  KilnScriptGetGlobal(s, "gInvocations", &invocations, 4);
  EXPECT_EQ(total, 0);
  EXPECT_EQ(invocations, 3) << "a static global kept its count across invokables";
  EXPECT_EQ(KilnScriptInvoke(s, "missing", nullptr, 0), kKilnInvalidArgument);

  ExpectExact1<int32_t, int32_t>(s, "apply", 1, 1, 1, [](size_t n, uint32_t seed) {
    return RandomInts<int32_t>(n, -100000, 100000, seed);
  }, [](const int32_t* in, int32_t* out) { *out = *in * 3 - 4; });
  ExpectExact1<float, float>(s, "tint", 4, 4, 4, Uniform(-1e3, 1e3), [&](const float* in, float* out) {
    for (int l = 0; l < 4; ++l) out[l] = in[l] * params.color[l];
  });
  // A script with init(): init() and the invokables run on the CPU, the kernels on a GPU driver.
  EXPECT_TRUE(RanOnDriver("init_invoke", "apply"));
  EXPECT_TRUE(RanOnDriver("init_invoke", "tint"));
}

// static_tables.rs: init() and setters fill static globals (a float table, an int4, a struct) that the API cannot
// see; kernels read them. On a GPU driver those kernels run there, with the values the CPU side computed.
TEST_F(Corpus, StaticGlobalsComputedOnTheCpuReachTheKernels) {
  KilnScript* s = Script("static_tables");
  ASSERT_NE(s, nullptr) << messages_.All();
  float table[256] = {};
  EXPECT_EQ(KilnScriptGetGlobal(s, "sLut", table, sizeof table), kKilnInvalidArgument);
  EXPECT_NE(messages_.All().find("no global 'sLut' it exports (it is static)"), std::string::npos) << messages_.All();
  EXPECT_EQ(KilnScriptSetGlobal(s, "sLut", table, sizeof table), kKilnInvalidArgument);

  // What init() left.
  ExpectExact1<uint8_t, float>(s, "lut", 1, 1, 1, FullRange<uint8_t>(),
                               [](const uint8_t* in, float* out) { *out = static_cast<float>(*in) * 0.5f; });
  const int32_t offset = 17;
  ASSERT_EQ(KilnScriptSetGlobal(s, "gOffset", &offset, 4), kKilnOk);
  const auto small = [](size_t n, uint32_t seed) { return RandomInts<int32_t>(n, -100000, 100000, seed); };
  ExpectExact1<int32_t, int32_t>(s, "weigh", 4, 1, 1, small, [&](const int32_t* in, int32_t* out) {
    *out = in[0] * 3 + in[1] * -5 + in[2] * 7 + in[3] * 11 + offset;
  });
  ExpectExact1<int32_t, int32_t>(s, "window", 1, 1, 1, small,
                                 [](const int32_t* in, int32_t* out) { *out = std::clamp(*in, -100, 100) + 1; });
  ExpectExact1<uint8_t, uint8_t>(s, "tint", 4, 4, 4, FullRange<uint8_t>(), [](const uint8_t* in, uint8_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<uint8_t>(in[l] + l + 1);
  });

  // Setters change them between launches; every launch sees the latest values.
  const float gain = -3.25f;
  ASSERT_EQ(KilnScriptInvoke(s, "setGain", &gain, sizeof gain), kKilnOk) << messages_.All();
  struct {
    int32_t lo, hi;
    uint8_t fill[4];
  } window = {-5000, 70000, {250, 0, 128, 255}};
  ASSERT_EQ(KilnScriptInvoke(s, "setWindow", &window, sizeof window), kKilnOk) << messages_.All();
  const int32_t weights[4] = {-1, 2, -3, 4};
  ASSERT_EQ(KilnScriptInvoke(s, "setWeights", weights, sizeof weights), kKilnOk) << messages_.All();
  ExpectExact1<uint8_t, float>(s, "lut", 1, 1, 1, FullRange<uint8_t>(),
                               [&](const uint8_t* in, float* out) { *out = static_cast<float>(*in) * gain; });
  ExpectExact1<int32_t, int32_t>(s, "weigh", 4, 1, 1, small, [&](const int32_t* in, int32_t* out) {
    *out = -in[0] + in[1] * 2 - in[2] * 3 + in[3] * 4 + offset;
  });
  ExpectExact1<int32_t, int32_t>(s, "window", 1, 1, 1, small, [](const int32_t* in, int32_t* out) {
    *out = std::clamp(*in, -5000, 70000) + 3;  // init(), setGain, setWindow each counted
  });
  ExpectExact1<uint8_t, uint8_t>(s, "tint", 4, 4, 4, FullRange<uint8_t>(), [&](const uint8_t* in, uint8_t* out) {
    for (int l = 0; l < 4; ++l) out[l] = static_cast<uint8_t>(in[l] + window.fill[l]);
  });
  for (const char* kernel : {"lut", "weigh", "window", "tint"}) {
    EXPECT_TRUE(RanOnDriver("static_tables", kernel)) << kernel << " did not run on the driver";
  }
}

// invoke_allocation.rs: an invokable's rs_allocation parameter takes a KilnTensor* in the argument block (NULL
// is a null allocation); it reads and writes the tensor, and a kernel (on a GPU driver, there) uses the result.
TEST_F(Corpus, InvokablesTakeAllocationArguments) {
  KilnScript* s = Script("invoke_allocation");
  ASSERT_NE(s, nullptr) << messages_.All();
  for (const Cells& cells : OddShapes()) {
    if (cells.size() != 1) continue;  // a 1D allocation
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>(static_cast<int>(i % 7) - 3);  // exact sums
    KilnTensor* t = In(cells, 1, values);
    struct {
      KilnTensor* a;
      float scale;
    } args = {t, 0.5f};
    static_assert(sizeof args == 16, "sum packs rs_allocation, float at offsets 0, 8");
    ASSERT_EQ(KilnScriptInvoke(s, "sum", &args, sizeof args), kKilnOk) << messages_.All();
    float sum = 0;
    int32_t count = 0;
    ASSERT_EQ(KilnScriptGetGlobal(s, "gSum", &sum, 4), kKilnOk);
    ASSERT_EQ(KilnScriptGetGlobal(s, "gCount", &count, 4), kKilnOk);
    double want = 0;
    for (float v : values) want += v;
    EXPECT_EQ(sum, static_cast<float>(want * 0.5));
    EXPECT_EQ(count, static_cast<int32_t>(n));
    const float k = -2.0f;
    struct {
      KilnTensor* a;
      float k;
    } scale = {t, k};
    ASSERT_EQ(KilnScriptInvoke(s, "scaleInPlace", &scale, sizeof scale), kKilnOk) << messages_.All();
    const auto scaled = Read<float>(t);
    Mismatches bad;
    for (size_t i = 0; i < n; ++i) {
      if (scaled[i] != values[i] * k) bad.Add(i, "scaleInPlace got " + Text(scaled[i]));
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    // A kernel uses the sum the invokable computed.
    const auto out = Map<float>(s, "times_sum", {In(cells, 1, values)}, cells, 1);
    ASSERT_EQ(out.size(), n);
    for (size_t i = 0; i < n; ++i) {
      if (out[i] != values[i] * sum) bad.Add(i, "times_sum got " + Text(out[i]));
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    Release();
  }
  // NULL is a null allocation (rsIsObject is false).
  struct {
    KilnTensor* a;
    float scale;
  } none = {nullptr, 1.0f};
  ASSERT_EQ(KilnScriptInvoke(s, "sum", &none, sizeof none), kKilnOk) << messages_.All();
  int32_t count = 0;
  ASSERT_EQ(KilnScriptGetGlobal(s, "gCount", &count, 4), kKilnOk);
  EXPECT_EQ(count, -1);
  // A uint8 [h, w, 4] tensor is an image of uchar4 pixels, after an int argument.
  const Cells image = {3, 5};
  std::vector<uint8_t> pixels(3 * 5 * 4);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i);
  struct {
    int32_t unused;
    KilnTensor* image;
  } px = {0, In(image, 4, pixels)};
  static_assert(sizeof px == 16, "pixels packs int, rs_allocation at offsets 0, 8");
  ASSERT_EQ(KilnScriptInvoke(s, "pixels", &px, sizeof px), kKilnOk) << messages_.All();
  float green = 0;
  ASSERT_EQ(KilnScriptGetGlobal(s, "gCount", &count, 4), kKilnOk);
  ASSERT_EQ(KilnScriptGetGlobal(s, "gSum", &green, 4), kKilnOk);
  EXPECT_EQ(count, 5 * 1000 + 3) << "x is the innermost cell dimension";
  EXPECT_EQ(green, static_cast<float>(pixels[(2 * 5 + 1) * 4 + 1]));
  EXPECT_TRUE(RanOnDriver("invoke_allocation", "times_sum"));
}

TEST_F(Corpus, ForEachFromAnInvokable) {
  KilnScript* s = Script("foreach_invokable");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 900;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto in = RandomFloats(n, -100, 100, seed++);
    KilnTensor* tin = In(cells, 1, in);
    KilnTensor* tmp = Out<float>(cells);
    KilnTensor* out = Out<float>(cells);
    ASSERT_EQ(KilnScriptBindAllocation(s, "gIn", tin), kKilnOk) << messages_.All();
    ASSERT_EQ(KilnScriptBindAllocation(s, "gTmp", tmp), kKilnOk) << messages_.All();
    ASSERT_EQ(KilnScriptBindAllocation(s, "gOut", out), kKilnOk) << messages_.All();
    const float bias = 0.375f;
    ASSERT_EQ(KilnScriptInvoke(s, "pipeline", &bias, sizeof bias), kKilnOk) << messages_.All();
    const auto got = Read<float>(out);
    Mismatches bad;
    for (size_t k = 0; k < n; ++k) {
      const float b = in[k] + bias;
      if (!Same(got[k], b * b)) bad.Add(k, "pipeline got " + Text(got[k]));
    }
    // square_range over [start, end) of x only: a fresh output keeps zeros elsewhere.
    KilnTensor* ranged = Out<float>(cells);
    ASSERT_EQ(KilnScriptBindAllocation(s, "gOut", ranged), kKilnOk);
    const uint32_t w = DimOf(cells, 0);
    const uint32_t range[2] = {w / 3, w - w / 4};
    ASSERT_EQ(KilnScriptInvoke(s, "square_range", range, sizeof range), kKilnOk) << messages_.All();
    const auto part = Read<float>(ranged);
    for (size_t k = 0; k < n; ++k) {
      const uint32_t x = Coords(cells, k)[0];
      const float want = x >= range[0] && x < range[1] ? in[k] * in[k] : 0.0f;
      if (!Same(part[k], want)) bad.Add(k, "square_range got " + Text(part[k]) + " want " + Text(want));
    }
    EXPECT_EQ(bad.count(), 0) << bad.Report();
    for (const char* name : {"gIn", "gTmp", "gOut"}) KilnScriptBindAllocation(s, name, nullptr);
    Release();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Reductions

TEST_F(Corpus, SumReductions) {
  KilnScript* s = Script("reduce_sum");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 1000;
  for (const Cells& cells : OddShapes3D()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    const auto a = RandomFull<int32_t>(n, seed++), b = RandomInts<int32_t>(n, -3, 3, seed++);
    KilnTensor* ta = In(cells, 1, a);
    KilnTensor* tb = In(cells, 1, b);
    int64_t want_sum = 0, want_dot = 0;
    for (size_t k = 0; k < n; ++k) {
      want_sum += a[k];
      want_dot += int64_t{a[k]} * b[k];
    }
    int64_t got = 0;
    ASSERT_EQ(KilnScriptReduce(s, "sum_long", &ta, 1, &got, 8, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(got, want_sum);
    KilnTensor* pair[2] = {ta, tb};
    ASSERT_EQ(KilnScriptReduce(s, "dot_int", pair, 2, &got, 8, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(got, want_dot);
    // Multiples of 2^-10 below 2^10 in magnitude: their sum is exact in double in any order.
    auto f = RandomFloats(n, -1000, 1000, seed++);
    double sum = 0;
    for (float& v : f) sum += (v = std::round(v * 1024.0f) / 1024.0f);
    float mean = 0;
    KilnTensor* tf = In(cells, 1, f);
    ASSERT_EQ(KilnScriptReduce(s, "mean", &tf, 1, &mean, 4, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(mean, static_cast<float>(sum / static_cast<double>(n)));
    const auto u = RandomFull<uint32_t>(n, seed++);
    uint32_t wrapped = 0, want_wrapped = 0;
    for (uint32_t v : u) want_wrapped += v;
    KilnTensor* tu = In(cells, 1, u);
    ASSERT_EQ(KilnScriptReduce(s, "wrapping_sum", &tu, 1, &wrapped, 4, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(wrapped, want_wrapped);
    Release();
  }
}

TEST_F(Corpus, MinMaxWithIndex) {
  KilnScript* s = Script("reduce_minmax");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 1100;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    // Few distinct values, so the extremes repeat and the first occurrence has to win.
    auto v = RandomFloats(n, -500, 500, seed++);
    for (float& x : v) x = std::round(x);
    KilnTensor* tv = In(cells, 1, v);
    uint32_t got[4] = {};
    ASSERT_EQ(KilnScriptReduce(s, "minmax_index", &tv, 1, got, sizeof got, nullptr), kKilnOk) << messages_.All();
    const size_t lo = std::min_element(v.begin(), v.end()) - v.begin();
    const size_t hi = std::max_element(v.begin(), v.end()) - v.begin();
    EXPECT_EQ(got[0], Coords(cells, lo)[0]);
    EXPECT_EQ(got[1], Coords(cells, lo)[1]);
    EXPECT_EQ(got[2], Coords(cells, hi)[0]);
    EXPECT_EQ(got[3], Coords(cells, hi)[1]);
    const auto bytes = RandomInts<uint8_t>(n, 0, 254, seed++);
    uint8_t max_byte = 0;
    KilnTensor* tb = In(cells, 1, bytes);
    ASSERT_EQ(KilnScriptReduce(s, "max_uchar", &tb, 1, &max_byte, 1, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(max_byte, *std::max_element(bytes.begin(), bytes.end()));
    Release();
  }
}

TEST_F(Corpus, HistogramAndMode) {
  KilnScript* s = Script("reduce_histogram");
  ASSERT_NE(s, nullptr) << messages_.All();
  uint32_t seed = 1200;
  for (const Cells& cells : OddShapes()) {
    SCOPED_TRACE(ShapeName(cells));
    const size_t n = CellCount(cells);
    auto px = RandomFull<uint8_t>(4 * n, seed++);
    for (size_t k = 0; k < px.size(); ++k) px[k] = static_cast<uint8_t>(px[k] / 2 + (k % 7) * 16);  // uneven
    KilnTensor* t = In(cells, 4, px);
    std::vector<uint32_t> want(256), got(256);
    for (size_t k = 0; k < n; ++k) {
      ++want[(px[4 * k] * 77u + px[4 * k + 1] * 151u + px[4 * k + 2] * 28u) >> 8];
    }
    ASSERT_EQ(KilnScriptReduce(s, "histogram", &t, 1, got.data(), 1024, nullptr), kKilnOk) << messages_.All();
    EXPECT_EQ(got, want);
    int32_t mode[2] = {};
    ASSERT_EQ(KilnScriptReduce(s, "mode", &t, 1, mode, sizeof mode, nullptr), kKilnOk) << messages_.All();
    const size_t best = std::max_element(want.begin(), want.end()) - want.begin();
    EXPECT_EQ(mode[0], static_cast<int32_t>(best));
    EXPECT_EQ(mode[1], static_cast<int32_t>(want[best]));
    Release();
  }
}

}  // namespace
}  // namespace corpus
}  // namespace kiln
