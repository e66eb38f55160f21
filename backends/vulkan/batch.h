// The Vulkan driver's recorded work: launches resolved when they are recorded, the batches that hold them and
// the submissions that run them, shared by the files that prepare, record, submit and wait for that work.
#ifndef KILN_BACKENDS_VULKAN_BATCH_H_
#define KILN_BACKENDS_VULKAN_BATCH_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/vulkan/module.h"

namespace kiln {
namespace vulkan {

// A recorded reduction's scratch buffers: the partial accumulators (device memory) and the result words
// (host-visible, read when the submission completes). Shared by the recorded launch and by every submission
// that still has to copy the result out, so that destroying the batch first loses nothing.
struct ReduceScratch {
  Device* device = nullptr;
  VkBuffer partials = VK_NULL_HANDLE;
  Allocation partials_memory;
  VkBuffer result = VK_NULL_HANDLE;
  Allocation result_memory;
  ~ReduceScratch();
};

// One recorded launch, with everything resolved at record time.
struct Launch {
  Module* module = nullptr;
  bool reduction = false;
  uint32_t index = 0;  // into module->kernels, or module->reductions
  uint32_t shape = 0;
  uint32_t dims[3] = {};
  uint32_t groups = 0;  // reductions: G, the workgroups of pass 0 and the number of partials
  std::vector<uint8_t> push;
  std::vector<VkBuffer> buffers;           // parallel to the program's bindings; VK_NULL_HANDLE for binding 0
  std::vector<uint8_t> globals;            // the global block as it was when recorded
  std::vector<uint8_t> usr;                // programs that read usrData: its size word, then its bytes
  std::shared_ptr<ReduceScratch> scratch;  // reductions
  void* out_result = nullptr;              // reductions: where result_size bytes go when the work completes
  uint64_t result_size = 0;
  const ShaderProgram& program() const {
    return reduction ? static_cast<const ShaderProgram&>(module->reductions[index])
                     : static_cast<const ShaderProgram&>(module->kernels[index]);
  }
};

// The fault records of a batch (kiln/spirv_abi.h, "Faults"): host-visible memory with one KilnSpirvFault per
// launch that can fault, zeroed at each submission. Shared by the batch and its submissions, like the
// scratch.
struct FaultRecords {
  Device* device = nullptr;
  VkBuffer buffer = VK_NULL_HANDLE;
  Allocation memory;
  VkDeviceSize capacity = 0;
  ~FaultRecords();
};

// What a submission checks when it completes: one launch's fault record, and what a message about it names.
struct FaultCheck {
  VkDeviceSize offset = 0;
  std::string what;  // "script M, kernel K"
  std::vector<std::pair<std::string, KilnSpirvAllocationInfo>>
      allocations;  // by allocation index, as recorded
};

// A reduction result to copy to the caller once its submission has completed successfully.
struct ResultCopy {
  std::shared_ptr<ReduceScratch> scratch;
  void* out = nullptr;
  uint64_t size = 0;
};

// One submission of a batch: shared by the batch (to know it is running) and the fence handle.
struct Submission {
  Device* device = nullptr;
  VkFence fence = VK_NULL_HANDLE;
  std::mutex mutex;
  bool done = false;
  KilnStatus status = kKilnOk;
  std::vector<ResultCopy> copies;  // run once, by the first wait that sees the submission done
  std::shared_ptr<FaultRecords> faults;
  std::vector<FaultCheck> fault_checks;
  ~Submission() {
    if (fence) vkDestroyFence(device->device, fence, nullptr);
  }
};

struct Batch {
  Device* device = nullptr;
  std::vector<Launch> launches;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  uint32_t descriptor_capacity = 0;  // sets
  VkBuffer upload = VK_NULL_HANDLE;  // global block snapshots
  Allocation upload_memory;
  VkDeviceSize upload_capacity = 0;
  std::shared_ptr<FaultRecords> faults;  // fault records of the launches that can fault
  std::vector<FaultCheck> fault_checks;  // parallel to those launches, made when the commands are recorded
  bool dirty = true;
  std::shared_ptr<Submission> in_flight;
};

inline Batch* AsBatch(KilnHalBatch* h) { return reinterpret_cast<Batch*>(h); }

// launch.cc
KilnStatus PrepareForEach(Script* script, const KilnHalForEachDesc* in_desc, Launch* out);
KilnStatus PrepareReduce(Script* script, const KilnHalReduceDesc* in_desc, uint64_t result_size,
                         void* out_result, Launch* out);

// command_buffer.cc
KilnStatus RecordCommands(Batch* batch);

// submission.cc
KilnStatus Submit(Batch* batch, std::shared_ptr<Submission>* out);
bool WaitSubmission(Submission* submission, uint64_t timeout_ns, KilnStatus* out_status);

// batch.cc
void DestroyBatchObjects(Batch* batch);
KilnStatus LaunchForEach(KilnHalScript* handle, const KilnHalForEachDesc* desc);
KilnStatus LaunchReduce(KilnHalScript* handle, const KilnHalReduceDesc* desc, uint64_t result_size,
                        void* out_result);
KilnStatus BatchCreate(KilnHalDevice* handle, KilnHalBatch** out_batch);
KilnStatus BatchDestroy(KilnHalBatch* handle);
KilnStatus BatchRecordForEach(KilnHalBatch* handle, KilnHalScript* script, const KilnHalForEachDesc* desc);
KilnStatus BatchRecordReduce(KilnHalBatch* handle, KilnHalScript* script, const KilnHalReduceDesc* desc,
                             uint64_t result_size, void* out_result);
KilnStatus BatchSubmit(KilnHalBatch* handle, KilnHalFence** out_fence);
KilnStatus FenceWait(KilnHalFence* handle, uint64_t timeout_ns, bool* out_done);
KilnStatus FenceDestroy(KilnHalFence* handle);

}  // namespace vulkan
}  // namespace kiln

#endif  // KILN_BACKENDS_VULKAN_BATCH_H_
