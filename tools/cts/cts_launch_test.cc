// Area "Launches": forEach over 1D, 2D and 3D with every element type, several inputs with broadcasting, no
// inputs, strided and offset views, usrData, void kernels, and a large launch. Every result is compared with
// the reference CPU driver, and the reference with the same arithmetic done on the host.
#include <cmath>
#include <cstring>
#include <tuple>

#include "tools/cts/cts.h"

namespace kiln {
namespace cts {
namespace {

struct TypeCase {
  const char* name;  // the RenderScript type, and the kernel mad_<name>
  KilnType lane;
  uint32_t lanes;
  uint32_t element_size;  // a 3-vector is padded to 4 lanes
};

const TypeCase kTypes[] = {
    {"char", kKilnInt8, 1, 1},        {"uchar", kKilnUInt8, 1, 1},      {"short", kKilnInt16, 1, 2},
    {"ushort", kKilnUInt16, 1, 2},    {"int", kKilnInt32, 1, 4},        {"uint", kKilnUInt32, 1, 4},
    {"long", kKilnInt64, 1, 8},       {"ulong", kKilnUInt64, 1, 8},     {"float", kKilnFloat32, 1, 4},
    {"double", kKilnFloat64, 1, 8},   {"char2", kKilnInt8, 2, 2},       {"uchar4", kKilnUInt8, 4, 4},
    {"short3", kKilnInt16, 3, 8},     {"ushort2", kKilnUInt16, 2, 4},   {"int2", kKilnInt32, 2, 8},
    {"int3", kKilnInt32, 3, 16},      {"int4", kKilnInt32, 4, 16},      {"uint3", kKilnUInt32, 3, 16},
    {"long2", kKilnInt64, 2, 16},     {"ulong3", kKilnUInt64, 3, 32},   {"float2", kKilnFloat32, 2, 8},
    {"float3", kKilnFloat32, 3, 16},  {"float4", kKilnFloat32, 4, 16},  {"double2", kKilnFloat64, 2, 16},
    {"double3", kKilnFloat64, 3, 32}, {"double4", kKilnFloat64, 4, 32},
};

struct Shape {
  const char* name;
  uint32_t dims[3];
};
// Small enough that a * 3 + b + (x + 2y + 3z) stays in range for char with the data below.
const Shape kShapes[] = {{"1D", {67, 1, 1}}, {"2D", {13, 7, 1}}, {"3D", {5, 4, 3}}};

uint32_t LaneBytes(KilnType type) {
  switch (type) {
    case kKilnInt8:
    case kKilnUInt8:
      return 1;
    case kKilnInt16:
    case kKilnUInt16:
      return 2;
    case kKilnInt32:
    case kKilnUInt32:
    case kKilnFloat32:
      return 4;
    default:
      return 8;
  }
}

bool IsSigned(KilnType type) {
  return type == kKilnInt8 || type == kKilnInt16 || type == kKilnInt32 || type == kKilnInt64;
}

// Writes `value` into one lane, converting as C does (integers wrap to the lane's width).
void StoreLane(KilnType type, double fvalue, int64_t ivalue, uint8_t* at) {
  switch (type) {
    case kKilnFloat32: {
      float v = static_cast<float>(fvalue);
      memcpy(at, &v, 4);
      return;
    }
    case kKilnFloat64:
      memcpy(at, &fvalue, 8);
      return;
    default: {
      uint64_t bits = static_cast<uint64_t>(ivalue);
      memcpy(at, &bits, LaneBytes(type));  // little-endian: the low bytes are the truncated value
    }
  }
}

double LoadFloatLane(KilnType type, const uint8_t* at) {
  if (type == kKilnFloat32) {
    float v;
    memcpy(&v, at, 4);
    return v;
  }
  double v;
  memcpy(&v, at, 8);
  return v;
}

int64_t LoadIntLane(KilnType type, const uint8_t* at) {
  uint64_t bits = 0;
  memcpy(&bits, at, LaneBytes(type));
  const int shift = 64 - 8 * static_cast<int>(LaneBytes(type));
  return IsSigned(type) ? static_cast<int64_t>(bits << shift) >> shift : static_cast<int64_t>(bits);
}

// Inputs whose arithmetic is exact in every type: small integers, and quarters for floating point.
std::vector<uint8_t> MakeInput(const TypeCase& type, uint64_t cells, uint32_t seed) {
  std::vector<uint8_t> bytes(cells * type.element_size, 0);
  const std::vector<uint8_t> noise = PatternBytes(cells * 4, seed);
  const uint32_t lane_bytes = LaneBytes(type.lane);
  for (uint64_t cell = 0; cell < cells; ++cell) {
    for (uint32_t lane = 0; lane < type.lanes; ++lane) {
      const int r = noise[(cell * 4 + lane) % noise.size()] % 21;  // 0..20
      uint8_t* at = &bytes[cell * type.element_size + lane * lane_bytes];
      if (type.lane == kKilnFloat32 || type.lane == kKilnFloat64) {
        StoreLane(type.lane, (r * 4 - 40) / 4.0, 0, at);
      } else {
        StoreLane(type.lane, 0, IsSigned(type.lane) ? r - 10 : r, at);
      }
    }
  }
  return bytes;
}

// out = a * 3 + b + (x + 2y + 3z), on the host.
std::vector<uint8_t> HostMad(const TypeCase& type, const std::vector<uint8_t>& a,
                             const std::vector<uint8_t>& b, const uint32_t dims[3]) {
  std::vector<uint8_t> out(a.size(), 0);
  const uint32_t lane_bytes = LaneBytes(type.lane);
  uint64_t cell = 0;
  for (uint32_t z = 0; z < dims[2]; ++z) {
    for (uint32_t y = 0; y < dims[1]; ++y) {
      for (uint32_t x = 0; x < dims[0]; ++x, ++cell) {
        const uint32_t coord = x + 2 * y + 3 * z;
        for (uint32_t lane = 0; lane < type.lanes; ++lane) {
          const size_t at = cell * type.element_size + lane * lane_bytes;
          if (type.lane == kKilnFloat32 || type.lane == kKilnFloat64) {
            StoreLane(type.lane,
                      LoadFloatLane(type.lane, &a[at]) * 3 + LoadFloatLane(type.lane, &b[at]) + coord, 0,
                      &out[at]);
          } else {
            StoreLane(type.lane, 0,
                      LoadIntLane(type.lane, &a[at]) * 3 + LoadIntLane(type.lane, &b[at]) + coord, &out[at]);
          }
        }
      }
    }
  }
  return out;
}

class Launches : public DeviceTest {};

class LaunchTypes : public ::testing::WithParamInterface<std::tuple<uint32_t, TypeCase, Shape>>,
                    public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Dut().usable()) GTEST_SKIP() << "the driver is not usable: " << Dut().problem();
  }
};

// Every element type, over 1D, 2D and 3D.
TEST_P(LaunchTypes, MadMatchesReference) {
  const auto& [device, type, shape] = GetParam();
  const Side dut{&Dut(), device, "driver"};
  const Side ref{&Reference(), 0, "reference"};
  std::string error;
  KilnHalModule* ref_module = Reference().Module(0, "cts_types", &error);
  ASSERT_NE(ref_module, nullptr) << "reference: " << error;
  KilnHalModule* dut_module = Dut().Module(device, "cts_types", &error);
  ASSERT_NE(dut_module, nullptr) << "driver: " << error;
  const int kernel = ModuleFile::Open("cts_types", nullptr)->KernelIndex(std::string("mad_") + type.name);
  ASSERT_GE(kernel, 0) << "cts_types has no kernel mad_" << type.name;

  bool supported = true;
  const char* reason = nullptr;
  if (Dut().hal().module_kernel_supported) {
    ASSERT_EQ(Dut().hal().module_kernel_supported(dut_module, kernel, &supported, &reason), kKilnOk);
  }
  if (!supported) {
    EXPECT_TRUE(reason && *reason) << "mad_" << type.name << " is unsupported without a reason";
    GTEST_SKIP() << "the driver does not run mad_" << type.name << ": " << (reason ? reason : "");
  }

  const uint32_t* dims = shape.dims;
  const uint64_t cells = uint64_t{dims[0]} * dims[1] * dims[2];
  const std::vector<uint8_t> a = MakeInput(type, cells, 1), b = MakeInput(type, cells, 2);
  std::vector<std::vector<uint8_t>> results;
  for (const Side& side : {ref, dut}) {
    Script script(side, side.driver == &Reference() ? ref_module : dut_module);
    Buffer in_a(side, a.size()), in_b(side, b.size()), out(side, a.size());
    ASSERT_TRUE(script.ok() && in_a.ok() && in_b.ok() && out.ok())
        << side.role << ": " << side.driver->services().LastError();
    ASSERT_TRUE(in_a.Write(a.data(), a.size()) && in_b.Write(b.data(), b.size()));
    const KilnHalBufferView inputs[2] = {DenseView(in_a, type.element_size, dims[0], dims[1]),
                                         DenseView(in_b, type.element_size, dims[0], dims[1])};
    const KilnHalBufferView output = DenseView(out, type.element_size, dims[0], dims[1]);
    KilnHalForEachDesc desc = ForEach(kernel, dims, inputs, 2, &output);
    CTS_ASSERT_OK(side, side.hal().launch_for_each(script.get(), &desc));
    results.push_back(out.Read());
  }
  const CellLayout layout{type.lane, type.lanes, type.element_size};
  EXPECT_TRUE(
      CellsMatch(HostMad(type, a, b, dims), results[0], layout, dims, "reference vs host arithmetic"));
  EXPECT_TRUE(CellsMatch(results[0], results[1], layout, dims, "driver vs reference"));
}

std::string ElementTypeName(const ::testing::TestParamInfo<std::tuple<uint32_t, TypeCase, Shape>>& info) {
  return "device" + std::to_string(std::get<0>(info.param)) + "_" + std::get<1>(info.param).name + "_" +
         std::get<2>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(Device, LaunchTypes,
                         ::testing::Combine(::testing::ValuesIn(DeviceIndices()), ::testing::ValuesIn(kTypes),
                                            ::testing::ValuesIn(kShapes)),
                         ElementTypeName);

// Views with an offset, padded rows and planes: the kernel writes only the cells, never the padding.
TEST_P(Launches, StridedAndOffsetViews) {
  KilnHalModule *ref_module, *dut_module;
  ASSERT_TRUE(LoadModule("cts_types", &ref_module, &dut_module));
  const int kernel = ModuleFile::Open("cts_types", nullptr)->KernelIndex("mad_float");
  const uint32_t dims[3] = {9, 5, 3};
  const uint64_t offset = 16, stride_y = 9 * 4 + 12, stride_z = stride_y * 5 + 40;
  const uint64_t bytes = offset + stride_z * 3;
  const TypeCase type{"float", kKilnFloat32, 1, 4};
  const std::vector<uint8_t> a = MakeInput(type, bytes / 4, 3), b = MakeInput(type, bytes / 4, 4);
  std::vector<std::vector<uint8_t>> results;
  for (const Side& side : {ref(), dut()}) {
    Script script(side, side.driver == &Reference() ? ref_module : dut_module);
    Buffer in_a(side, bytes), in_b(side, bytes), out(side, bytes);
    ASSERT_TRUE(script.ok() && in_a.ok() && in_b.ok() && out.ok());
    ASSERT_TRUE(in_a.Write(a.data(), bytes) && in_b.Write(b.data(), bytes));
    const std::vector<uint8_t> fill(bytes, 0xEE);
    ASSERT_TRUE(out.Write(fill.data(), bytes));
    KilnHalBufferView views[3];
    for (int i = 0; i < 3; ++i) {
      views[i] = DenseView(i == 0 ? in_a : i == 1 ? in_b : out, 4, dims[0], dims[1]);
      views[i].offset = offset;
      views[i].stride_y = stride_y;
      views[i].stride_z = stride_z;
    }
    KilnHalForEachDesc desc = ForEach(kernel, dims, views, 2, &views[2]);
    CTS_ASSERT_OK(side, side.hal().launch_for_each(script.get(), &desc));
    results.push_back(out.Read());
  }
  const uint32_t flat[3] = {static_cast<uint32_t>(bytes), 1, 1};
  EXPECT_TRUE(CellsMatch(results[0], results[1], CellLayout{kKilnUInt8, 1, 1}, flat,
                         "driver vs reference, byte by byte including the padding"));
  // The host's answer as well: where the driver under test is the CPU driver, the reference is the same code,
  // and only this check can fail. Cells hold a*3 + b + (x + 2y + 3z) (exact for these inputs); padding keeps
  // its fill.
  std::vector<uint8_t> expected(bytes, 0xEE);
  for (uint32_t z = 0; z < dims[2]; ++z) {
    for (uint32_t y = 0; y < dims[1]; ++y) {
      for (uint32_t x = 0; x < dims[0]; ++x) {
        const uint64_t at = offset + uint64_t{x} * 4 + y * stride_y + z * stride_z;
        float fa, fb;
        std::memcpy(&fa, &a[at], 4);
        std::memcpy(&fb, &b[at], 4);
        const float v = fa * 3 + fb + static_cast<float>(x + 2 * y + 3 * z);
        std::memcpy(&expected[at], &v, 4);
      }
    }
  }
  EXPECT_TRUE(CellsMatch(expected, results[1], CellLayout{kKilnUInt8, 1, 1}, flat,
                         "driver vs host arithmetic, byte by byte including the padding"));
}

// Four inputs, three of them broadcast with stride 0 along some dimension.
TEST_P(Launches, FourInputsWithBroadcast) {
  KilnHalModule *ref_module, *dut_module;
  ASSERT_TRUE(LoadModule("cts_shapes", &ref_module, &dut_module));
  const int kernel = ModuleFile::Open("cts_shapes", nullptr)->KernelIndex("blend4");
  ASSERT_GE(kernel, 0);
  if (std::string why = DutUnsupportedReason(dut_module, kernel); !why.empty()) GTEST_SKIP() << why;
  const uint32_t dims[3] = {21, 6, 2};
  const TypeCase type{"float", kKilnFloat32, 1, 4};
  const std::vector<uint8_t> full = MakeInput(type, 21 * 6 * 2, 5), row = MakeInput(type, 21, 6),
                             column = MakeInput(type, 6, 7), scalar = MakeInput(type, 1, 8);
  std::vector<std::vector<uint8_t>> results;
  for (const Side& side : {ref(), dut()}) {
    Script script(side, side.driver == &Reference() ? ref_module : dut_module);
    Buffer a(side, full.size()), b(side, row.size()), c(side, column.size()), d(side, 4),
        out(side, full.size());
    ASSERT_TRUE(script.ok() && a.ok() && b.ok() && c.ok() && d.ok() && out.ok());
    ASSERT_TRUE(a.Write(full.data(), full.size()) && b.Write(row.data(), row.size()) &&
                c.Write(column.data(), column.size()) && d.Write(scalar.data(), 4));
    KilnHalBufferView views[4] = {DenseView(a, 4, 21, 6), DenseView(b, 4, 21, 6), DenseView(c, 4, 21, 6),
                                  DenseView(d, 4, 21, 6)};
    views[1].stride_y = views[1].stride_z = 0;  // one row, repeated down y and z
    views[2].stride_x = 0;                      // one value per row
    views[2].stride_y = 4;
    views[2].stride_z = 0;
    views[3].stride_x = views[3].stride_y = views[3].stride_z = 0;  // one value everywhere
    const KilnHalBufferView output = DenseView(out, 4, 21, 6);
    KilnHalForEachDesc desc = ForEach(kernel, dims, views, 4, &output);
    CTS_ASSERT_OK(side, side.hal().launch_for_each(script.get(), &desc));
    results.push_back(out.Read());
  }
  std::vector<uint8_t> expected(full.size());
  auto f = [](const std::vector<uint8_t>& v, size_t i) {
    float x;
    memcpy(&x, &v[i * 4], 4);
    return x;
  };
  for (uint32_t z = 0, cell = 0; z < 2; ++z) {
    for (uint32_t y = 0; y < 6; ++y) {
      for (uint32_t x = 0; x < 21; ++x, ++cell) {
        float value = f(full, cell) + 2.0f * f(row, x) + 3.0f * f(column, y) + 4.0f * f(scalar, 0);
        memcpy(&expected[cell * 4], &value, 4);
      }
    }
  }
  const CellLayout layout{kKilnFloat32, 1, 4};
  EXPECT_TRUE(CellsMatch(expected, results[0], layout, dims, "reference vs host arithmetic"));
  EXPECT_TRUE(CellsMatch(results[0], results[1], layout, dims, "driver vs reference"));
}

// A kernel with no inputs: its extent comes from the launch alone.
TEST_P(Launches, NoInputs3D) {
  KilnHalModule *ref_module, *dut_module;
  ASSERT_TRUE(LoadModule("cts_shapes", &ref_module, &dut_module));
  const int kernel = ModuleFile::Open("cts_shapes", nullptr)->KernelIndex("iota");
  if (std::string why = DutUnsupportedReason(dut_module, kernel); !why.empty()) GTEST_SKIP() << why;
  const uint32_t dims[3] = {31, 9, 4};
  const uint64_t cells = 31 * 9 * 4;
  std::vector<std::vector<uint8_t>> results;
  for (const Side& side : {ref(), dut()}) {
    Script script(side, side.driver == &Reference() ? ref_module : dut_module);
    Buffer out(side, cells * 4);
    ASSERT_TRUE(script.ok() && out.ok());
    const KilnHalBufferView output = DenseView(out, 4, dims[0], dims[1]);
    KilnHalForEachDesc desc = ForEach(kernel, dims, nullptr, 0, &output);
    CTS_ASSERT_OK(side, side.hal().launch_for_each(script.get(), &desc));
    results.push_back(out.Read());
  }
  std::vector<uint8_t> expected(cells * 4);
  for (uint32_t z = 0, cell = 0; z < 4; ++z) {
    for (uint32_t y = 0; y < 9; ++y) {
      for (uint32_t x = 0; x < 31; ++x, ++cell) {
        int32_t value = static_cast<int32_t>(x + 100 * y + 10000 * z);
        memcpy(&expected[cell * 4], &value, 4);
      }
    }
  }
  EXPECT_TRUE(CellsMatch(expected, results[0], CellLayout{kKilnInt32, 1, 4}, dims, "reference vs host"));
  EXPECT_TRUE(CellsMatch(results[0], results[1], CellLayout{kKilnInt32, 1, 4}, dims, "driver vs reference"));
}

// An old-style root() with usrData, which the driver copies at launch time.
TEST_P(Launches, RootWithUsrData) {
  KilnHalModule *ref_module, *dut_module;
  ASSERT_TRUE(LoadModule("cts_shapes", &ref_module, &dut_module));
  const int kernel = ModuleFile::Open("cts_shapes", nullptr)->KernelIndex("root");
  if (std::string why = DutUnsupportedReason(dut_module, kernel); !why.empty()) GTEST_SKIP() << why;
  const uint32_t dims[3] = {40, 3, 1};
  const TypeCase type{"float", kKilnFloat32, 1, 4};
  const std::vector<uint8_t> in_bytes = MakeInput(type, 120, 9);
  // The kernel's UsrParams, in the kernel language's C layout.
  struct UsrParams {
    float scale;
    uint8_t pad;
    int16_t offset;
    float table[4];
  } params{2.5f, 0xff, -7, {0.25f, -1.5f, 3.0f, 100.0f}};
  std::vector<std::vector<uint8_t>> results;
  for (const Side& side : {ref(), dut()}) {
    Script script(side, side.driver == &Reference() ? ref_module : dut_module);
    Buffer in(side, 480), out(side, 480);
    ASSERT_TRUE(script.ok() && in.ok() && out.ok());
    ASSERT_TRUE(in.Write(in_bytes.data(), 480));
    const KilnHalBufferView input = DenseView(in, 4, 40, 3), output = DenseView(out, 4, 40, 3);
    KilnHalForEachDesc desc = ForEach(kernel, dims, &input, 1, &output);
    desc.usr_data = &params;
    desc.usr_size = sizeof(params);
    CTS_ASSERT_OK(side, side.hal().launch_for_each(script.get(), &desc));
    results.push_back(out.Read());
  }
  std::vector<uint8_t> expected(480);
  for (uint32_t y = 0, cell = 0; y < 3; ++y) {
    for (uint32_t x = 0; x < 40; ++x, ++cell) {
      float in;
      memcpy(&in, &in_bytes[cell * 4], 4);
      float value = in * params.scale + params.table[x & 3] + static_cast<float>(params.offset) +
                    static_cast<float>(x + y);
      memcpy(&expected[cell * 4], &value, 4);
    }
  }
  EXPECT_TRUE(CellsMatch(expected, results[0], CellLayout{kKilnFloat32, 1, 4}, dims, "reference vs host"));
  EXPECT_TRUE(
      CellsMatch(results[0], results[1], CellLayout{kKilnFloat32, 1, 4}, dims, "driver vs reference"));
}

// A void kernel that counts through an atomic on a global.
TEST_P(Launches, VoidKernelUpdatesGlobal) {
  KilnHalModule *ref_module, *dut_module;
  ASSERT_TRUE(LoadModule("cts_shapes", &ref_module, &dut_module));
  const int kernel = ModuleFile::Open("cts_shapes", nullptr)->KernelIndex("count_positive");
  if (std::string why = DutUnsupportedReason(dut_module, kernel); !why.empty()) GTEST_SKIP() << why;
  const uint32_t dims[3] = {1000, 3, 1};
  const TypeCase type{"int", kKilnInt32, 1, 4};
  const std::vector<uint8_t> data = MakeInput(type, 3000, 10);
  int32_t host_count = 0;
  for (size_t i = 0; i < 3000; ++i) host_count += LoadIntLane(kKilnInt32, &data[i * 4]) > 0;
  for (const Side& side : {ref(), dut()}) {
    Script script(side, side.driver == &Reference() ? ref_module : dut_module);
    Buffer in(side, data.size());
    ASSERT_TRUE(script.ok() && in.ok());
    ASSERT_TRUE(in.Write(data.data(), data.size()));
    const KilnHalBufferView input = DenseView(in, 4, 1000, 3);
    KilnHalForEachDesc desc = ForEach(kernel, dims, &input, 1, nullptr);
    CTS_ASSERT_OK(side, side.hal().launch_for_each(script.get(), &desc));
    int32_t count = -1;
    CTS_ASSERT_OK(side, side.hal().script_get_global(script.get(), "gPositives", 4, &count));
    EXPECT_EQ(count, host_count) << side.role << ": gPositives after count_positive";
  }
}

// A launch of a million cells: large enough that a parallel driver splits it.
TEST_P(Launches, LargeLaunch) {
  KilnHalModule *ref_module, *dut_module;
  ASSERT_TRUE(LoadModule("cts_types", &ref_module, &dut_module));
  const int kernel = ModuleFile::Open("cts_types", nullptr)->KernelIndex("mad_int");
  const uint32_t dims[3] = {1024, 1025, 1};
  const TypeCase type{"int", kKilnInt32, 1, 4};
  const uint64_t cells = uint64_t{dims[0]} * dims[1];
  const std::vector<uint8_t> a = MakeInput(type, cells, 11), b = MakeInput(type, cells, 12);
  std::vector<std::vector<uint8_t>> results;
  for (const Side& side : {ref(), dut()}) {
    Script script(side, side.driver == &Reference() ? ref_module : dut_module);
    Buffer in_a(side, a.size()), in_b(side, b.size()), out(side, a.size());
    ASSERT_TRUE(script.ok() && in_a.ok() && in_b.ok() && out.ok());
    ASSERT_TRUE(in_a.Write(a.data(), a.size()) && in_b.Write(b.data(), b.size()));
    const KilnHalBufferView inputs[2] = {DenseView(in_a, 4, dims[0], dims[1]),
                                         DenseView(in_b, 4, dims[0], dims[1])};
    const KilnHalBufferView output = DenseView(out, 4, dims[0], dims[1]);
    KilnHalForEachDesc desc = ForEach(kernel, dims, inputs, 2, &output);
    CTS_ASSERT_OK(side, side.hal().launch_for_each(script.get(), &desc));
    results.push_back(out.Read());
  }
  EXPECT_TRUE(CellsMatch(HostMad(type, a, b, dims), results[0], CellLayout{kKilnInt32, 1, 4}, dims,
                         "reference vs host"));
  EXPECT_TRUE(CellsMatch(results[0], results[1], CellLayout{kKilnInt32, 1, 4}, dims, "driver vs reference"));
}

INSTANTIATE_TEST_SUITE_P(Device, Launches, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

}  // namespace
}  // namespace cts
}  // namespace kiln
