// Areas "Modules" (loading real modules, per-kernel support, unsupported kernels, imports), "Globals",
// "Invokables" and "Reductions".
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "kiln/spirv_abi.h"
#include "tools/cts/cts.h"

namespace kiln {
namespace cts {
namespace {

const char* const kSuiteModules[] = {"cts_types", "cts_shapes", "cts_script", "cts_reduce"};

class Modules : public DeviceTest {};

// Every module of the suite loads, and what module_get_info says agrees with module_kernel_supported.
TEST_P(Modules, LoadAndReportSupport) {
  for (const char* name : kSuiteModules) {
    SCOPED_TRACE(name);
    std::string error;
    std::shared_ptr<ModuleFile> file = ModuleFile::Open(name, &error);
    ASSERT_NE(file, nullptr) << error;
    std::unique_ptr<ModuleFile> copy = file->Clone();
    KilnHalModule* module = nullptr;
    CTS_ASSERT_OK(dut(), Dut().hal().module_load(dut().device(), copy->desc(), &module));
    // The description is only borrowed: wipe it before using the module.
    copy.reset();
    if (!Dut().hal().module_kernel_supported) {
      EXPECT_EQ(Dut().hal().module_unload(module), kKilnOk) << Dut().services().LastError();
      continue;  // nothing more to check: the runtime takes every kernel as supported
    }
    uint32_t supported = 0;
    for (uint32_t k = 0; k < file->desc()->num_kernels; ++k) {
      bool ok = false;
      const char* reason = nullptr;
      EXPECT_EQ(Dut().hal().module_kernel_supported(module, k, &ok, &reason), kKilnOk);
      supported += ok;
      if (!ok) {
        EXPECT_TRUE(reason && *reason) << "kernel " << k << " unsupported without a reason";
      }
    }
    if (Dut().hal().module_get_info) {
      KilnHalModuleInfo info{};
      info.struct_size = sizeof(info);
      EXPECT_EQ(Dut().hal().module_get_info(module, &info), kKilnOk);
      EXPECT_EQ(info.struct_size, sizeof(info));
      EXPECT_EQ(info.num_kernels_supported, supported);
      EXPECT_LE(info.cache_result, static_cast<uint32_t>(kKilnHalCacheRebuilt));
    }
    bool ok = true;
    CTS_EXPECT_FAILS(Dut(),
                     Dut().hal().module_kernel_supported(module, file->desc()->num_kernels, &ok, nullptr));
    EXPECT_EQ(Dut().hal().module_unload(module), kKilnOk) << Dut().services().LastError();
  }
}

// Removes kernel `kernel`'s code from every payload form the suite knows, so whichever payload the driver
// consumes lacks it: the "llvm-bc" entry point is renamed to a symbol the bitcode does not define, and the
// "spirv" payload's kernel row gets code_size 0 (kiln/spirv_abi.h: no GPU form).
::testing::AssertionResult DropKernelCode(ModuleFile* file, int kernel) {
  file->kernels()[kernel].expand_symbol = file->Keep("__kiln_expand_not_in_the_payload");
  for (KilnHalPayload& payload : file->payloads()) {
    if (!payload.tag || strcmp(payload.tag, KILN_SPIRV_PAYLOAD_TAG) != 0) continue;
    std::string bytes(static_cast<const char*>(payload.data), payload.size);
    KilnSpirvPayloadHeader header;
    if (bytes.size() < sizeof(header)) return ::testing::AssertionFailure() << "spirv payload too small";
    memcpy(&header, bytes.data(), sizeof(header));
    const uint64_t row = uint64_t{header.kernels_offset} + uint64_t{header.kernel_entry_size} * kernel;
    if (header.magic != KILN_SPIRV_PAYLOAD_MAGIC || kernel < 0 ||
        static_cast<uint32_t>(kernel) >= header.num_kernels ||
        header.kernel_entry_size < offsetof(KilnSpirvKernelEntry, code_size) + 4 ||
        row + header.kernel_entry_size > bytes.size()) {
      return ::testing::AssertionFailure() << "spirv payload has no kernel row " << kernel;
    }
    const uint32_t no_code = 0;
    memcpy(&bytes[row + offsetof(KilnSpirvKernelEntry, code_size)], &no_code, sizeof(no_code));
    payload.data = file->Keep(std::move(bytes));
  }
  return ::testing::AssertionSuccess();
}

// Kernels this runtime marks as beyond the device (a newer kernel HAL level, code missing from the payload)
// are reported unsupported with a reason; launching one fails with a message; the others still run.
TEST_P(Modules, UnsupportedKernelsReportedWithReason) {
  std::unique_ptr<ModuleFile> file = ModuleFile::Open("cts_shapes", nullptr)->Clone();
  const int too_new = file->KernelIndex("iota");
  const int missing = file->KernelIndex("blend4");
  const int fine = file->KernelIndex("count_positive");
  file->kernels()[too_new].kernel_level = KILN_HAL_LEVEL(KILN_KERNEL_HAL_LEVEL_MAJOR, 0xfff);
  ASSERT_TRUE(DropKernelCode(file.get(), missing));
  KilnHalModule* module = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().module_load(dut().device(), file->desc(), &module));
  std::string skip_reason;
  for (int kernel : {too_new, missing}) {
    if (!Dut().hal().module_kernel_supported) break;  // then only the failing launch below tells
    bool supported = true;
    const char* reason = nullptr;
    EXPECT_EQ(Dut().hal().module_kernel_supported(module, kernel, &supported, &reason), kKilnOk);
    EXPECT_FALSE(supported) << "kernel " << file->reflection().kernels[kernel].name
                            << (kernel == too_new ? " needs kernel HAL level 1.4095" : " has no code");
    EXPECT_TRUE(reason && *reason) << "no reason given";
  }
  {
    Script script(dut(), module);
    ASSERT_TRUE(script.ok());
    Buffer out(dut(), 64);
    const uint32_t dims[3] = {16, 1, 1};
    const KilnHalBufferView output = DenseView(out, 4, 16, 1);
    KilnHalForEachDesc desc = ForEach(too_new, dims, nullptr, 0, &output);
    CTS_EXPECT_FAILS(Dut(), Dut().hal().launch_for_each(script.get(), &desc));
    // The supported kernel of the same module runs (when the driver can run it at all: it updates a global
    // with an atomic, which a device may leave to the CPU).
    skip_reason = DutUnsupportedReason(module, fine);
  }
  if (!skip_reason.empty()) {
    EXPECT_EQ(Dut().hal().module_unload(module), kKilnOk) << Dut().services().LastError();
    GTEST_SKIP() << "kernel count_positive: " << skip_reason;
  }
  {
    Script script(dut(), module);
    ASSERT_TRUE(script.ok());
    const uint32_t dims[3] = {16, 1, 1};
    const int32_t values[16] = {1, -1, 2, -2, 3, 0, 0, 5, 1, 1, 1, -9, 0, 0, 0, 7};
    Buffer in(dut(), sizeof(values));
    ASSERT_TRUE(in.Write(values, sizeof(values)));
    const KilnHalBufferView input = DenseView(in, 4, 16, 1);
    KilnHalForEachDesc count = ForEach(fine, dims, &input, 1, nullptr);
    CTS_ASSERT_OK(dut(), Dut().hal().launch_for_each(script.get(), &count));
    int32_t positives = -1;
    CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(script.get(), "gPositives", 4, &positives));
    EXPECT_EQ(positives, 8);
  }
  EXPECT_EQ(Dut().hal().module_unload(module), kKilnOk);
}

// A module with no payload the device consumes is refused as a whole, with a message.
TEST_P(Modules, NoUsablePayloadRefused) {
  std::unique_ptr<ModuleFile> file = ModuleFile::Open("cts_shapes", nullptr)->Clone();
  for (KilnHalPayload& payload : file->payloads()) payload.tag = "no-such-payload-kind";
  KilnHalModule* module = nullptr;
  CTS_EXPECT_FAILS(Dut(), Dut().hal().module_load(dut().device(), file->desc(), &module));
}

TEST_P(Modules, CorruptPayloadRefused) {
  std::unique_ptr<ModuleFile> file = ModuleFile::Open("cts_shapes", nullptr)->Clone();
  static const char kGarbage[] = "this is not bitcode, nor SPIR-V, nor anything else";
  for (KilnHalPayload& payload : file->payloads()) {
    payload.data = kGarbage;
    payload.size = sizeof(kGarbage);
  }
  KilnHalModule* module = nullptr;
  CTS_EXPECT_FAILS(Dut(), Dut().hal().module_load(dut().device(), file->desc(), &module));
}

TEST_P(Modules, OtherKernelAbiRefused) {
  std::unique_ptr<ModuleFile> file = ModuleFile::Open("cts_shapes", nullptr)->Clone();
  file->desc()->abi_version = KILN_KERNEL_ABI_VERSION + 1;
  KilnHalModule* module = nullptr;
  CTS_EXPECT_FAILS(Dut(), Dut().hal().module_load(dut().device(), file->desc(), &module));
}

// A module importing rsForEach (__kiln_rt_for_each): the driver either provides the service and runs it
// like the reference, or refuses the module at load, naming the service.
TEST_P(Modules, ImportsProvidedOrRefusedByName) {
  std::string error;
  std::shared_ptr<ModuleFile> file = ModuleFile::Open("cts_foreach", &error);
  ASSERT_NE(file, nullptr) << error;
  KilnHalModule* module = nullptr;
  const size_t before = Dut().services().ErrorCount();
  KilnStatus status = Dut().hal().module_load(dut().device(), file->desc(), &module);
  if (status != kKilnOk) {
    std::vector<std::string> errors = Dut().services().ErrorsSince(before);
    ASSERT_FALSE(errors.empty()) << "module_load failed without a message";
    EXPECT_NE(errors.back().find("__kiln_rt_for_each"), std::string::npos)
        << "the refusal does not name the missing service: " << errors.back();
    GTEST_SKIP() << "the driver does not provide rsForEach: " << errors.back();
  }
  // rsForEach is called from an invokable: a driver without script_invoke runs no host code, so the import
  // never reaches it (the runtime runs invokables on the CPU).
  if (!Dut().hal().script_invoke) {
    EXPECT_EQ(Dut().hal().module_unload(module), kKilnOk) << Dut().services().LastError();
    GTEST_SKIP() << "script_invoke is NULL: the invokable calling rsForEach runs on the CPU";
  }
  {
    Script script(dut(), module);
    ASSERT_TRUE(script.ok());
    const int32_t values[5] = {1, -2, 30, 400, -5000};
    Buffer in(dut(), sizeof(values)), out(dut(), sizeof(values));
    ASSERT_TRUE(in.Write(values, sizeof(values)));
    const KilnHalBufferView in_view = DenseView(in, 4, 5, 1), out_view = DenseView(out, 4, 5, 1);
    CTS_ASSERT_OK(dut(),
                  Dut().hal().script_bind_allocation(script.get(), "gIn", &in_view, kKilnInt32, 1, 5, 0, 0));
    CTS_ASSERT_OK(
        dut(), Dut().hal().script_bind_allocation(script.get(), "gOut", &out_view, kKilnInt32, 1, 5, 0, 0));
    CTS_ASSERT_OK(dut(),
                  Dut().hal().script_invoke(script.get(), file->InvokableIndex("run_twice"), nullptr, 0));
    const std::vector<uint8_t> result = out.Read();
    const int32_t* twice = reinterpret_cast<const int32_t*>(result.data());
    for (int i = 0; i < 5; ++i) EXPECT_EQ(twice[i], values[i] * 2) << "cell " << i;
  }
  EXPECT_EQ(Dut().hal().module_unload(module), kKilnOk);
}

// Unloading a module with a live script is refused with a message; after the script goes, it works.
TEST_P(Modules, UnloadWithLiveScriptRefused) {
  KilnHalModule* module = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().module_load(dut().device(),
                                               ModuleFile::Open("cts_shapes", nullptr)->desc(), &module));
  KilnHalScript* script = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().script_create(module, nullptr, &script));
  CTS_EXPECT_FAILS(Dut(), Dut().hal().module_unload(module));
  EXPECT_EQ(Dut().hal().script_destroy(script), kKilnOk);
  EXPECT_EQ(Dut().hal().module_unload(module), kKilnOk);
}

INSTANTIATE_TEST_SUITE_P(Device, Modules, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

// ---- Globals
// ------------------------------------------------------------------------------------------------

class Globals : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(LoadModule("cts_script", &ref_module_, &dut_module_));
    file_ = ModuleFile::Open("cts_script", nullptr);
    ASSERT_NE(file_, nullptr);
    if (std::string why = DutScriptRefusedReason(dut_module_, file_->desc()->num_kernels); !why.empty())
      GTEST_SKIP() << why;
  }
  KilnHalModule* ref_module_ = nullptr;
  KilnHalModule* dut_module_ = nullptr;
  std::shared_ptr<ModuleFile> file_;
};

// A fresh script has every global at its default, after init() ran: the same bytes as the reference's. A driver
// without script_invoke runs no host code: its fresh script holds the defaults before init(), and the runtime
// runs init() on the CPU driver and sets what it wrote (kiln/hal.h).
TEST_P(Globals, DefaultsAfterInit) {
  Script r(ref(), ref_module_), d(dut(), dut_module_);
  ASSERT_TRUE(r.ok() && d.ok());
  if (!Dut().hal().script_invoke) {
    for (const GlobalDesc& global : file_->reflection().globals) {
      if (global.is_allocation) continue;
      std::vector<uint8_t> got(global.size);
      CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(d.get(), global.name.c_str(), global.size, got.data()));
      EXPECT_TRUE(got == global.default_value) << "global " << global.name << " is not at its default";
    }
    return;
  }
  for (const GlobalDesc& global : file_->reflection().globals) {
    if (global.is_allocation) continue;
    std::vector<uint8_t> want(global.size), got(global.size);
    CTS_ASSERT_OK(
        ref(), Reference().hal().script_get_global(r.get(), global.name.c_str(), global.size, want.data()));
    CTS_ASSERT_OK(dut(),
                  Dut().hal().script_get_global(d.get(), global.name.c_str(), global.size, got.data()));
    EXPECT_TRUE(want == got) << "global " << global.name << " differs from the reference";
  }
  int32_t init_ran = 0;
  CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(d.get(), "gInitRan", 4, &init_ran));
  EXPECT_EQ(init_ran, 7) << "init() did not run at script_create";
}

// Every settable global of every type round-trips, and a kernel sees the values.
TEST_P(Globals, SetGetAndKernelSees) {
  Script r(ref(), ref_module_), d(dut(), dut_module_);
  ASSERT_TRUE(r.ok() && d.ok());
  struct Params {
    float gain;
    int32_t bias;
    uint8_t tint[4];
  } params = {0.5f, 4, {9, 8, 7, 6}};
  const float scale = -1.25f, tint[4] = {0.5f, -3.0f, 7.0f, 1.0f};
  const double offset = 10.5;
  const int64_t big = int64_t{1} << 40;
  for (const Side& side : {ref(), dut()}) {
    KilnHalScript* s = side.driver == &Reference() ? r.get() : d.get();
    CTS_ASSERT_OK(side, side.hal().script_set_global(s, "gScale", &scale, 4));
    CTS_ASSERT_OK(side, side.hal().script_set_global(s, "gOffset", &offset, 8));
    CTS_ASSERT_OK(side, side.hal().script_set_global(s, "gTint", tint, 16));
    CTS_ASSERT_OK(side, side.hal().script_set_global(s, "gBig", &big, 8));
    CTS_ASSERT_OK(side, side.hal().script_set_global(s, "gParams", &params, sizeof(params)));
  }
  Params back{};
  CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(d.get(), "gParams", sizeof(back), &back));
  EXPECT_EQ(memcmp(&back, &params, sizeof(params)), 0) << "gParams did not round-trip";
  int64_t big_back = 0;
  CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(d.get(), "gBig", 8, &big_back));
  EXPECT_EQ(big_back, big);

  const int kernel = file_->KernelIndex("scaled");
  if (std::string why = DutUnsupportedReason(dut_module_, kernel); !why.empty())
    GTEST_SKIP() << "kernel scaled: " << why;
  const uint32_t dims[3] = {50, 1, 1};
  const std::vector<uint8_t> in_bytes = PatternBytes(200, 13);
  std::vector<float> input(50);
  for (int i = 0; i < 50; ++i) input[i] = static_cast<float>(in_bytes[i * 4] % 64) / 8.0f;
  std::vector<std::vector<uint8_t>> results;
  for (const Side& side : {ref(), dut()}) {
    Buffer in(side, 200), out(side, 200);
    ASSERT_TRUE(in.Write(input.data(), 200));
    const KilnHalBufferView input_view = DenseView(in, 4, 50, 1), output = DenseView(out, 4, 50, 1);
    KilnHalForEachDesc desc = ForEach(kernel, dims, &input_view, 1, &output);
    CTS_ASSERT_OK(side, side.hal().launch_for_each(side.driver == &Reference() ? r.get() : d.get(), &desc));
    results.push_back(out.Read());
  }
  std::vector<uint8_t> expected(200);
  for (int i = 0; i < 50; ++i) {
    float value = input[i] * scale + static_cast<float>(offset) +
                  params.gain * static_cast<float>(params.bias) + tint[1] + static_cast<float>(big);
    memcpy(&expected[i * 4], &value, 4);
  }
  EXPECT_TRUE(CellsMatch(expected, results[0], CellLayout{kKilnFloat32, 1, 4}, dims, "reference vs host"));
  EXPECT_TRUE(
      CellsMatch(results[0], results[1], CellLayout{kKilnFloat32, 1, 4}, dims, "driver vs reference"));
}

// Two scripts of one module keep separate globals.
TEST_P(Globals, PerScript) {
  Script a(dut(), dut_module_), b(dut(), dut_module_);
  ASSERT_TRUE(a.ok() && b.ok());
  const float one = 1.0f, two = 2.0f;
  CTS_ASSERT_OK(dut(), Dut().hal().script_set_global(a.get(), "gScale", &one, 4));
  CTS_ASSERT_OK(dut(), Dut().hal().script_set_global(b.get(), "gScale", &two, 4));
  float back_a = 0, back_b = 0;
  CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(a.get(), "gScale", 4, &back_a));
  CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(b.get(), "gScale", 4, &back_b));
  EXPECT_EQ(back_a, 1.0f);
  EXPECT_EQ(back_b, 2.0f) << "scripts share their globals";
}

TEST_P(Globals, ConstReadableNotSettable) {
  Script d(dut(), dut_module_);
  ASSERT_TRUE(d.ok());
  int32_t limit = 0;
  CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(d.get(), "kLimit", 4, &limit));
  EXPECT_EQ(limit, 42);
  const int32_t other = 1;
  CTS_EXPECT_FAILS(Dut(), Dut().hal().script_set_global(d.get(), "kLimit", &other, 4));
}

TEST_P(Globals, WrongNameOrSizeRefused) {
  Script d(dut(), dut_module_);
  ASSERT_TRUE(d.ok());
  double value = 0;
  CTS_EXPECT_FAILS(Dut(), Dut().hal().script_set_global(d.get(), "gNoSuchGlobal", &value, 4));
  CTS_EXPECT_FAILS(Dut(), Dut().hal().script_set_global(d.get(), "gScale", &value, 8));
  CTS_EXPECT_FAILS(Dut(), Dut().hal().script_get_global(d.get(), "gOffset", 4, &value));
  CTS_EXPECT_FAILS(Dut(), Dut().hal().script_set_global(d.get(), nullptr, &value, 4));
}

// An rs_allocation global bound to a buffer: the kernel reads it; reading past its end fails the launch
// with a message instead of touching memory.
TEST_P(Globals, BoundAllocation) {
  if (!Dut().hal().script_bind_allocation) GTEST_SKIP() << "script_bind_allocation is NULL";
  const int kernel = file_->KernelIndex("lookup");
  if (std::string why = DutUnsupportedReason(dut_module_, kernel); !why.empty())
    GTEST_SKIP() << "kernel lookup: " << why;
  std::vector<float> table(40);
  for (int i = 0; i < 40; ++i) table[i] = static_cast<float>(i * i) / 4.0f;
  std::vector<std::vector<uint8_t>> results;
  const uint32_t dims[3] = {40, 1, 1};
  for (const Side& side : {ref(), dut()}) {
    Script s(side, side.driver == &Reference() ? ref_module_ : dut_module_);
    Buffer lookup(side, 160), out(side, 200);
    ASSERT_TRUE(s.ok() && lookup.ok() && out.ok());
    ASSERT_TRUE(lookup.Write(table.data(), 160));
    const KilnHalBufferView view = DenseView(lookup, 4, 40, 1);
    CTS_ASSERT_OK(side,
                  side.hal().script_bind_allocation(s.get(), "gLookup", &view, kKilnFloat32, 1, 40, 0, 0));
    const KilnHalBufferView output = DenseView(out, 4, 50, 1);
    KilnHalForEachDesc desc = ForEach(kernel, dims, nullptr, 0, &output);
    CTS_ASSERT_OK(side, side.hal().launch_for_each(s.get(), &desc));
    results.push_back(out.Read(0, 160));
    if (side.driver == &Dut()) {
      const uint32_t wide[3] = {50, 1, 1};
      KilnHalForEachDesc past = ForEach(kernel, wide, nullptr, 0, &output);
      CTS_EXPECT_FAILS(Dut(), Dut().hal().launch_for_each(s.get(), &past));
    }
  }
  std::vector<uint8_t> expected(160);
  for (int i = 0; i < 40; ++i) {
    float value = table[i] * 2.0f;
    memcpy(&expected[i * 4], &value, 4);
  }
  EXPECT_TRUE(CellsMatch(expected, results[0], CellLayout{kKilnFloat32, 1, 4}, dims, "reference vs host"));
  EXPECT_TRUE(
      CellsMatch(results[0], results[1], CellLayout{kKilnFloat32, 1, 4}, dims, "driver vs reference"));
}

INSTANTIATE_TEST_SUITE_P(Device, Globals, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

// ---- Invokables
// ---------------------------------------------------------------------------------------------

class Invokables : public Globals {};

TEST_P(Invokables, PackedArgumentsReachGlobals) {
  if (!Dut().hal().script_invoke) GTEST_SKIP() << "script_invoke is NULL";
  Script r(ref(), ref_module_), d(dut(), dut_module_);
  ASSERT_TRUE(r.ok() && d.ok());
  struct {
    float scale;
    int32_t counter;
  } set_scale = {3.5f, 5};
  struct {
    double offset;
    int64_t big;
  } add_offset = {1.125, -1000000000000};
  for (const Side& side : {ref(), dut()}) {
    KilnHalScript* s = side.driver == &Reference() ? r.get() : d.get();
    CTS_ASSERT_OK(side, side.hal().script_invoke(s, file_->InvokableIndex("setScale"), &set_scale, 8));
    CTS_ASSERT_OK(side, side.hal().script_invoke(s, file_->InvokableIndex("addOffset"), &add_offset, 16));
    CTS_ASSERT_OK(side, side.hal().script_invoke(s, file_->InvokableIndex("bump"), nullptr, 0));
    CTS_ASSERT_OK(side, side.hal().script_invoke(s, file_->InvokableIndex("bump"), nullptr, 0));
  }
  for (const char* name : {"gScale", "gCounter"}) {
    int32_t want = 0, got = 0;
    CTS_ASSERT_OK(ref(), Reference().hal().script_get_global(r.get(), name, 4, &want));
    CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(d.get(), name, 4, &got));
    EXPECT_EQ(got, want) << name << " differs from the reference";
  }
  int32_t counter = 0;
  CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(d.get(), "gCounter", 4, &counter));
  EXPECT_EQ(counter, 5 + 42 + 2);
  double offset = 0;
  int64_t big = 0;
  CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(d.get(), "gOffset", 8, &offset));
  CTS_ASSERT_OK(dut(), Dut().hal().script_get_global(d.get(), "gBig", 8, &big));
  EXPECT_EQ(offset, 0.25 + 1.125);
  EXPECT_EQ(big, -5 - 1000000000000);
}

// rsSendToClient reaches KilnHalServices.send_to_client with the script's user data.
TEST_P(Invokables, SendToClient) {
  if (!Dut().hal().script_invoke) GTEST_SKIP() << "script_invoke is NULL";
  int marker = 0;
  Script d(dut(), dut_module_, &marker);
  ASSERT_TRUE(d.ok());
  Dut().services().ClearMessages();
  const int32_t value = 77;
  CTS_ASSERT_OK(dut(), Dut().hal().script_invoke(d.get(), file_->InvokableIndex("notify"), &value, 4));
  std::vector<ClientMessage> messages = Dut().services().Messages();
  ASSERT_EQ(messages.size(), 1u) << "rsSendToClient did not reach send_to_client";
  EXPECT_EQ(messages[0].script_user_data, &marker) << "send_to_client got another script_user_data";
  EXPECT_EQ(messages[0].command, 77);
  ASSERT_EQ(messages[0].data.size(), 8u);
  int32_t payload[2];
  memcpy(payload, messages[0].data.data(), 8);
  EXPECT_EQ(payload[0], 77);
  EXPECT_EQ(payload[1], 10) << "gCounter after init()";
}

TEST_P(Invokables, WrongArgumentsRefused) {
  if (!Dut().hal().script_invoke) GTEST_SKIP() << "script_invoke is NULL";
  Script d(dut(), dut_module_);
  ASSERT_TRUE(d.ok());
  const double args[4] = {};
  CTS_EXPECT_FAILS(Dut(), Dut().hal().script_invoke(d.get(), file_->InvokableIndex("setScale"), args, 4));
  CTS_EXPECT_FAILS(Dut(), Dut().hal().script_invoke(d.get(), file_->InvokableIndex("setScale"), nullptr, 8));
  CTS_EXPECT_FAILS(Dut(), Dut().hal().script_invoke(d.get(), 1000, nullptr, 0));
}

INSTANTIATE_TEST_SUITE_P(Device, Invokables, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

// ---- Reductions
// ---------------------------------------------------------------------------------------------

class Reductions : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!Dut().hal().launch_reduce) GTEST_SKIP() << "the driver has no reductions (launch_reduce is NULL)";
    ASSERT_TRUE(LoadModule("cts_reduce", &ref_module_, &dut_module_));
    file_ = ModuleFile::Open("cts_reduce", nullptr);
  }
  // Why the driver cannot run reduction `name` ("" when it can), for the test to skip with.
  std::string Unsupported(const std::string& name) {
    const std::string why = DutUnsupportedReductionReason(dut_module_, file_->ReductionIndex(name));
    return why.empty() ? why : "reduction " + name + ": " + why;
  }
  // Runs reduction `name` over `input` (cells of `element_size` bytes) on one side.
  std::vector<uint8_t> Reduce(const Side& side, const std::string& name, const std::vector<uint8_t>& input,
                              uint32_t element_size, const uint32_t dims[3], uint32_t result_size) {
    Script s(side, side.driver == &Reference() ? ref_module_ : dut_module_);
    Buffer in(side, input.size());
    EXPECT_TRUE(s.ok() && in.ok());
    if (!s.ok() || !in.ok() || !in.Write(input.data(), input.size())) return {};
    const KilnHalBufferView view = DenseView(in, element_size, dims[0], dims[1]);
    KilnHalReduceDesc desc{};
    desc.struct_size = sizeof(desc);
    desc.reduction_index = file_->ReductionIndex(name);
    desc.dim_x = dims[0];
    desc.dim_y = dims[1];
    desc.dim_z = dims[2];
    desc.num_inputs = 1;
    desc.inputs = &view;
    std::vector<uint8_t> result(result_size, 0xEE);
    const size_t before = side.driver->services().ErrorCount();
    KilnStatus status = side.hal().launch_reduce(s.get(), &desc, result_size, result.data());
    EXPECT_EQ(status, kKilnOk) << side.role << ": launch_reduce(" << name << "): "
                               << (side.driver->services().ErrorCount() > before
                                       ? side.driver->services().LastError()
                                       : "");
    return result;
  }
  KilnHalModule* ref_module_ = nullptr;
  KilnHalModule* dut_module_ = nullptr;
  std::shared_ptr<ModuleFile> file_;
};

TEST_P(Reductions, IntSumOverShapes) {
  if (const std::string why = Unsupported("addint"); !why.empty()) GTEST_SKIP() << why;
  for (const auto& dims : {std::array<uint32_t, 3>{1, 1, 1}, std::array<uint32_t, 3>{1000, 1, 1},
                           std::array<uint32_t, 3>{37, 29, 1}, std::array<uint32_t, 3>{11, 7, 5}}) {
    const uint64_t cells = uint64_t{dims[0]} * dims[1] * dims[2];
    SCOPED_TRACE(std::to_string(cells) + " cells");
    std::vector<int32_t> values(cells);
    const std::vector<uint8_t> noise = PatternBytes(cells, static_cast<uint32_t>(cells));
    int64_t sum = 0;
    for (uint64_t i = 0; i < cells; ++i) sum += values[i] = static_cast<int32_t>(noise[i]) - 100;
    std::vector<uint8_t> bytes(cells * 4);
    memcpy(bytes.data(), values.data(), bytes.size());
    std::vector<uint8_t> want = Reduce(ref(), "addint", bytes, 4, dims.data(), 4);
    std::vector<uint8_t> got = Reduce(dut(), "addint", bytes, 4, dims.data(), 4);
    ASSERT_EQ(want.size(), 4u);
    int32_t want_sum, got_sum;
    memcpy(&want_sum, want.data(), 4);
    memcpy(&got_sum, got.data(), 4);
    EXPECT_EQ(want_sum, sum) << "the reference's sum";
    EXPECT_EQ(got_sum, want_sum) << "driver vs reference";
  }
}

TEST_P(Reductions, MinMaxWithOutconverter) {
  if (const std::string why = Unsupported("minmax"); !why.empty()) GTEST_SKIP() << why;
  const uint32_t dims[3] = {333, 3, 1};
  std::vector<float> values(999);
  const std::vector<uint8_t> noise = PatternBytes(999 * 2, 3);
  for (int i = 0; i < 999; ++i)
    values[i] = (static_cast<float>(noise[i * 2]) - 128.0f) * 1.5f + noise[i * 2 + 1] / 256.0f;
  std::vector<uint8_t> bytes(999 * 4);
  memcpy(bytes.data(), values.data(), bytes.size());
  std::vector<uint8_t> want = Reduce(ref(), "minmax", bytes, 4, dims, 16);
  std::vector<uint8_t> got = Reduce(dut(), "minmax", bytes, 4, dims, 16);
  const uint32_t one[3] = {1, 1, 1};
  float host[3] = {*std::min_element(values.begin(), values.end()),
                   *std::max_element(values.begin(), values.end()), 999.0f};
  std::vector<uint8_t> expected(16, 0);
  memcpy(expected.data(), host, 12);
  EXPECT_TRUE(CellsMatch(expected, want, CellLayout{kKilnFloat32, 3, 16}, one, "reference vs host"));
  EXPECT_TRUE(CellsMatch(want, got, CellLayout{kKilnFloat32, 3, 16}, one, "driver vs reference"));
}

TEST_P(Reductions, CoordinatesIn3D) {
  if (const std::string why = Unsupported("weighted"); !why.empty()) GTEST_SKIP() << why;
  const uint32_t dims[3] = {17, 6, 4};
  const uint64_t cells = 17 * 6 * 4;
  std::vector<int64_t> values(cells);
  int64_t host = 0;
  for (uint32_t z = 0, i = 0; z < 4; ++z) {
    for (uint32_t y = 0; y < 6; ++y) {
      for (uint32_t x = 0; x < 17; ++x, ++i) {
        values[i] = static_cast<int64_t>(i * 7919 % 1000) - 500;
        host += values[i] * (x + 1) + (y * 7 + z * 13);
      }
    }
  }
  std::vector<uint8_t> bytes(cells * 8);
  memcpy(bytes.data(), values.data(), bytes.size());
  std::vector<uint8_t> want = Reduce(ref(), "weighted", bytes, 8, dims, 8);
  std::vector<uint8_t> got = Reduce(dut(), "weighted", bytes, 8, dims, 8);
  int64_t want_sum, got_sum;
  memcpy(&want_sum, want.data(), 8);
  memcpy(&got_sum, got.data(), 8);
  EXPECT_EQ(want_sum, host) << "the reference's weighted sum";
  EXPECT_EQ(got_sum, want_sum) << "driver vs reference";
}

TEST_P(Reductions, WrongResultSizeRefused) {
  if (const std::string why = Unsupported("addint"); !why.empty()) GTEST_SKIP() << why;
  Script s(dut(), dut_module_);
  Buffer in(dut(), 40);
  const KilnHalBufferView view = DenseView(in, 4, 10, 1);
  KilnHalReduceDesc desc{};
  desc.struct_size = sizeof(desc);
  desc.reduction_index = file_->ReductionIndex("addint");
  desc.dim_x = 10;
  desc.dim_y = desc.dim_z = 1;
  desc.num_inputs = 1;
  desc.inputs = &view;
  int64_t result = 0;
  CTS_EXPECT_FAILS(Dut(), Dut().hal().launch_reduce(s.get(), &desc, 8, &result));
  CTS_EXPECT_FAILS(Dut(), Dut().hal().launch_reduce(s.get(), &desc, 4, nullptr));
  desc.reduction_index = 99;
  CTS_EXPECT_FAILS(Dut(), Dut().hal().launch_reduce(s.get(), &desc, 4, &result));
}

// HAL 1.1: module_reduction_supported answers for every reduction of a module (with a reason when it says no),
// refuses an index past the end with a message, and a reduction it refuses fails to launch, with a message.
TEST_P(Reductions, SupportAnsweredForEveryReduction) {
  if (!Dut().hal().module_reduction_supported) {
    GTEST_SKIP() << "module_reduction_supported is NULL: every reduction counts as supported";
  }
  const KilnHalModuleDesc& desc = *file_->desc();
  ASSERT_GT(desc.num_reductions, 0u);
  Script s(dut(), dut_module_);
  ASSERT_TRUE(s.ok());
  for (uint32_t i = 0; i < desc.num_reductions; ++i) {
    const KilnHalReductionDesc& r = desc.reductions[i];
    SCOPED_TRACE(std::string("reduction ") + r.name);
    bool supported = false;
    const char* reason = nullptr;
    CTS_ASSERT_OK(dut(), Dut().hal().module_reduction_supported(dut_module_, i, &supported, &reason));
    if (supported) continue;
    EXPECT_TRUE(reason && *reason) << "unsupported without a reason";
    // One cell of each input, broadcast from a zeroed buffer.
    Buffer in(dut(), 256);
    ASSERT_TRUE(in.ok());
    std::vector<KilnHalBufferView> views(r.num_inputs);
    for (uint32_t j = 0; j < r.num_inputs; ++j) views[j] = DenseView(in, r.input_element_sizes[j], 1, 1);
    KilnHalReduceDesc launch{};
    launch.struct_size = sizeof(launch);
    launch.reduction_index = i;
    launch.dim_x = launch.dim_y = launch.dim_z = 1;
    launch.num_inputs = r.num_inputs;
    launch.inputs = views.data();
    std::vector<uint8_t> result(r.result_size, 0xEE);
    CTS_EXPECT_FAILS(Dut(), Dut().hal().launch_reduce(s.get(), &launch, r.result_size, result.data()));
    EXPECT_EQ(result, std::vector<uint8_t>(r.result_size, 0xEE)) << "a refused reduction wrote its result";
  }
  bool supported = true;
  CTS_EXPECT_FAILS(Dut(),
                   Dut().hal().module_reduction_supported(dut_module_, desc.num_reductions, &supported, nullptr));
  CTS_EXPECT_FAILS(Dut(), Dut().hal().module_reduction_supported(dut_module_, 100000, &supported, nullptr));
}

INSTANTIATE_TEST_SUITE_P(Device, Reductions, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

}  // namespace
}  // namespace cts
}  // namespace kiln
