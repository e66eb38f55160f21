// The HAL's launch, batch and fence entries: a single launch runs as a batch of its own from a per-device
// pool, so launches and batches share one path to the GPU.
#include "backends/vulkan/batch.h"

#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace kiln {
namespace vulkan {

namespace {

struct Fence {
  Device* device;
  std::shared_ptr<Submission> submission;
};

bool BatchBusy(Batch* batch) {
  if (!batch->in_flight) return false;
  std::lock_guard<std::mutex> lock(batch->in_flight->mutex);
  if (batch->in_flight->done) return false;
  return vkGetFenceStatus(batch->device->device, batch->in_flight->fence) != VK_SUCCESS;
}

// Runs one recorded launch as a batch of its own, from the device's pool of reusable batches, and waits.
KilnStatus RunAlone(Device* device, Launch launch) {
  Batch* batch = nullptr;
  {
    std::lock_guard<std::mutex> lock(device->idle_mutex);
    if (!device->idle_batches.empty()) {
      batch = device->idle_batches.back();
      device->idle_batches.pop_back();
    }
  }
  if (!batch) {
    batch = new Batch;
    batch->device = device;
  }
  batch->launches.clear();
  batch->launches.push_back(std::move(launch));
  batch->dirty = true;
  std::shared_ptr<Submission> submission;
  KilnStatus status = Submit(batch, &submission);
  if (status == kKilnOk) WaitSubmission(submission.get(), UINT64_MAX, &status);
  batch->in_flight.reset();
  batch->launches.clear();
  std::lock_guard<std::mutex> lock(device->idle_mutex);
  device->idle_batches.push_back(batch);
  return status;
}

// Whether `script`'s launches can be recorded into `batch` now: not while it runs, and only from its device.
KilnStatus CheckRecordable(Batch* batch, Script* script, const char* what) {
  if (BatchBusy(batch)) {
    return batch->device->instance->Fail(kKilnInvalidArgument, std::string(what) + ": batch is running");
  }
  if (script->module->device != batch->device) {
    return batch->device->instance->Fail(kKilnInvalidArgument,
                                         std::string(what) + ": the script belongs to another device");
  }
  return kKilnOk;
}

}  // namespace

void DestroyBatchObjects(Batch* batch) {
  Device* device = batch->device;
  if (batch->descriptor_pool) vkDestroyDescriptorPool(device->device, batch->descriptor_pool, nullptr);
  if (batch->pool) vkDestroyCommandPool(device->device, batch->pool, nullptr);
  DestroyRawBuffer(device, &batch->upload, &batch->upload_memory);
  batch->descriptor_pool = VK_NULL_HANDLE;
  batch->pool = VK_NULL_HANDLE;
}

KilnStatus LaunchForEach(KilnHalScript* handle, const KilnHalForEachDesc* desc) {
  Script* script = AsScript(handle);
  KILN_VK_REQUIRE(script);
  Launch launch;
  if (KilnStatus status = PrepareForEach(script, desc, &launch); status != kKilnOk) return status;
  return RunAlone(script->module->device, std::move(launch));
}

KilnStatus LaunchReduce(KilnHalScript* handle, const KilnHalReduceDesc* desc, uint64_t result_size,
                        void* out_result) {
  Script* script = AsScript(handle);
  KILN_VK_REQUIRE(script);
  Launch launch;
  if (KilnStatus status = PrepareReduce(script, desc, result_size, out_result, &launch); status != kKilnOk) {
    return status;
  }
  return RunAlone(script->module->device, std::move(launch));
}

KilnStatus BatchCreate(KilnHalDevice* handle, KilnHalBatch** out_batch) {
  Device* device = AsDevice(handle);
  KILN_VK_REQUIRE(device);
  if (!out_batch) return device->instance->Fail(kKilnInvalidArgument, "batch_create: out_batch is NULL");
  Batch* batch = new Batch;
  batch->device = device;
  ++device->live_objects;
  *out_batch = reinterpret_cast<KilnHalBatch*>(batch);
  return kKilnOk;
}

KilnStatus BatchDestroy(KilnHalBatch* handle) {
  Batch* batch = AsBatch(handle);
  KILN_VK_REQUIRE(batch);
  if (BatchBusy(batch)) {
    return batch->device->instance->Fail(kKilnInvalidArgument, "batch_destroy: the batch has not completed");
  }
  batch->in_flight.reset();
  DestroyBatchObjects(batch);
  --batch->device->live_objects;
  delete batch;
  return kKilnOk;
}

KilnStatus BatchRecordForEach(KilnHalBatch* handle, KilnHalScript* script, const KilnHalForEachDesc* desc) {
  Batch* batch = AsBatch(handle);
  KILN_VK_REQUIRE(batch && script);
  if (KilnStatus status = CheckRecordable(batch, AsScript(script), "batch_record"); status != kKilnOk)
    return status;
  Launch launch;
  if (KilnStatus status = PrepareForEach(AsScript(script), desc, &launch); status != kKilnOk) return status;
  batch->launches.push_back(std::move(launch));
  batch->dirty = true;
  return kKilnOk;
}

KilnStatus BatchRecordReduce(KilnHalBatch* handle, KilnHalScript* script, const KilnHalReduceDesc* desc,
                             uint64_t result_size, void* out_result) {
  Batch* batch = AsBatch(handle);
  KILN_VK_REQUIRE(batch && script);
  if (KilnStatus status = CheckRecordable(batch, AsScript(script), "batch_record_reduce");
      status != kKilnOk) {
    return status;
  }
  Launch launch;
  if (KilnStatus status = PrepareReduce(AsScript(script), desc, result_size, out_result, &launch);
      status != kKilnOk) {
    return status;
  }
  batch->launches.push_back(std::move(launch));
  batch->dirty = true;
  return kKilnOk;
}

KilnStatus BatchSubmit(KilnHalBatch* handle, KilnHalFence** out_fence) {
  Batch* batch = AsBatch(handle);
  KILN_VK_REQUIRE(batch);
  Device* device = batch->device;
  if (!out_fence) return device->instance->Fail(kKilnInvalidArgument, "batch_submit: out_fence is NULL");
  if (BatchBusy(batch))
    return device->instance->Fail(kKilnInvalidArgument, "batch_submit: batch is still running");
  if (batch->in_flight) {
    // The last submission has completed, but nobody may have waited on its fence yet: deliver its reduction
    // results now, before this submission reuses the scratch buffers they are read from.
    KilnStatus previous;
    WaitSubmission(batch->in_flight.get(), 0, &previous);
  }
  std::shared_ptr<Submission> submission;
  if (KilnStatus status = Submit(batch, &submission); status != kKilnOk) return status;
  ++device->live_objects;
  *out_fence = reinterpret_cast<KilnHalFence*>(new Fence{device, std::move(submission)});
  return kKilnOk;
}

KilnStatus FenceWait(KilnHalFence* handle, uint64_t timeout_ns, bool* out_done) {
  KILN_VK_REQUIRE(handle && out_done);
  Fence* fence = reinterpret_cast<Fence*>(handle);
  KilnStatus status = kKilnOk;
  *out_done = WaitSubmission(fence->submission.get(), timeout_ns, &status);
  return *out_done ? status : kKilnOk;
}

KilnStatus FenceDestroy(KilnHalFence* handle) {
  Fence* fence = reinterpret_cast<Fence*>(handle);
  KILN_VK_REQUIRE(fence);
  KilnStatus status;
  WaitSubmission(fence->submission.get(), UINT64_MAX, &status);
  --fence->device->live_objects;
  delete fence;
  return kKilnOk;
}

}  // namespace vulkan
}  // namespace kiln
