// Recording a batch's launches into its command buffer, with the descriptor sets, global block snapshots and
// fault records they need; apart from submission because a batch is recorded once and may be submitted often.
#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "backends/vulkan/batch.h"

namespace kiln {
namespace vulkan {

FaultRecords::~FaultRecords() {
  if (device) DestroyRawBuffer(device, &buffer, &memory);
}

// Records the batch's command buffer: one descriptor set per launch, a barrier between launches, and a final
// barrier that makes the results visible to the host.
KilnStatus RecordCommands(Batch* batch) {
  Device* device = batch->device;
  Instance* instance = device->instance;
  const uint32_t n = static_cast<uint32_t>(batch->launches.size());
  VkResult result = VK_SUCCESS;
  if (!batch->pool) {
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.queueFamilyIndex = device->physical->queue_family;
    result = vkCreateCommandPool(device->device, &pool_info, nullptr, &batch->pool);
    if (result != VK_SUCCESS)
      return instance->Fail(kKilnDelegateError, "vkCreateCommandPool: " + VkResultName(result));
    VkCommandBufferAllocateInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cmd_info.commandPool = batch->pool;
    cmd_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cmd_info.commandBufferCount = 1;
    result = vkAllocateCommandBuffers(device->device, &cmd_info, &batch->cmd);
    if (result != VK_SUCCESS) {
      return instance->Fail(kKilnDelegateError, "vkAllocateCommandBuffers: " + VkResultName(result));
    }
  } else {
    vkResetCommandPool(device->device, batch->pool, 0);
  }
  if (batch->descriptor_capacity < std::max(n, 1u)) {
    if (batch->descriptor_pool) vkDestroyDescriptorPool(device->device, batch->descriptor_pool, nullptr);
    batch->descriptor_pool = VK_NULL_HANDLE;
    const uint32_t capacity = std::max(std::max(n, 1u), batch->descriptor_capacity * 2);
    // Per set at most: the globals, the inputs, the output or result, the allocations, a reduction's
    // partials, the fault record, the usrData.
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              capacity * (5 + KILN_KERNEL_MAX_INPUTS + KILN_SPIRV_MAX_ALLOCATIONS)};
    VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = capacity;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    result = vkCreateDescriptorPool(device->device, &pool_info, nullptr, &batch->descriptor_pool);
    if (result != VK_SUCCESS) {
      batch->descriptor_capacity = 0;
      return instance->Fail(kKilnDelegateError, "vkCreateDescriptorPool: " + VkResultName(result));
    }
    batch->descriptor_capacity = capacity;
  } else {
    vkResetDescriptorPool(device->device, batch->descriptor_pool, 0);
  }
  // Global block and usrData snapshots, each at an offset the device can bind.
  const VkDeviceSize align = std::max<VkDeviceSize>(device->limits().minStorageBufferOffsetAlignment, 16);
  std::vector<VkDeviceSize> offsets(n), usr_offsets(n);
  VkDeviceSize total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    offsets[i] = total;
    if (!batch->launches[i].globals.empty())
      total += (batch->launches[i].globals.size() + align - 1) / align * align;
    usr_offsets[i] = total;
    total += (batch->launches[i].usr.size() + align - 1) / align * align;
  }
  if (total > batch->upload_capacity) {
    DestroyRawBuffer(device, &batch->upload, &batch->upload_memory);
    batch->upload_capacity = 0;
    const VkDeviceSize capacity = std::max<VkDeviceSize>(total, 4096);
    result = CreateRawBuffer(device, capacity,
                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                             &batch->upload, &batch->upload_memory);
    if (result != VK_SUCCESS) {
      return instance->Fail(kKilnOutOfMemory, "the batch's global block buffer: " + VkResultName(result));
    }
    batch->upload_capacity = capacity;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const auto& globals = batch->launches[i].globals;
    if (!globals.empty()) memcpy(batch->upload_memory.mapped() + offsets[i], globals.data(), globals.size());
    const auto& usr = batch->launches[i].usr;
    if (!usr.empty()) memcpy(batch->upload_memory.mapped() + usr_offsets[i], usr.data(), usr.size());
  }
  // One fault record per launch that can fault, each at an offset the device can bind.
  std::vector<VkDeviceSize> fault_offsets(n, 0);
  batch->fault_checks.clear();
  VkDeviceSize fault_total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const Launch& launch = batch->launches[i];
    if (!launch.program().reports_faults) continue;
    fault_offsets[i] = fault_total;
    fault_total += (sizeof(KilnSpirvFault) + align - 1) / align * align;
    FaultCheck check;
    check.offset = fault_offsets[i];
    check.what = "script " + launch.module->name + ", " + (launch.reduction ? "reduction " : "kernel ") +
                 launch.program().name;
    for (const GlobalInfo& g : launch.module->globals) {
      if (g.allocation_index < 0) continue;
      if (check.allocations.size() <= static_cast<size_t>(g.allocation_index))
        check.allocations.resize(g.allocation_index + 1);
      KilnSpirvAllocationInfo info{};
      if (g.block_offset + sizeof(info) <= launch.globals.size())
        memcpy(&info, launch.globals.data() + g.block_offset, sizeof(info));
      check.allocations[g.allocation_index] = {g.name, info};
    }
    batch->fault_checks.push_back(std::move(check));
  }
  if (fault_total > 0 && (!batch->faults || batch->faults->capacity < fault_total)) {
    auto records = std::make_shared<FaultRecords>();
    result = CreateRawBuffer(device, fault_total,
                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                             &records->buffer, &records->memory);
    if (result != VK_SUCCESS) {
      return instance->Fail(kKilnOutOfMemory, "the batch's fault records: " + VkResultName(result));
    }
    records->device = device;
    records->capacity = fault_total;
    batch->faults = std::move(records);
  }
  std::vector<VkDescriptorSetLayout> layouts(n);
  for (uint32_t i = 0; i < n; ++i) {
    layouts[i] = batch->launches[i].program().set_layout;
  }
  std::vector<VkDescriptorSet> sets(n);
  if (n) {
    VkDescriptorSetAllocateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    set_info.descriptorPool = batch->descriptor_pool;
    set_info.descriptorSetCount = n;
    set_info.pSetLayouts = layouts.data();
    result = vkAllocateDescriptorSets(device->device, &set_info, sets.data());
    if (result != VK_SUCCESS)
      return instance->Fail(kKilnDelegateError, "vkAllocateDescriptorSets: " + VkResultName(result));
  }
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkWriteDescriptorSet> writes;
  size_t total_bindings = 0;
  for (const Launch& launch : batch->launches) total_bindings += launch.buffers.size();
  infos.reserve(total_bindings);
  for (uint32_t i = 0; i < n; ++i) {
    const Launch& launch = batch->launches[i];
    const ShaderProgram& program = launch.program();
    for (size_t b = 0; b < program.bindings.size(); ++b) {
      VkDescriptorBufferInfo info{};
      if (b == 0) {
        if (launch.globals.empty()) {
          info = {device->dummy, 0, VK_WHOLE_SIZE};
        } else {
          info = {batch->upload, offsets[i], launch.globals.size()};
        }
      } else if (program.bindings[b] == KILN_SPIRV_FAULT_BINDING) {
        info = {batch->faults->buffer, fault_offsets[i], sizeof(KilnSpirvFault)};
      } else if (program.bindings[b] == KILN_SPIRV_USR_BINDING) {
        info = {batch->upload, usr_offsets[i], launch.usr.size()};
      } else {
        info = {launch.buffers[b], 0, VK_WHOLE_SIZE};
      }
      infos.push_back(info);
      VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      write.dstSet = sets[i];
      write.dstBinding = program.bindings[b];
      write.descriptorCount = 1;
      write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      write.pBufferInfo = &infos.back();
      writes.push_back(write);
    }
  }
  if (!writes.empty()) {
    vkUpdateDescriptorSets(device->device, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  }
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(batch->cmd, &begin);
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_HOST_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(batch->cmd, VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                       &barrier, 0, nullptr, 0, nullptr);
  const uint32_t* max_groups = device->limits().maxComputeWorkGroupCount;
  for (uint32_t i = 0; i < n; ++i) {
    const Launch& launch = batch->launches[i];
    if (i > 0) {
      // Each launch sees every write of the ones before it.
      barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vkCmdPipelineBarrier(batch->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    }
    if (launch.reduction) {
      const ReductionInfo& reduction = launch.module->reductions[launch.index];
      // Pass 0 leaves G partials; after a barrier, pass 1 (one workgroup) combines them into the result.
      for (uint32_t pass = 0; pass < 2; ++pass) {
        if (pass == 1) {
          barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
          barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
          vkCmdPipelineBarrier(batch->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
        }
        vkCmdBindPipeline(batch->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, reduction.passes[pass]);
        vkCmdBindDescriptorSets(batch->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, reduction.layout, 0, 1, &sets[i],
                                0, nullptr);
        vkCmdPushConstants(batch->cmd, reduction.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           static_cast<uint32_t>(launch.push.size()), launch.push.data());
        vkCmdDispatch(batch->cmd, pass == 0 ? launch.groups : 1, 1, 1);
      }
      continue;
    }
    const KernelInfo& kernel = launch.module->kernels[launch.index];
    vkCmdBindPipeline(batch->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.pipelines[launch.shape]);
    vkCmdBindDescriptorSets(batch->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.layout, 0, 1, &sets[i], 0,
                            nullptr);
    vkCmdPushConstants(batch->cmd, kernel.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       static_cast<uint32_t>(launch.push.size()), launch.push.data());
    const uint32_t* wg = kernel.workgroups[launch.shape];
    uint32_t groups[3];
    for (int d = 0; d < 3; ++d) groups[d] = (launch.dims[d] + wg[d] - 1) / wg[d];
    // Launches larger than the device's group counts run as several dispatches, each told its origin.
    for (uint32_t gz = 0; gz < groups[2]; gz += max_groups[2]) {
      for (uint32_t gy = 0; gy < groups[1]; gy += max_groups[1]) {
        for (uint32_t gx = 0; gx < groups[0]; gx += max_groups[0]) {
          const uint32_t origin[4] = {gx * wg[0], gy * wg[1], gz * wg[2], 0};
          vkCmdPushConstants(batch->cmd, kernel.layout, VK_SHADER_STAGE_COMPUTE_BIT, 16, 16, origin);
          vkCmdDispatch(batch->cmd, std::min(groups[0] - gx, max_groups[0]),
                        std::min(groups[1] - gy, max_groups[1]), std::min(groups[2] - gz, max_groups[2]));
        }
      }
    }
  }
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(batch->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &barrier, 0,
                       nullptr, 0, nullptr);
  result = vkEndCommandBuffer(batch->cmd);
  if (result != VK_SUCCESS)
    return instance->Fail(kKilnDelegateError, "vkEndCommandBuffer: " + VkResultName(result));
  batch->dirty = false;
  return kKilnOk;
}

}  // namespace vulkan
}  // namespace kiln
