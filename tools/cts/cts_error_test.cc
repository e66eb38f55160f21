// Area "Errors": bad arguments, wrong sizes, NULL where something is required, and destruction in the wrong
// order. Each must come back as a status with a message (report_error), never a crash, and leave the driver
// working.
#include <cstring>

#include "tools/cts/cts.h"

namespace kiln {
namespace cts {
namespace {

class Errors : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(LoadModule("cts_types", &ref_module_, &dut_module_));
    kernel_ = ModuleFile::Open("cts_types", nullptr)->KernelIndex("mad_float");
  }
  KilnHalModule* ref_module_ = nullptr;
  KilnHalModule* dut_module_ = nullptr;
  int kernel_ = -1;
};

// Every way a forEach description can be wrong, one at a time; then the good one still runs.
TEST_P(Errors, BadLaunchDescriptions) {
  Script script(dut(), dut_module_);
  Buffer a(dut(), 400), b(dut(), 400), out(dut(), 400), small(dut(), 40);
  ASSERT_TRUE(script.ok() && a.ok() && b.ok() && out.ok() && small.ok());
  const uint32_t dims[3] = {100, 1, 1};
  const KilnHalBufferView good_in[2] = {DenseView(a, 4, 100, 1), DenseView(b, 4, 100, 1)};
  const KilnHalBufferView good_out = DenseView(out, 4, 100, 1);
  const KilnHalDriver& hal = Dut().hal();
  auto launch = [&](const KilnHalForEachDesc& desc) { return hal.launch_for_each(script.get(), &desc); };

  KilnHalForEachDesc desc = ForEach(kernel_, dims, good_in, 2, &good_out);
  desc.kernel_index = 10000;
  CTS_EXPECT_FAILS(Dut(), launch(desc));
  desc = ForEach(kernel_, dims, good_in, 1, &good_out);  // one input short
  CTS_EXPECT_FAILS(Dut(), launch(desc));
  desc = ForEach(kernel_, dims, good_in, 2, nullptr);  // the kernel returns a value
  CTS_EXPECT_FAILS(Dut(), launch(desc));
  const uint32_t zero[3] = {100, 0, 1};
  desc = ForEach(kernel_, zero, good_in, 2, &good_out);
  CTS_EXPECT_FAILS(Dut(), launch(desc));
  KilnHalBufferView wrong_size[2] = {good_in[0], good_in[1]};
  wrong_size[1].element_size = 8;
  wrong_size[1].stride_x = 8;
  desc = ForEach(kernel_, dims, wrong_size, 2, &good_out);
  CTS_EXPECT_FAILS(Dut(), launch(desc));
  KilnHalBufferView too_short[2] = {good_in[0], DenseView(small, 4, 100, 1)};
  desc = ForEach(kernel_, dims, too_short, 2, &good_out);
  CTS_EXPECT_FAILS(Dut(), launch(desc));
  KilnHalBufferView past_end = good_out;
  past_end.offset = 4;
  desc = ForEach(kernel_, dims, good_in, 2, &past_end);
  CTS_EXPECT_FAILS(Dut(), launch(desc));
  KilnHalBufferView overlapping = good_out;
  overlapping.stride_x = 2;
  desc = ForEach(kernel_, dims, good_in, 2, &overlapping);
  CTS_EXPECT_FAILS(Dut(), launch(desc));
  KilnHalBufferView null_buffer[2] = {good_in[0], good_in[1]};
  null_buffer[0].buffer = nullptr;
  desc = ForEach(kernel_, dims, null_buffer, 2, &good_out);
  CTS_EXPECT_FAILS(Dut(), launch(desc));
  desc = ForEach(kernel_, dims, good_in, 2, &good_out);
  desc.struct_size = 8;  // too small to hold HAL 1.0's fields
  CTS_EXPECT_FAILS(Dut(), launch(desc));
  CTS_EXPECT_FAILS(Dut(), hal.launch_for_each(script.get(), nullptr));

  // After all that, the driver still works.
  desc = ForEach(kernel_, dims, good_in, 2, &good_out);
  CTS_ASSERT_OK(dut(), launch(desc));
}

TEST_P(Errors, NullOutParameters) {
  const KilnHalDriver& hal = Dut().hal();
  KilnHalBufferDesc desc{sizeof(KilnHalBufferDesc), 0, 16, nullptr};
  CTS_EXPECT_FAILS(Dut(), hal.buffer_create(dut().device(), &desc, nullptr));
  CTS_EXPECT_FAILS(Dut(), hal.buffer_create(dut().device(), nullptr, nullptr));
  CTS_EXPECT_FAILS(Dut(), hal.script_create(dut_module_, nullptr, nullptr));
  CTS_EXPECT_FAILS(Dut(), hal.module_load(dut().device(), nullptr, nullptr));
  KilnHalModule* module = nullptr;
  CTS_EXPECT_FAILS(Dut(), hal.module_load(dut().device(), nullptr, &module));
  if (hal.module_kernel_supported) {
    bool supported;
    EXPECT_NE(hal.module_kernel_supported(dut_module_, 0, nullptr, nullptr), kKilnOk);
    EXPECT_NE(hal.module_kernel_supported(dut_module_, 100000, &supported, nullptr), kKilnOk);
  }
  if (hal.batch_create) {
    CTS_EXPECT_FAILS(Dut(), hal.batch_create(dut().device(), nullptr));
    KilnHalBatch* batch = nullptr;
    CTS_ASSERT_OK(dut(), hal.batch_create(dut().device(), &batch));
    CTS_EXPECT_FAILS(Dut(), hal.batch_submit(batch, nullptr));
    EXPECT_EQ(hal.batch_destroy(batch), kKilnOk);
  }
}

// NULL handles: there is no instance to report through, so a status is all that is asked.
TEST_P(Errors, NullHandles) {
  const KilnHalDriver& hal = Dut().hal();
  uint8_t byte = 0;
  EXPECT_NE(hal.buffer_destroy(nullptr), kKilnOk);
  EXPECT_NE(hal.buffer_write(nullptr, 0, &byte, 1), kKilnOk);
  EXPECT_NE(hal.buffer_read(nullptr, 0, 1, &byte), kKilnOk);
  EXPECT_NE(hal.module_unload(nullptr), kKilnOk);
  EXPECT_NE(hal.script_destroy(nullptr), kKilnOk);
  EXPECT_NE(hal.script_set_global(nullptr, "gScale", &byte, 1), kKilnOk);
  EXPECT_NE(hal.launch_for_each(nullptr, nullptr), kKilnOk);
  EXPECT_NE(hal.device_close(nullptr), kKilnOk);
  KilnHalBuffer* buffer = nullptr;
  KilnHalBufferDesc desc{sizeof(KilnHalBufferDesc), 0, 16, nullptr};
  EXPECT_NE(hal.buffer_create(nullptr, &desc, &buffer), kKilnOk);
  if (hal.fence_wait) {
    bool done;
    EXPECT_NE(hal.fence_wait(nullptr, 0, &done), kKilnOk);
    EXPECT_NE(hal.fence_destroy(nullptr), kKilnOk);
    EXPECT_NE(hal.batch_destroy(nullptr), kKilnOk);
  }
}

// Closing a device that still owns a buffer or a module is refused with a message; in order, it works.
TEST_P(Errors, DestroyOrder) {
  const KilnHalDriver& hal = Dut().hal();
  KilnHalDevice* device = nullptr;
  CTS_ASSERT_OK(dut(), hal.device_open(hal.instance, GetParam(), &device));
  KilnHalBufferDesc desc{sizeof(KilnHalBufferDesc), 0, 64, nullptr};
  KilnHalBuffer* buffer = nullptr;
  CTS_ASSERT_OK(dut(), hal.buffer_create(device, &desc, &buffer));
  CTS_EXPECT_FAILS(Dut(), hal.device_close(device));
  // The buffer survived the refused close.
  const uint32_t value = 0xC0FFEE;
  uint32_t back = 0;
  EXPECT_EQ(hal.buffer_write(buffer, 4, &value, 4), kKilnOk);
  EXPECT_EQ(hal.buffer_read(buffer, 4, 4, &back), kKilnOk);
  EXPECT_EQ(back, value);
  EXPECT_EQ(hal.buffer_destroy(buffer), kKilnOk);

  KilnHalModule* module = nullptr;
  CTS_ASSERT_OK(dut(), hal.module_load(device, ModuleFile::Open("cts_shapes", nullptr)->desc(), &module));
  CTS_EXPECT_FAILS(Dut(), hal.device_close(device));
  EXPECT_EQ(hal.module_unload(module), kKilnOk);
  EXPECT_EQ(hal.device_close(device), kKilnOk) << Dut().services().LastError();
}

TEST_P(Errors, BadBufferDescriptions) {
  const KilnHalDriver& hal = Dut().hal();
  KilnHalBuffer* buffer = nullptr;
  KilnHalBufferDesc small{};
  small.struct_size = 4;  // too small to hold a size
  small.size = 16;
  CTS_EXPECT_FAILS(Dut(), hal.buffer_create(dut().device(), &small, &buffer));
  const KilnHalDeviceInfo info = DutInfo();
  if ((info.flags & KILN_HAL_DEVICE_HOST_SHARED_MEMORY) && info.limits.buffer_alignment > 1) {
    alignas(4096) static uint8_t host[8192];
    KilnHalBufferDesc wrap{sizeof(KilnHalBufferDesc), KILN_HAL_BUFFER_HOST_WRAP, 100, host + 1};
    const size_t before = Dut().services().ErrorCount();
    KilnStatus status = hal.buffer_create(dut().device(), &wrap, &buffer);
    // Memory misaligned for the device may be refused (with a message) or accepted; either is conformant.
    if (status == kKilnOk) {
      EXPECT_EQ(hal.buffer_destroy(buffer), kKilnOk);
    } else {
      EXPECT_TRUE(FailsWithMessage(Dut(), status, before, "buffer_create wrapping misaligned host memory"));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Device, Errors, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

}  // namespace
}  // namespace cts
}  // namespace kiln
