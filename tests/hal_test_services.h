// The runtime side of the HAL for tests and benchmarks of one driver instance: a KilnHalServices that records
// what the driver reports (logs, errors, messages to the client) and answers get_config from a map, plus the
// driver table and device opened through it. Each driver's harness derives from this and only says how its
// driver's query function is found (linked in directly, or loaded with dlopen).
#ifndef KILN_TESTS_HAL_TEST_SERVICES_H_
#define KILN_TESTS_HAL_TEST_SERVICES_H_

#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kiln/hal.h"

namespace kiln {
namespace testing {

struct RecordedMessage {
  int32_t command;
  std::vector<uint8_t> data;
};

class HalTestHarness {
 public:
  HalTestHarness(const HalTestHarness&) = delete;
  HalTestHarness& operator=(const HalTestHarness&) = delete;

  bool ok() const { return query_status_ == kKilnOk && open_status_ == kKilnOk && device_; }
  KilnStatus query_status() const { return query_status_; }
  const KilnHalDriver& hal() const { return driver_; }
  KilnHalDevice* device() const { return device_; }

  std::string LastError() {
    std::lock_guard<std::mutex> lock(mutex_);
    return errors_.empty() ? "" : errors_.back();
  }
  std::vector<std::string> Errors() {
    std::lock_guard<std::mutex> lock(mutex_);
    return errors_;
  }
  std::vector<std::string> Logs() {
    std::lock_guard<std::mutex> lock(mutex_);
    return logs_;
  }
  bool LogContains(const std::string& text) {
    for (const std::string& line : Logs()) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::vector<RecordedMessage> Messages() {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_;
  }

  // A buffer of `bytes` bytes, or one wrapping `host` when it is not NULL.
  KilnHalBuffer* CreateBuffer(uint64_t bytes, void* host = nullptr) {
    KilnHalBufferDesc desc{};
    desc.struct_size = sizeof(desc);
    desc.size = bytes;
    desc.flags = host ? KILN_HAL_BUFFER_HOST_WRAP : 0;
    desc.host_ptr = host;
    KilnHalBuffer* buffer = nullptr;
    if (driver_.buffer_create(device_, &desc, &buffer) != kKilnOk) return nullptr;
    return buffer;
  }

 protected:
  // `config` answers get_config; "cache_dir" should point at a private folder (or "off").
  explicit HalTestHarness(std::map<std::string, std::string> config) : config_(std::move(config)) {
    memset(&services_, 0, sizeof(services_));
    services_.struct_size = sizeof(services_);
    services_.user_data = this;
    services_.log = [](void* self, KilnHalLogLevel level, const char* message) {
      auto* h = static_cast<HalTestHarness*>(self);
      std::lock_guard<std::mutex> lock(h->mutex_);
      h->logs_.push_back(std::to_string(level) + ": " + message);
    };
    services_.report_error = [](void* self, KilnStatus, const char* message) {
      static_cast<HalTestHarness*>(self)->RecordError(message);
    };
    services_.now_ns = [](void*) -> uint64_t {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
    services_.get_config = [](void* self, const char* key) -> const char* {
      auto* h = static_cast<HalTestHarness*>(self);
      auto it = h->config_.find(key);
      return it == h->config_.end() ? nullptr : it->second.c_str();
    };
    services_.send_to_client = [](void* self, void* script_user_data, int32_t command, const void* data,
                                  size_t size) {
      auto* h = static_cast<HalTestHarness*>(self);
      std::lock_guard<std::mutex> lock(h->mutex_);
      const uint8_t* bytes = static_cast<const uint8_t*>(data);
      h->messages_.push_back({command, std::vector<uint8_t>(bytes, bytes + size)});
    };
    memset(&driver_, 0, sizeof(driver_));
    driver_.struct_size = sizeof(driver_);
  }
  // Not virtual: harnesses are never deleted through this base.
  ~HalTestHarness() { Close(); }

  // Queries the driver through `query`, as the runtime does, and opens device 0.
  void Open(KilnDriverQueryFn query) {
    query_status_ = query(KILN_HAL_VERSION_MAJOR, KILN_HAL_VERSION_MINOR, &services_, &driver_);
    if (query_status_ == kKilnOk) open_status_ = driver_.device_open(driver_.instance, 0, &device_);
  }
  // Closes the device and shuts the driver down; a harness that unloads its driver's code calls this first.
  void Close() {
    if (device_) driver_.device_close(device_);
    device_ = nullptr;
    if (query_status_ == kKilnOk) driver_.shutdown(driver_.instance);
    query_status_ = kKilnError;
  }
  void RecordError(std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    errors_.push_back(std::move(message));
  }

 private:
  std::map<std::string, std::string> config_;
  KilnHalServices services_;
  KilnHalDriver driver_;
  KilnHalDevice* device_ = nullptr;
  KilnStatus query_status_ = kKilnError;
  KilnStatus open_status_ = kKilnError;
  std::mutex mutex_;
  std::vector<std::string> logs_;
  std::vector<std::string> errors_;
  std::vector<RecordedMessage> messages_;
};

}  // namespace testing
}  // namespace kiln

#endif  // KILN_TESTS_HAL_TEST_SERVICES_H_
