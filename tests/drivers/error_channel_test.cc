// A driver's error messages belong to the call that failed (#14): the runtime keeps each thread's messages
// apart, so threads whose calls on one driver instance fail at the same time each get their own message,
// never another's. The driver is a real loaded one (libkiln_test_good.so: the CPU driver behind the HAL's
// dlopen path, whose messages are held for the runtime rather than printed at once).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kiln/hal.h"
#include "runtime/device/decision_log.h"
#include "runtime/device/hal_driver.h"

namespace kiln {
namespace {

TEST(ErrorChannel, ConcurrentFailuresEachGetTheirOwnMessage) {
  DriverOptions options;
  DecisionLog log;
  std::string refusal;
  std::shared_ptr<HalDriver> driver =
      HalDriver::Load(std::string(KILN_TEST_DRIVER_DIR) + "/libkiln_test_good.so", options, &log, &refusal);
  ASSERT_NE(driver, nullptr) << refusal;
  const KilnHalDriver& hal = driver->table();
  KilnHalDevice* device = nullptr;
  ASSERT_EQ(hal.device_open(hal.instance, 0, &device), kKilnOk) << driver->TakeErrors();

  constexpr int kThreads = 8;
  constexpr int kCalls = 300;
  std::atomic<int> wrong{0};
  std::vector<std::string> first_wrong(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        // A size no device has, different in every call: the driver's message names it.
        const uint64_t size =
            (uint64_t{1} << 50) + static_cast<uint64_t>(t) * 1000000u + static_cast<uint64_t>(i);
        KilnHalBufferDesc desc{};
        desc.struct_size = sizeof desc;
        desc.size = size;
        KilnHalBuffer* buffer = nullptr;
        const KilnStatus status = hal.buffer_create(device, &desc, &buffer);
        const std::string message = driver->TakeErrors();
        const std::string expected = "buffer_create: " + std::to_string(size) +
                                     " bytes is more than the device's max_buffer_size (out of memory)";
        if (status == kKilnOk || message != expected) {
          if (wrong.fetch_add(1) == 0)
            first_wrong[static_cast<size_t>(t)] = "got \"" + message + "\", expected \"" + expected + "\"";
          if (status == kKilnOk) hal.buffer_destroy(buffer);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::string detail;
  for (const std::string& s : first_wrong) detail += s;
  EXPECT_EQ(wrong.load(), 0) << detail;
  // Nothing is left over for a later call on this thread, or delivered twice.
  EXPECT_EQ(driver->TakeErrors(), "");
  EXPECT_EQ(hal.device_close(device), kKilnOk);
}

// A message the runtime adds (a batch given up) goes with the thread's next failure report, not another's.
TEST(ErrorChannel, NotesStayWithTheirThread) {
  DriverOptions options;
  DecisionLog log;
  std::string refusal;
  std::shared_ptr<HalDriver> driver =
      HalDriver::Load(std::string(KILN_TEST_DRIVER_DIR) + "/libkiln_test_good.so", options, &log, &refusal);
  ASSERT_NE(driver, nullptr) << refusal;
  driver->NoteError("note of the main thread");
  std::string other;
  std::thread([&] { other = driver->TakeErrors(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_EQ(driver->TakeErrors(), "note of the main thread");
}

}  // namespace
}  // namespace kiln
