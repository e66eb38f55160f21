// Batches and fences: launches recorded into a batch (checked as they are recorded, launch.cc) run in
// submission order on one submission thread per device, so that batch_submit returns at once and fence_wait
// waits for the work.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "backends/cpu/driver_internal.h"
#include "kiln/hal.h"

namespace kiln {
namespace cpu {

// Shared by the fence handle, the batch (to know whether it is still running) and the submission queue, so
// that each can go away first.
struct FenceState {
  std::mutex mutex;
  std::condition_variable done_changed;
  bool done = false;
  KilnStatus status = kKilnOk;
};

struct Fence {
  Device* device;
  std::shared_ptr<FenceState> state;
};

struct Batch {
  Device* device;
  std::vector<std::unique_ptr<PreparedLaunch>> launches;
  std::shared_ptr<FenceState> in_flight;
};

namespace {

void SubmitterLoop(Device* device) {
  std::unique_lock<std::mutex> lock(device->queue_mutex);
  for (;;) {
    device->queue_wake.wait(lock, [&] { return device->stopping || !device->queue.empty(); });
    if (device->queue.empty()) return;  // stopping, and everything submitted has run
    auto [batch, fence] = std::move(device->queue.front());
    device->queue.pop_front();
    lock.unlock();
    KilnStatus status = kKilnOk;
    for (auto& launch : batch->launches) {
      status = RunPrepared(*launch);
      if (status != kKilnOk) break;
    }
    {
      std::lock_guard<std::mutex> fence_lock(fence->mutex);
      fence->status = status;
      fence->done = true;
      fence->done_changed.notify_all();
    }
    lock.lock();
  }
}

}  // namespace

KilnStatus BatchCreate(KilnHalDevice* handle, KilnHalBatch** out_batch) {
  Device* device = AsDevice(handle);
  KILN_CPU_REQUIRE(device);
  if (!out_batch) return device->instance->Fail(kKilnInvalidArgument, "batch_create: out_batch is NULL");
  Batch* batch = new Batch;
  batch->device = device;
  ++device->live_objects;
  *out_batch = reinterpret_cast<KilnHalBatch*>(batch);
  return kKilnOk;
}

namespace {

bool BatchBusy(Batch* batch) {
  if (!batch->in_flight) return false;
  std::lock_guard<std::mutex> lock(batch->in_flight->mutex);
  return !batch->in_flight->done;
}

}  // namespace

KilnStatus BatchDestroy(KilnHalBatch* handle) {
  Batch* batch = reinterpret_cast<Batch*>(handle);
  KILN_CPU_REQUIRE(batch);
  if (BatchBusy(batch)) {
    return batch->device->instance->Fail(kKilnInvalidArgument, "batch_destroy: the batch has not completed");
  }
  --batch->device->live_objects;
  delete batch;
  return kKilnOk;
}

KilnStatus BatchRecordForEach(KilnHalBatch* handle, KilnHalScript* script, const KilnHalForEachDesc* desc) {
  Batch* batch = reinterpret_cast<Batch*>(handle);
  KILN_CPU_REQUIRE(batch && script);
  if (BatchBusy(batch))
    return batch->device->instance->Fail(kKilnInvalidArgument, "batch_record: batch is running");
  auto prepared = std::make_unique<PreparedLaunch>();
  if (KilnStatus status = PrepareForEach(AsScript(script), desc, prepared.get()); status != kKilnOk)
    return status;
  batch->launches.push_back(std::move(prepared));
  return kKilnOk;
}

KilnStatus BatchRecordReduce(KilnHalBatch* handle, KilnHalScript* script, const KilnHalReduceDesc* desc,
                             uint64_t result_size, void* out_result) {
  Batch* batch = reinterpret_cast<Batch*>(handle);
  KILN_CPU_REQUIRE(batch && script);
  if (BatchBusy(batch))
    return batch->device->instance->Fail(kKilnInvalidArgument, "batch_record: batch is running");
  auto prepared = std::make_unique<PreparedLaunch>();
  if (KilnStatus status = PrepareReduce(AsScript(script), desc, result_size, out_result, prepared.get());
      status != kKilnOk) {
    return status;
  }
  batch->launches.push_back(std::move(prepared));
  return kKilnOk;
}

KilnStatus BatchSubmit(KilnHalBatch* handle, KilnHalFence** out_fence) {
  Batch* batch = reinterpret_cast<Batch*>(handle);
  KILN_CPU_REQUIRE(batch);
  Device* device = batch->device;
  if (!out_fence) return device->instance->Fail(kKilnInvalidArgument, "batch_submit: out_fence is NULL");
  if (BatchBusy(batch))
    return device->instance->Fail(kKilnInvalidArgument, "batch_submit: batch is still running");
  Fence* fence = new Fence{device, std::make_shared<FenceState>()};
  batch->in_flight = fence->state;
  {
    std::lock_guard<std::mutex> lock(device->queue_mutex);
    if (!device->submitter.joinable()) device->submitter = std::thread(SubmitterLoop, device);
    device->queue.emplace_back(batch, fence->state);
  }
  device->queue_wake.notify_one();
  ++device->live_objects;
  *out_fence = reinterpret_cast<KilnHalFence*>(fence);
  return kKilnOk;
}

KilnStatus FenceWait(KilnHalFence* handle, uint64_t timeout_ns, bool* out_done) {
  KILN_CPU_REQUIRE(handle && out_done);
  FenceState* fence = reinterpret_cast<Fence*>(handle)->state.get();
  std::unique_lock<std::mutex> lock(fence->mutex);
  if (timeout_ns == UINT64_MAX) {
    fence->done_changed.wait(lock, [&] { return fence->done; });
  } else if (timeout_ns > 0) {
    fence->done_changed.wait_for(lock,
                                 std::chrono::nanoseconds(std::min<uint64_t>(timeout_ns, INT64_MAX / 2)),
                                 [&] { return fence->done; });
  }
  *out_done = fence->done;
  // The failing launch already reported its message when it ran.
  return fence->done ? fence->status : kKilnOk;
}

KilnStatus FenceDestroy(KilnHalFence* handle) {
  Fence* fence = reinterpret_cast<Fence*>(handle);
  KILN_CPU_REQUIRE(fence);
  {
    std::unique_lock<std::mutex> lock(fence->state->mutex);
    fence->state->done_changed.wait(lock, [&] { return fence->state->done; });
  }
  --fence->device->live_objects;
  delete fence;
  return kKilnOk;
}

}  // namespace cpu
}  // namespace kiln
