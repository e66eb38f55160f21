// Submitting a recorded batch to the queue and waiting for it: the only place where a batch's fault records
// are read back and its reduction results delivered, so a launch fails or returns exactly once.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "backends/vulkan/batch.h"

namespace kiln {
namespace vulkan {

namespace {

// After a submission ran: fails it, as the CPU driver fails such a launch, when a launch recorded a fault (an
// allocation access out of range or of another element size), naming the launch, the allocation and the
// access.
KilnStatus CheckFaults(Submission* submission) {
  for (const FaultCheck& check : submission->fault_checks) {
    KilnSpirvFault fault;
    memcpy(&fault, submission->faults->memory.mapped() + check.offset, sizeof(fault));
    if (fault.code == KILN_SPIRV_FAULT_NONE) continue;
    std::string text =
        check.what + ": element " + (fault.code == KILN_SPIRV_FAULT_WRITE ? "write" : "access") + " (" +
        std::to_string(fault.x) + ", " + std::to_string(fault.y) + ", " + std::to_string(fault.z) + ") of " +
        std::to_string(fault.element_size) + "-byte elements";
    if (fault.allocation < check.allocations.size()) {
      const auto& [name, info] = check.allocations[fault.allocation];
      if (info.dim_x == 0) {
        text += " of allocation '" + name + "', which is not bound";
      } else {
        text += " outside allocation '" + name + "' of " + std::to_string(info.dim_x) + "x" +
                std::to_string(info.dim_y) + "x" + std::to_string(info.dim_z) + " " +
                std::to_string(info.element_size) + "-byte elements";
      }
    } else {
      text += " outside allocation " + std::to_string(fault.allocation);
    }
    // The kernel's own access was wrong, not the device: kKilnInvalidArgument (kiln/hal.h, "Launches").
    return submission->device->instance->Fail(kKilnInvalidArgument, text);
  }
  return kKilnOk;
}

}  // namespace

KilnStatus Submit(Batch* batch, std::shared_ptr<Submission>* out) {
  Device* device = batch->device;
  Instance* instance = device->instance;
  if (batch->dirty) {
    if (KilnStatus status = RecordCommands(batch); status != kKilnOk) return status;
  }
  auto submission = std::make_shared<Submission>();
  submission->device = device;
  for (const Launch& launch : batch->launches) {
    if (launch.reduction)
      submission->copies.push_back({launch.scratch, launch.out_result, launch.result_size});
  }
  if (!batch->fault_checks.empty()) {
    memset(batch->faults->memory.mapped(), 0, batch->faults->capacity);  // host-coherent: seen by the device
    submission->faults = batch->faults;
    submission->fault_checks = batch->fault_checks;
  }
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkResult result = vkCreateFence(device->device, &fence_info, nullptr, &submission->fence);
  if (result != VK_SUCCESS)
    return instance->Fail(kKilnDelegateError, "vkCreateFence: " + VkResultName(result));
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &batch->cmd;
  {
    std::lock_guard<std::mutex> lock(device->queue_mutex);
    result = vkQueueSubmit(device->queue, 1, &submit, submission->fence);
  }
  if (result != VK_SUCCESS) {
    return instance->Fail(kKilnDelegateError, "vkQueueSubmit of a batch of " +
                                                  std::to_string(batch->launches.size()) +
                                                  " launch(es) failed: " + VkResultName(result));
  }
  batch->in_flight = submission;
  *out = std::move(submission);
  return kKilnOk;
}

// Waits up to `timeout_ns`; returns whether the submission is done, with its status.
bool WaitSubmission(Submission* submission, uint64_t timeout_ns, KilnStatus* out_status) {
  std::lock_guard<std::mutex> lock(submission->mutex);
  if (!submission->done) {
    VkResult result = vkWaitForFences(submission->device->device, 1, &submission->fence, VK_TRUE, timeout_ns);
    if (result == VK_TIMEOUT) return false;
    submission->done = true;
    if (result != VK_SUCCESS) {
      submission->status = submission->device->instance->Fail(
          kKilnDelegateError, "waiting for a Vulkan batch failed: " + VkResultName(result));
    } else if (KilnStatus fault = CheckFaults(submission); fault != kKilnOk) {
      submission->status = fault;
    } else {
      // The final barrier of the command buffer made the result words visible to the host.
      for (const ResultCopy& copy : submission->copies) {
        memcpy(copy.out, copy.scratch->result_memory.mapped(), copy.size);
      }
    }
    submission->copies.clear();  // on failure the callers' results stay untouched
  }
  *out_status = submission->status;
  return true;
}

}  // namespace vulkan
}  // namespace kiln
