// Areas "Driver" (the entry point, versions, struct sizes, the function table) and "Devices".
#include <cstddef>
#include <cstring>
#include <vector>

#include "tools/cts/cts.h"

namespace kiln {
namespace cts {
namespace {

// The query itself, and what it promises: the runtime's major, a name, a version and a complete table.
TEST(Driver, QueryReportsThisHalMajor) {
  ASSERT_NE(Dut().query_fn(), nullptr) << Dut().problem();
  ASSERT_EQ(Dut().query_status(), kKilnOk) << Dut().problem();
  EXPECT_EQ(Dut().hal().hal_major, KILN_HAL_VERSION_MAJOR)
      << "the driver reports HAL " << Dut().hal().hal_major << "." << Dut().hal().hal_minor
      << "; a runtime refuses a driver of another major";
  EXPECT_TRUE(Dut().usable()) << Dut().problem();
}

TEST(Driver, NameVersionAndInstance) {
  ASSERT_EQ(Dut().query_status(), kKilnOk) << Dut().problem();
  const KilnHalDriver& hal = Dut().hal();
  EXPECT_NE(hal.instance, nullptr);
  ASSERT_NE(hal.name, nullptr) << "KilnHalDriver.name is NULL";
  EXPECT_GT(strlen(hal.name), 0u) << "KilnHalDriver.name is empty";
  ASSERT_NE(hal.version, nullptr) << "KilnHalDriver.version is NULL";
  EXPECT_GT(strlen(hal.version), 0u) << "KilnHalDriver.version is empty";
}

TEST(Driver, TableSizeCoversThisHalVersion) {
  ASSERT_EQ(Dut().query_status(), kKilnOk) << Dut().problem();
  const KilnHalDriver& hal = Dut().hal();
  EXPECT_LE(hal.struct_size, sizeof(KilnHalDriver)) << "the driver wrote more than the runtime's struct_size";
  // A driver of an older minor fills the table as its version has it: HAL 1.0's ends after fence_destroy.
  const size_t expected =
      hal.hal_minor == 0 ? offsetof(KilnHalDriver, fence_destroy) + sizeof(hal.fence_destroy) : sizeof(KilnHalDriver);
  EXPECT_EQ(hal.struct_size, expected)
      << "the driver filled " << hal.struct_size << " bytes of a " << sizeof(KilnHalDriver)
      << "-byte table: it must fill every entry of the HAL version it reports (" << hal.hal_major << "."
      << hal.hal_minor << ": " << expected << " bytes)";
}

TEST(Driver, RequiredEntriesPresent) {
  ASSERT_EQ(Dut().query_status(), kKilnOk) << Dut().problem();
  const KilnHalDriver& hal = Dut().hal();
  struct Entry {
    const char* name;
    const void* fn;
  };
  // What no runtime can do without: the loader's list (docs/hal.md, "Checks before and after dlopen"). Map,
  // reductions, invokables, per-kernel support and batches may be NULL (the suite then skips their tests and
  // says so, or takes every kernel as supported).
  const Entry required[] = {
      {"shutdown", reinterpret_cast<const void*>(hal.shutdown)},
      {"device_count", reinterpret_cast<const void*>(hal.device_count)},
      {"device_get_info", reinterpret_cast<const void*>(hal.device_get_info)},
      {"device_open", reinterpret_cast<const void*>(hal.device_open)},
      {"device_close", reinterpret_cast<const void*>(hal.device_close)},
      {"buffer_create", reinterpret_cast<const void*>(hal.buffer_create)},
      {"buffer_destroy", reinterpret_cast<const void*>(hal.buffer_destroy)},
      {"buffer_write", reinterpret_cast<const void*>(hal.buffer_write)},
      {"buffer_read", reinterpret_cast<const void*>(hal.buffer_read)},
      {"module_load", reinterpret_cast<const void*>(hal.module_load)},
      {"module_unload", reinterpret_cast<const void*>(hal.module_unload)},
      {"script_create", reinterpret_cast<const void*>(hal.script_create)},
      {"script_destroy", reinterpret_cast<const void*>(hal.script_destroy)},
      {"script_set_global", reinterpret_cast<const void*>(hal.script_set_global)},
      {"script_get_global", reinterpret_cast<const void*>(hal.script_get_global)},
      {"launch_for_each", reinterpret_cast<const void*>(hal.launch_for_each)},
  };
  for (const Entry& entry : required)
    EXPECT_NE(entry.fn, nullptr) << "required entry " << entry.name << " is NULL";
  // Batches come as a set: record, submit, wait and destroy.
  const bool any_batch = hal.batch_create || hal.batch_submit || hal.fence_wait;
  if (any_batch) {
    EXPECT_TRUE(hal.batch_create && hal.batch_destroy && hal.batch_record_for_each && hal.batch_submit &&
                hal.fence_wait && hal.fence_destroy)
        << "batch and fence entries must all be present or all be NULL";
  }
  EXPECT_EQ(hal.buffer_map == nullptr, hal.buffer_unmap == nullptr)
      << "buffer_map and buffer_unmap go together";
}

// A newer runtime passes a larger table: the driver fills only what it knows, and not a byte more.
TEST(Driver, LargerTableFromNewerRuntime) {
  ASSERT_NE(Dut().query_fn(), nullptr) << Dut().problem();
  Services services(GetOptions().config);
  constexpr size_t kExtra = 64;
  std::vector<uint8_t> storage(sizeof(KilnHalDriver) + kExtra, 0xAB);
  auto* table = reinterpret_cast<KilnHalDriver*>(storage.data());
  table->struct_size = static_cast<uint32_t>(storage.size());
  KilnStatus status =
      Dut().query_fn()(KILN_HAL_VERSION_MAJOR, KILN_HAL_VERSION_MINOR + 1, services.get(), table);
  ASSERT_EQ(status, kKilnOk) << "a runtime of the same major and a newer minor must be accepted: "
                             << services.LastError();
  EXPECT_LE(table->struct_size, sizeof(KilnHalDriver) + kExtra);
  for (size_t i = std::max<size_t>(table->struct_size, sizeof(KilnHalDriver)); i < storage.size(); ++i) {
    ASSERT_EQ(storage[i], 0xAB) << "the driver wrote byte " << i << " past its own table";
  }
  ASSERT_NE(table->shutdown, nullptr);
  EXPECT_EQ(table->shutdown(table->instance), kKilnOk) << services.LastError();
}

// A runtime of another major is refused with kKilnUnsupported and a message.
TEST(Driver, OtherMajorRefused) {
  ASSERT_NE(Dut().query_fn(), nullptr) << Dut().problem();
  Services services(GetOptions().config);
  KilnHalDriver table{};
  table.struct_size = sizeof(table);
  KilnStatus status = Dut().query_fn()(KILN_HAL_VERSION_MAJOR + 1, 0, services.get(), &table);
  if (status == kKilnOk && table.shutdown) table.shutdown(table.instance);
  EXPECT_EQ(status, kKilnUnsupported)
      << "a runtime of HAL " << KILN_HAL_VERSION_MAJOR + 1 << ".0 must be refused with kKilnUnsupported";
  EXPECT_GT(services.ErrorCount(), 0u) << "the refusal reported no message";
}

TEST(Driver, NullTableRefused) {
  ASSERT_NE(Dut().query_fn(), nullptr) << Dut().problem();
  Services services(GetOptions().config);
  EXPECT_NE(Dut().query_fn()(KILN_HAL_VERSION_MAJOR, KILN_HAL_VERSION_MINOR, services.get(), nullptr),
            kKilnOk);
}

// Every service entry may be NULL: the driver falls back (malloc, its own clock, no messages) and works.
TEST(Driver, WorksWithNullServiceEntries) {
  ASSERT_NE(Dut().query_fn(), nullptr) << Dut().problem();
  KilnHalServices bare{};
  bare.struct_size = sizeof(bare);
  KilnHalDriver table{};
  table.struct_size = sizeof(table);
  ASSERT_EQ(Dut().query_fn()(KILN_HAL_VERSION_MAJOR, KILN_HAL_VERSION_MINOR, &bare, &table), kKilnOk);
  KilnHalDevice* device = nullptr;
  ASSERT_EQ(table.device_open(table.instance, 0, &device), kKilnOk);
  KilnHalBufferDesc desc{sizeof(KilnHalBufferDesc), 0, 100, nullptr};
  KilnHalBuffer* buffer = nullptr;
  ASSERT_EQ(table.buffer_create(device, &desc, &buffer), kKilnOk);
  const std::vector<uint8_t> data = PatternBytes(100, 1);
  std::vector<uint8_t> back(100);
  EXPECT_EQ(table.buffer_write(buffer, 0, data.data(), data.size()), kKilnOk);
  EXPECT_EQ(table.buffer_read(buffer, 0, back.size(), back.data()), kKilnOk);
  EXPECT_EQ(back, data);
  // A failing call with nowhere to report must still just fail.
  EXPECT_NE(table.buffer_read(buffer, 90, 20, back.data()), kKilnOk);
  EXPECT_EQ(table.buffer_destroy(buffer), kKilnOk);
  EXPECT_EQ(table.device_close(device), kKilnOk);
  EXPECT_EQ(table.shutdown(table.instance), kKilnOk);
}

// Destroying in the wrong order is refused with a message, and the right order then works.
TEST(Driver, ShutdownWithOpenDeviceRefused) {
  ASSERT_TRUE(Dut().usable()) << Dut().problem();
  Services services(GetOptions().config);
  KilnHalDriver table{};
  table.struct_size = sizeof(table);
  ASSERT_EQ(Dut().query_fn()(KILN_HAL_VERSION_MAJOR, KILN_HAL_VERSION_MINOR, services.get(), &table),
            kKilnOk);
  KilnHalDevice* device = nullptr;
  ASSERT_EQ(table.device_open(table.instance, 0, &device), kKilnOk);
  const size_t before = services.ErrorCount();
  EXPECT_NE(table.shutdown(table.instance), kKilnOk) << "shutdown with an open device must be refused";
  EXPECT_GT(services.ErrorCount(), before) << "the refusal reported no message";
  EXPECT_EQ(table.device_close(device), kKilnOk);
  EXPECT_EQ(table.shutdown(table.instance), kKilnOk);
}

// ---- Devices ----------------------------------------------------------------------------------------------

class Devices : public DeviceTest {};

TEST_P(Devices, InfoIsComplete) {
  KilnHalDeviceInfo info{};
  info.struct_size = sizeof(info);
  CTS_ASSERT_OK(dut(), Dut().hal().device_get_info(Dut().hal().instance, GetParam(), &info));
  EXPECT_LE(info.struct_size, sizeof(info));
  EXPECT_EQ(info.struct_size, sizeof(info)) << "device info filled only " << info.struct_size << " bytes";
  EXPECT_LE(info.type, static_cast<uint32_t>(kKilnHalDeviceOther)) << "unknown device type " << info.type;
  EXPECT_NE(memchr(info.name, 0, sizeof(info.name)), nullptr) << "name is not NUL-terminated";
  EXPECT_GT(strnlen(info.name, sizeof(info.name)), 0u) << "name is empty";
  EXPECT_NE(memchr(info.vendor, 0, sizeof(info.vendor)), nullptr) << "vendor is not NUL-terminated";
  EXPECT_NE(memchr(info.payload_tags, 0, sizeof(info.payload_tags)), nullptr);
  EXPECT_GT(strnlen(info.payload_tags, sizeof(info.payload_tags)), 0u) << "the device consumes no payload";
  EXPECT_EQ(KILN_HAL_LEVEL_MAJOR(info.max_kernel_level), static_cast<uint32_t>(KILN_KERNEL_HAL_LEVEL_MAJOR))
      << "max_kernel_level " << KILN_HAL_LEVEL_MAJOR(info.max_kernel_level) << "."
      << KILN_HAL_LEVEL_MINOR(info.max_kernel_level) << " has another major than the kernel ABI's";
  EXPECT_GT(info.memory_bytes, 0u);
  const KilnHalDeviceLimits& limits = info.limits;
  EXPECT_EQ(limits.struct_size, sizeof(limits));
  EXPECT_GE(limits.max_inputs, 1u);
  EXPECT_LE(limits.max_inputs, static_cast<uint32_t>(KILN_KERNEL_MAX_INPUTS));
  EXPECT_GE(limits.max_dim_x, 1u);
  EXPECT_GE(limits.max_dim_y, 1u);
  EXPECT_GE(limits.max_dim_z, 1u);
  EXPECT_GE(limits.max_threads, 1u);
  EXPECT_GT(limits.max_buffer_size, 0u);
  EXPECT_TRUE(limits.buffer_alignment > 0 && (limits.buffer_alignment & (limits.buffer_alignment - 1)) == 0)
      << "buffer_alignment " << limits.buffer_alignment << " is not a power of two";
  if (info.flags & KILN_HAL_DEVICE_MAPPABLE_BUFFERS) {
    EXPECT_NE(Dut().hal().buffer_map, nullptr) << "the device says mappable but buffer_map is NULL";
  }
}

// An older runtime passes a smaller info struct: the driver fills only that much.
TEST_P(Devices, SmallerInfoStructRespected) {
  std::vector<uint8_t> storage(sizeof(KilnHalDeviceInfo), 0xCD);
  auto* info = reinterpret_cast<KilnHalDeviceInfo*>(storage.data());
  const uint32_t small = offsetof(KilnHalDeviceInfo, limits);
  info->struct_size = small;
  CTS_ASSERT_OK(dut(), Dut().hal().device_get_info(Dut().hal().instance, GetParam(), info));
  EXPECT_LE(info->struct_size, small);
  for (size_t i = small; i < storage.size(); ++i) {
    ASSERT_EQ(storage[i], 0xCD) << "device_get_info wrote byte " << i << " past the caller's struct_size "
                                << small;
  }
}

TEST_P(Devices, OpenCloseAgain) {
  KilnHalDevice* second = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().device_open(Dut().hal().instance, GetParam(), &second));
  ASSERT_NE(second, nullptr);
  // A second handle on the same device works on its own.
  KilnHalBufferDesc desc{sizeof(KilnHalBufferDesc), 0, 16, nullptr};
  KilnHalBuffer* buffer = nullptr;
  EXPECT_EQ(Dut().hal().buffer_create(second, &desc, &buffer), kKilnOk) << Dut().services().LastError();
  if (buffer) {
    EXPECT_EQ(Dut().hal().buffer_destroy(buffer), kKilnOk);
  }
  EXPECT_EQ(Dut().hal().device_close(second), kKilnOk) << Dut().services().LastError();
}

TEST_P(Devices, IndexPastTheEndRefused) {
  KilnHalDeviceInfo info{};
  info.struct_size = sizeof(info);
  const uint32_t bad = Dut().device_count();
  CTS_EXPECT_FAILS(Dut(), Dut().hal().device_get_info(Dut().hal().instance, bad, &info));
  KilnHalDevice* device = nullptr;
  CTS_EXPECT_FAILS(Dut(), Dut().hal().device_open(Dut().hal().instance, bad, &device));
}

INSTANTIATE_TEST_SUITE_P(Device, Devices, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

}  // namespace
}  // namespace cts
}  // namespace kiln
