// The .kmod reader and writer on their own: round trips, and modules that must be refused with a clear error.
#include "formats/kmod/module.h"

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kmod_generated.h"

namespace kiln {
namespace {

KernelTypeDesc Scalar(KilnType type, uint32_t lanes, uint32_t lane_bytes) {
  KernelTypeDesc t;
  t.kind = KernelTypeKind::kScalar;
  t.element_type = type;
  t.vector_size = lanes;
  t.size = lane_bytes * (lanes == 3 ? 4 : lanes);
  t.alignment = t.size;
  return t;
}

// A module with one of everything; the payload is not real bitcode (the reader does not look inside it).
KernelModuleDesc SampleModule() {
  KernelModuleDesc m;
  m.compiler_version = "test";
  m.source_name = "sample.rs";
  m.source_checksum.assign(32, 0xab);
  m.package_name = "com.example";
  m.precision = KernelPrecision::kRelaxed;
  m.has_init = true;
  KernelDesc k;
  k.name = "blend";
  k.expand_symbol = "__kiln_expand_blend";
  k.signature = kKernelSigIn | kKernelSigOut | kKernelSigKernel | kKernelSigX;
  k.inputs = {Scalar(kKilnUInt8, 4, 1), Scalar(kKilnFloat32, 1, 4)};
  k.output = Scalar(kKilnUInt8, 4, 1);
  m.kernels.push_back(k);
  GlobalDesc g;
  g.name = "gAlpha";
  g.type = Scalar(kKilnFloat32, 1, 4);
  g.size = 4;
  g.alignment = 4;
  g.default_value = {0, 0, 0x80, 0x3f};
  m.globals.push_back(g);
  GlobalDesc s;
  s.name = "gParams";
  s.type.kind = KernelTypeKind::kStruct;
  s.type.name = "Params";
  s.type.size = 8;
  s.type.alignment = 4;
  s.type.fields.push_back({"a", 0, Scalar(kKilnInt32, 1, 4)});
  s.type.fields.push_back({"b", 4, Scalar(kKilnFloat32, 1, 4)});
  s.size = 8;
  s.alignment = 4;
  s.is_const = true;
  m.globals.push_back(s);
  GlobalDesc p;  // float* gTaps, bound to a tensor by the host
  p.name = "gTaps";
  p.type = Scalar(kKilnFloat32, 1, 4);
  p.type.kind = KernelTypeKind::kPointer;
  p.size = 8;
  p.alignment = 8;
  p.default_value.assign(8, 0);
  p.is_allocation = true;
  m.globals.push_back(p);
  GlobalDesc a;  // rs_allocation gTable
  a.name = "gTable";
  a.type.kind = KernelTypeKind::kAllocation;
  a.type.name = "rs_allocation";
  a.type.size = 8;
  a.type.alignment = 8;
  a.size = 8;
  a.alignment = 8;
  a.default_value.assign(8, 0);
  a.is_allocation = true;
  a.accessed_as = {kKilnFloat32, kKilnInt32};
  m.globals.push_back(a);
  m.kernels[0].pointer_globals = {"gTaps"};
  InvokableDesc f;
  f.name = "setup";
  f.symbol = "__kiln_invoke_setup";
  f.params.push_back({"count", Scalar(kKilnInt32, 1, 4), 0});
  f.params.push_back({"scale", Scalar(kKilnFloat64, 1, 8), 8});
  f.args_size = 16;
  f.args_alignment = 8;
  f.pointer_globals = {"gTaps"};
  m.invokables.push_back(f);
  ReductionDesc r;
  r.name = "sum";
  r.accumulator = "sumAccum";
  r.init_symbol = "__kiln_reduce_sum_init";
  r.accum_symbol = "__kiln_reduce_sum_accum";
  r.combine_symbol = "__kiln_reduce_sum_combine";
  r.out_symbol = "__kiln_reduce_sum_out";
  r.accumulator_type = Scalar(kKilnInt32, 1, 4);
  r.accumulator_size = 4;
  r.accumulator_alignment = 4;
  r.inputs = {Scalar(kKilnInt32, 1, 4)};
  r.result = Scalar(kKilnInt32, 1, 4);
  r.pointer_globals = {"gTaps"};
  m.reductions.push_back(r);
  m.payloads.push_back({kPayloadTargetLlvmBitcode, {'B', 'C', 0xc0, 0xde, 1, 2, 3, 4}});
  m.imports = {"__kiln_rt_debug"};
  return m;
}

std::vector<uint8_t> Write(const KernelModuleDesc& m) {
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_TRUE(WriteKernelModule(m, &bytes, &error)) << error;
  return bytes;
}

std::string ReadError(const std::vector<uint8_t>& bytes) {
  KernelModuleDesc out;
  std::string error;
  EXPECT_FALSE(ReadKernelModule(bytes.data(), bytes.size(), &out, &error));
  return error;
}

TEST(ModuleTest, RoundTrip) {
  const KernelModuleDesc m = SampleModule();
  const std::vector<uint8_t> bytes = Write(m);
  KernelModuleDesc read;
  std::string error;
  ASSERT_TRUE(ReadKernelModule(bytes.data(), bytes.size(), &read, &error)) << error;
  EXPECT_EQ(DescribeKernelModule(read), DescribeKernelModule(m));
  EXPECT_EQ(read.payloads[0].data, m.payloads[0].data);
  EXPECT_EQ(read.source_checksum, m.source_checksum);
  EXPECT_EQ(read.globals[1].type.fields[1].name, "b");
  EXPECT_EQ(read.globals[1].type.fields[1].offset, 4u);
  EXPECT_EQ(read.invokables[0].params[1].offset, 8u);
  EXPECT_EQ(read.reductions[0].accumulator, "sumAccum");
  EXPECT_TRUE(read.has_init);
  EXPECT_EQ(read.precision, KernelPrecision::kRelaxed);
  EXPECT_TRUE(read.globals[2].is_pointer());
  EXPECT_FALSE(read.globals[3].is_pointer());
  EXPECT_EQ(read.kernels[0].pointer_globals, std::vector<std::string>{"gTaps"});
  EXPECT_EQ(read.invokables[0].pointer_globals, std::vector<std::string>{"gTaps"});
  EXPECT_EQ(read.reductions[0].pointer_globals, std::vector<std::string>{"gTaps"});
  EXPECT_EQ(read.globals[3].accessed_as, (std::vector<KilnType>{kKilnFloat32, kKilnInt32}));
  EXPECT_NE(DescribeKernelModule(read).find("accessed as float, int\n"), std::string::npos)
      << DescribeKernelModule(read);
  EXPECT_NE(DescribeKernelModule(read).find("    pointer globals: gTaps\n"), std::string::npos)
      << DescribeKernelModule(read);
  // The payload is 16-byte aligned in the file (so in any 16-byte aligned copy of it): bitcode readers want
  // aligned input.
  const uint8_t* payload_in_file = nullptr;
  for (size_t i = 0; i + 4 <= bytes.size(); ++i) {
    if (std::memcmp(bytes.data() + i, "BC\xc0\xde", 4) == 0) payload_in_file = bytes.data() + i;
  }
  ASSERT_NE(payload_in_file, nullptr);
  EXPECT_EQ((payload_in_file - bytes.data()) % 16, 0);
}

TEST(ModuleTest, TruncatedEverywhere) {
  const std::vector<uint8_t> bytes = Write(SampleModule());
  for (size_t size = 0; size < bytes.size(); ++size) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + size);
    const std::string error = ReadError(cut);
    EXPECT_TRUE(error.find("truncated") != std::string::npos ||
                error.find("not a kernel module") != std::string::npos)
        << "size " << size << ": " << error;
  }
  EXPECT_NE(ReadError({}).find("truncated: 0 bytes"), std::string::npos);
}

TEST(ModuleTest, WrongIdentifier) {
  std::vector<uint8_t> bytes = Write(SampleModule());
  std::memcpy(bytes.data() + 8, "TFL3", 4);
  EXPECT_NE(
      ReadError(bytes).find("not a kernel module: file identifier at offset 8 is 'TFL3', expected 'KMOD'"),
      std::string::npos);
}

// Builds a minimal module with the schema directly, to make what the writer refuses to.
std::vector<uint8_t> BuildRaw(uint32_t format_version, uint16_t hal_major, uint16_t hal_minor) {
  flatbuffers::FlatBufferBuilder b;
  const kmod::HalLevel level(hal_major, hal_minor);
  auto header = kmod::CreateHeader(b, format_version, b.CreateString("raw"), b.CreateString("raw.rs"), 0,
                                   &level, KILN_KERNEL_ABI_VERSION);
  std::vector<uint8_t> data = {1, 2, 3};
  std::vector<flatbuffers::Offset<kmod::Payload>> payloads = {
      kmod::CreatePayload(b, b.CreateString("llvm-bc"), b.CreateVector(data))};
  auto payload_vec = b.CreateVector(payloads);
  kmod::ModuleBuilder module(b);
  module.add_header(header);
  module.add_payloads(payload_vec);
  kmod::FinishSizePrefixedModuleBuffer(b, module.Finish());
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

TEST(ModuleTest, VersionsAndHalLevels) {
  KernelModuleDesc ok;
  std::string error;
  const std::vector<uint8_t> current = BuildRaw(kKernelModuleFormatVersion, 1, 0);
  EXPECT_TRUE(ReadKernelModule(current.data(), current.size(), &ok, &error)) << error;

  EXPECT_NE(ReadError(BuildRaw(kKernelModuleFormatVersion + 1, 1, 0))
                .find("module format version 2 is newer than this runtime supports (1)"),
            std::string::npos);
  EXPECT_NE(ReadError(BuildRaw(0, 1, 0)).find("module format version 0 is not supported"), std::string::npos);
  EXPECT_NE(ReadError(BuildRaw(kKernelModuleFormatVersion, 1, 1))
                .find("module needs HAL level 1.1, this runtime supports up to 1.0"),
            std::string::npos);
  EXPECT_NE(ReadError(BuildRaw(kKernelModuleFormatVersion, 2, 0)).find("HAL level 2.0"), std::string::npos);
}

TEST(ModuleTest, StructuralChecks) {
  std::vector<uint8_t> bytes;
  std::string error;
  auto expect_refused = [&](KernelModuleDesc m, const std::string& message) {
    EXPECT_FALSE(WriteKernelModule(m, &bytes, &error));
    EXPECT_NE(error.find(message), std::string::npos) << "expected '" << message << "', got: " << error;
  };
  KernelModuleDesc m = SampleModule();
  m.kernels[0].signature &= ~kKernelSigIn;
  expect_refused(m, "kernel 0 'blend': the In signature bit disagrees with its 2 inputs");
  m = SampleModule();
  m.kernels[0].inputs.resize(9, m.kernels[0].inputs[0]);
  expect_refused(m, "9 inputs, at most 8");
  m = SampleModule();
  m.kernels[0].expand_symbol = "blend";
  expect_refused(m, "entry point is 'blend', expected '__kiln_expand_blend'");
  m = SampleModule();
  m.globals[0].default_value.push_back(0);
  expect_refused(m, "global 0 'gAlpha': default value has 5 bytes, the global 4");
  m = SampleModule();
  m.globals[1].name = "blend";
  expect_refused(m, "duplicate name 'blend'");
  m = SampleModule();
  m.invokables[0].params[1].offset = 4;
  expect_refused(m, "offset 4 does not fit");
  m = SampleModule();
  m.kernels[0].inputs[0].vector_size = 5;
  expect_refused(m, "vector size 5");
  m = SampleModule();
  m.globals[1].type.fields[1].offset = 6;
  expect_refused(m, "exceeds the struct's 8");
  m = SampleModule();
  m.kernels[0].hal_level = {1, 1};
  expect_refused(m, "needs HAL level 1.1");
  m = SampleModule();
  m.payloads.clear();
  expect_refused(m, "no code payload");
  m = SampleModule();
  m.imports.push_back("not a symbol");
  expect_refused(m, "is not a symbol name");
  // pointer_globals name reflected pointer globals, each once.
  m = SampleModule();
  m.kernels[0].pointer_globals = {"gNowhere"};
  expect_refused(m, "kernel 0 'blend' pointer global 0 'gNowhere': the module has no global of that name");
  m = SampleModule();
  m.invokables[0].pointer_globals = {"gTaps", "gTable"};
  expect_refused(
      m, "invokable 0 'setup' pointer global 1 'gTable': the global is an rs_allocation, not a pointer");
  m = SampleModule();
  m.reductions[0].pointer_globals = {"gAlpha"};
  expect_refused(m, "reduction 0 'sum' pointer global 0 'gAlpha': the global is not an allocation");
  m = SampleModule();
  m.kernels[0].pointer_globals = {"gTaps", "gTaps"};
  expect_refused(m, "pointer global 1 'gTaps': listed twice");
}

// A module naming an unknown pointer global is malformed for the reader too (the writer refuses to make one,
// so the test renames the listed name in the bytes, in place).
// An accessor type outside KilnType's range is refused before it is held as a KilnType.
TEST(ModuleTest, ReaderRefusesUnknownAccessorTypes) {
  KernelModuleDesc m = SampleModule();
  m.globals[3].accessed_as = {static_cast<KilnType>(30)};  // within the enum's value range (no UB)
  EXPECT_NE(ReadError(Write(m)).find("accessed as unknown element type 30"), std::string::npos);
}

// A static global a script writes round-trips with is_static (shown as "static"), is not settable, and the
// reader refuses a static global that is also const or an allocation (kilnc never writes one).
TEST(ModuleTest, StaticGlobalsRoundTripAndAreNeverConstOrAllocations) {
  KernelModuleDesc m = SampleModule();
  GlobalDesc lut;
  lut.name = "sLut";
  lut.type = Scalar(kKilnFloat32, 1, 4);
  lut.type.array_size = 4;
  lut.type.size = 16;
  lut.size = 16;
  lut.alignment = 4;
  lut.default_value.assign(16, 0);
  lut.is_static = true;
  m.globals.push_back(lut);
  KernelModuleDesc read;
  std::string error;
  const std::vector<uint8_t> bytes = Write(m);
  ASSERT_TRUE(ReadKernelModule(bytes.data(), bytes.size(), &read, &error)) << error;
  ASSERT_EQ(read.globals.size(), m.globals.size());
  EXPECT_TRUE(read.globals.back().is_static);
  EXPECT_FALSE(read.globals.back().settable());
  EXPECT_FALSE(read.globals[0].is_static);
  EXPECT_NE(DescribeKernelModule(read).find("global sLut: "), std::string::npos);
  EXPECT_NE(DescribeKernelModule(read).find(" static default ["), std::string::npos) << DescribeKernelModule(read);
  m.globals.back().is_const = true;
  EXPECT_NE(ReadError(Write(m)).find("'sLut': a static global is never const or an allocation"), std::string::npos);
}

TEST(ModuleTest, ReaderRefusesUnknownPointerGlobals) {
  const struct {
    const char* what;
    std::function<const flatbuffers::String*(const kmod::Module*)> name;
    const char* message;
  } cases[] = {
      {"kernel", [](const kmod::Module* m) { return m->kernels()->Get(0)->pointer_globals()->Get(0); },
       "kernel 0 'blend' pointer global 0 'gTapZ': the module has no global of that name"},
      {"invokable", [](const kmod::Module* m) { return m->invokables()->Get(0)->pointer_globals()->Get(0); },
       "invokable 0 'setup' pointer global 0 'gTapZ': the module has no global of that name"},
      {"reduction", [](const kmod::Module* m) { return m->reductions()->Get(0)->pointer_globals()->Get(0); },
       "reduction 0 'sum' pointer global 0 'gTapZ': the module has no global of that name"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<uint8_t> bytes = Write(SampleModule());
    const flatbuffers::String* name = c.name(kmod::GetSizePrefixedModule(bytes.data()));
    ASSERT_NE(name, nullptr);
    ASSERT_EQ(name->str(), "gTaps");
    bytes[reinterpret_cast<const uint8_t*>(name->c_str()) - bytes.data() + 4] = 'Z';
    EXPECT_NE(ReadError(bytes).find(c.message), std::string::npos) << ReadError(bytes);
  }
  // Untouched, the same bytes read.
  const std::vector<uint8_t> bytes = Write(SampleModule());
  KernelModuleDesc read;
  std::string error;
  EXPECT_TRUE(ReadKernelModule(bytes.data(), bytes.size(), &read, &error)) << error;
}

// Random corruption must give an error or a valid module, never a crash (run under ASan/UBSan too).
TEST(ModuleTest, CorruptedBytesNeverCrash) {
  const std::vector<uint8_t> original = Write(SampleModule());
  std::mt19937 rng(1234);
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> bytes = original;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) bytes[12 + rng() % (bytes.size() - 12)] = static_cast<uint8_t>(rng());
    KernelModuleDesc out;
    std::string error;
    if (ReadKernelModule(bytes.data(), bytes.size(), &out, &error)) {
      ++accepted;
    } else {
      EXPECT_FALSE(error.empty());
    }
  }
  // Most flips land in strings and payload bytes, which stay valid; some must be caught.
  EXPECT_LT(accepted, 3000);
}

}  // namespace
}  // namespace kiln
