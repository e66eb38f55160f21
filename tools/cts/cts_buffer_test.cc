// Areas "Buffers" (sizes, alignment, host memory, mapping, reads and writes at offsets) and "Copies" (data
// moved between buffers, through the host and by a kernel, compared with the reference).
#include <cstdlib>
#include <cstring>
#include <memory>

#include "tools/cts/cts.h"

namespace kiln {
namespace cts {
namespace {

class Buffers : public DeviceTest {};

// Sizes 1, odd, a page plus one, and large: what is written is read back.
TEST_P(Buffers, SizesRoundTrip) {
  for (uint64_t size : {uint64_t{1}, uint64_t{3}, uint64_t{17}, uint64_t{4097}, uint64_t{(1u << 20) + 13},
                        uint64_t{24u << 20}}) {
    SCOPED_TRACE("buffer of " + std::to_string(size) + " bytes");
    Buffer buffer(dut(), size);
    ASSERT_TRUE(buffer.ok()) << "buffer_create: " << StatusName(buffer.status()) << ": "
                             << Dut().services().LastError();
    const std::vector<uint8_t> data = PatternBytes(size, static_cast<uint32_t>(size));
    ASSERT_TRUE(buffer.Write(data.data(), size));
    EXPECT_TRUE(buffer.Read() == data) << "read back differs from what was written";
  }
}

TEST_P(Buffers, SizeZeroRefused) {
  KilnHalBufferDesc desc{sizeof(KilnHalBufferDesc), 0, 0, nullptr};
  KilnHalBuffer* buffer = nullptr;
  CTS_EXPECT_FAILS(Dut(), Dut().hal().buffer_create(dut().device(), &desc, &buffer));
}

// Far beyond any device's memory (2^62 bytes, and more than limits.max_buffer_size): refused with a message,
// not attempted. (Exactly max_buffer_size + 1 would make a driver without its own check try to allocate it.)
TEST_P(Buffers, TooLargeRefused) {
  const KilnHalDeviceInfo info = DutInfo();
  if (info.limits.max_buffer_size >= (uint64_t{1} << 62)) GTEST_SKIP() << "the device has no buffer size limit";
  for (uint64_t size : {uint64_t{1} << 62, UINT64_MAX - 4095}) {
    KilnHalBufferDesc desc{sizeof(KilnHalBufferDesc), 0, size, nullptr};
    KilnHalBuffer* buffer = nullptr;
    CTS_EXPECT_FAILS(Dut(), Dut().hal().buffer_create(dut().device(), &desc, &buffer));
  }
}

// Partial writes land exactly where they are aimed, and reads at offsets see them.
TEST_P(Buffers, ReadWriteAtOffsets) {
  const uint64_t size = 1000;
  Buffer buffer(dut(), size);
  ASSERT_TRUE(buffer.ok()) << Dut().services().LastError();
  std::vector<uint8_t> model = PatternBytes(size, 7);
  ASSERT_TRUE(buffer.Write(model.data(), size));
  struct Piece {
    uint64_t offset, size;
  };
  for (const Piece& piece : {Piece{0, 1}, Piece{1, 3}, Piece{333, 17}, Piece{999, 1}, Piece{500, 500},
                             Piece{1000, 0}, Piece{64, 0}}) {
    const std::vector<uint8_t> patch = PatternBytes(piece.size, static_cast<uint32_t>(piece.offset + 99));
    ASSERT_TRUE(buffer.Write(patch.data(), piece.size, piece.offset));
    std::copy(patch.begin(), patch.end(), model.begin() + piece.offset);
    EXPECT_TRUE(buffer.Read(piece.offset, piece.size) == patch)
        << "read of [" << piece.offset << ", +" << piece.size << ") differs";
  }
  EXPECT_TRUE(buffer.Read() == model) << "a partial write changed bytes outside its range";
}

TEST_P(Buffers, OutOfRangeRefused) {
  Buffer buffer(dut(), 64);
  ASSERT_TRUE(buffer.ok());
  uint8_t bytes[128] = {};
  const KilnHalDriver& hal = Dut().hal();
  CTS_EXPECT_FAILS(Dut(), hal.buffer_write(buffer.get(), 60, bytes, 8));
  CTS_EXPECT_FAILS(Dut(), hal.buffer_read(buffer.get(), 65, 0, bytes));
  CTS_EXPECT_FAILS(Dut(), hal.buffer_read(buffer.get(), 0, 65, bytes));
  // offset + size wraps around 2^64.
  CTS_EXPECT_FAILS(Dut(), hal.buffer_read(buffer.get(), UINT64_MAX - 3, 8, bytes));
  // A NULL data pointer: a status is enough.
  EXPECT_NE(hal.buffer_write(buffer.get(), 8, nullptr, 8), kKilnOk);
}

// Mapped memory is aligned as the device promises, and writes through it are what buffer_read sees.
TEST_P(Buffers, MapAlignedAndCoherent) {
  const KilnHalDeviceInfo info = DutInfo();
  if (!(info.flags & KILN_HAL_DEVICE_MAPPABLE_BUFFERS) || !Dut().hal().buffer_map) {
    GTEST_SKIP() << "the device does not map buffers (no KILN_HAL_DEVICE_MAPPABLE_BUFFERS)";
  }
  const uint64_t size = 4096 + 5;
  Buffer buffer(dut(), size);
  ASSERT_TRUE(buffer.ok());
  void* whole = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().buffer_map(buffer.get(), 0, size, &whole));
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(whole) % info.limits.buffer_alignment, 0u)
      << "mapped memory is not aligned to limits.buffer_alignment " << info.limits.buffer_alignment;
  const std::vector<uint8_t> data = PatternBytes(size, 3);
  memcpy(whole, data.data(), size);
  CTS_ASSERT_OK(dut(), Dut().hal().buffer_unmap(buffer.get()));
  EXPECT_TRUE(buffer.Read() == data);
  // A range at an offset maps the bytes of that range.
  void* part = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().buffer_map(buffer.get(), 1000, 100, &part));
  ASSERT_NE(part, nullptr);
  EXPECT_EQ(memcmp(part, data.data() + 1000, 100), 0) << "buffer_map at offset 1000 shows other bytes";
  CTS_ASSERT_OK(dut(), Dut().hal().buffer_unmap(buffer.get()));
  CTS_EXPECT_FAILS(Dut(), Dut().hal().buffer_map(buffer.get(), size - 10, 11, &part));
}

struct AlignedFree {
  void operator()(void* p) const { free(p); }
};

// Host memory wrapped without a copy: both directions see each other's writes, and a kernel writes into it.
TEST_P(Buffers, HostWrapSharesMemory) {
  const KilnHalDeviceInfo info = DutInfo();
  if (!(info.flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY)) {
    GTEST_SKIP() << "the device cannot wrap host memory (no KILN_HAL_DEVICE_HOST_SHARED_MEMORY)";
  }
  const size_t alignment = std::max<size_t>(info.limits.buffer_alignment, sizeof(void*));
  const uint64_t size = 4096;
  std::unique_ptr<void, AlignedFree> host(aligned_alloc(alignment, size));
  memset(host.get(), 0, size);
  Buffer buffer(dut(), size, host.get());
  ASSERT_TRUE(buffer.ok()) << Dut().services().LastError();
  const std::vector<uint8_t> data = PatternBytes(100, 11);
  ASSERT_TRUE(buffer.Write(data.data(), data.size(), 200));
  EXPECT_EQ(memcmp(static_cast<uint8_t*>(host.get()) + 200, data.data(), data.size()), 0)
      << "buffer_write did not reach the wrapped host memory";
  static_cast<uint8_t*>(host.get())[7] = 0x5A;
  EXPECT_EQ(buffer.Read(7, 1)[0], 0x5A) << "buffer_read does not see the wrapped host memory";

  // A kernel's output lands in host memory.
  KilnHalModule *ref_module, *dut_module;
  ASSERT_TRUE(LoadModule("cts_shapes", &ref_module, &dut_module));
  Script script(dut(), dut_module);
  ASSERT_TRUE(script.ok());
  const int iota = ModuleFile::Open("cts_shapes", nullptr)->KernelIndex("iota");
  const uint32_t dims[3] = {16, 4, 1};
  KilnHalBufferView out = DenseView(buffer, 4, dims[0], dims[1]);
  KilnHalForEachDesc desc = ForEach(iota, dims, nullptr, 0, &out);
  CTS_ASSERT_OK(dut(), Dut().hal().launch_for_each(script.get(), &desc));
  const int32_t* cells = static_cast<const int32_t*>(host.get());
  EXPECT_EQ(cells[3 * 16 + 5], 5 + 100 * 3) << "iota(5, 3) did not land in the wrapped memory";
}

TEST_P(Buffers, HostWrapNullRefused) {
  KilnHalBufferDesc desc{sizeof(KilnHalBufferDesc), KILN_HAL_BUFFER_HOST_WRAP, 64, nullptr};
  KilnHalBuffer* buffer = nullptr;
  CTS_EXPECT_FAILS(Dut(), Dut().hal().buffer_create(dut().device(), &desc, &buffer));
}

TEST_P(Buffers, ManyBuffersIndependent) {
  std::vector<std::unique_ptr<Buffer>> buffers;
  for (uint32_t i = 0; i < 64; ++i) {
    buffers.push_back(std::make_unique<Buffer>(dut(), 1 + i * 37));
    ASSERT_TRUE(buffers.back()->ok()) << "buffer " << i << ": " << Dut().services().LastError();
    const std::vector<uint8_t> data = PatternBytes(1 + i * 37, i);
    ASSERT_TRUE(buffers.back()->Write(data.data(), data.size()));
  }
  for (uint32_t i = 0; i < 64; ++i) {
    EXPECT_TRUE(buffers[i]->Read() == PatternBytes(1 + i * 37, i)) << "buffer " << i << " changed";
  }
}

INSTANTIATE_TEST_SUITE_P(Device, Buffers, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

// ---- Copies
// -------------------------------------------------------------------------------------------------

class Copies : public DeviceTest {};

// Host-side copies: read from one buffer, write into another at an odd offset.
TEST_P(Copies, ThroughHost) {
  Buffer a(dut(), 777), b(dut(), 1024);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<uint8_t> data = PatternBytes(777, 5);
  ASSERT_TRUE(a.Write(data.data(), data.size()));
  const std::vector<uint8_t> middle = a.Read(101, 500);
  ASSERT_TRUE(b.Write(middle.data(), middle.size(), 3));
  EXPECT_TRUE(b.Read(3, 500) == std::vector<uint8_t>(data.begin() + 101, data.begin() + 601));
}

// Device-side copies with a byte kernel, between offsets that are not aligned, over 1D, 2D and 3D views,
// compared with the reference and with the source bytes.
TEST_P(Copies, ByKernelAtOffsets) {
  KilnHalModule *ref_module, *dut_module;
  ASSERT_TRUE(LoadModule("cts_types", &ref_module, &dut_module));
  const int kernel = ModuleFile::Open("cts_types", nullptr)->KernelIndex("copy_bytes");
  ASSERT_GE(kernel, 0);
  struct Shape {
    uint32_t dims[3];
    uint64_t src_offset, dst_offset;
  };
  for (const Shape& shape : {Shape{{1000, 1, 1}, 3, 5}, Shape{{33, 17, 1}, 1, 0}, Shape{{7, 5, 3}, 0, 11}}) {
    const uint64_t cells = uint64_t{shape.dims[0]} * shape.dims[1] * shape.dims[2];
    SCOPED_TRACE(std::to_string(shape.dims[0]) + "x" + std::to_string(shape.dims[1]) + "x" +
                 std::to_string(shape.dims[2]));
    const std::vector<uint8_t> source = PatternBytes(cells + shape.src_offset, 21);
    std::vector<std::vector<uint8_t>> results;
    for (const Side& side : {ref(), dut()}) {
      KilnHalModule* module = side.driver == &Reference() ? ref_module : dut_module;
      Script script(side, module);
      Buffer src(side, cells + shape.src_offset), dst(side, cells + shape.dst_offset);
      ASSERT_TRUE(script.ok() && src.ok() && dst.ok());
      ASSERT_TRUE(src.Write(source.data(), source.size()));
      KilnHalBufferView in = DenseView(src, 1, shape.dims[0], shape.dims[1]);
      in.offset = shape.src_offset;
      KilnHalBufferView out = DenseView(dst, 1, shape.dims[0], shape.dims[1]);
      out.offset = shape.dst_offset;
      KilnHalForEachDesc desc = ForEach(kernel, shape.dims, &in, 1, &out);
      CTS_ASSERT_OK(side, side.hal().launch_for_each(script.get(), &desc));
      results.push_back(dst.Read(shape.dst_offset, cells));
    }
    const std::vector<uint8_t> expected(source.begin() + shape.src_offset, source.end());
    EXPECT_TRUE(
        CellsMatch(expected, results[0], CellLayout{kKilnUInt8, 1, 1}, shape.dims, "reference vs source"));
    EXPECT_TRUE(
        CellsMatch(results[0], results[1], CellLayout{kKilnUInt8, 1, 1}, shape.dims, "driver vs reference"));
  }
}

INSTANTIATE_TEST_SUITE_P(Device, Copies, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

}  // namespace
}  // namespace cts
}  // namespace kiln
