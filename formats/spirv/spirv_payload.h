// The "spirv" payload of a kernel module (kiln/spirv_abi.h) as C++ values: a checked reader for the Vulkan
// driver, a writer for kilnc and tests, and a scan of a SPIR-V module's interface (entry points, descriptor
// bindings, specialization ids) so the driver can refuse a kernel before handing its code to Vulkan.
#ifndef KILN_FORMATS_SPIRV_SPIRV_PAYLOAD_H_
#define KILN_FORMATS_SPIRV_SPIRV_PAYLOAD_H_

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kiln/spirv_abi.h"

namespace kiln {
namespace spirv {

// What kernel and reduction rows share: the first seven fields of KilnSpirvKernelEntry and
// KilnSpirvReductionEntry, in the same order.
struct SpirvShader {
  std::string name;
  std::string entry_point = "main";
  std::vector<uint32_t> code;  // empty: CPU-only
  std::string cpu_only_reason;
  uint32_t required_features = 0;
  uint32_t num_inputs = 0;
};

struct SpirvKernel : SpirvShader {
  bool has_output = false;
  uint32_t unit_sizes[9] = {};  // inputs, then [8] for the output
};

struct SpirvGlobal {
  std::string name;
  uint32_t kind = KILN_SPIRV_GLOBAL_VALUE;
  uint32_t size = 0;
  uint32_t block_offset = 0;
  uint32_t unit_size = 0;
};

// A reduction's two-pass shader (kiln/spirv_abi.h, "Reductions").
struct SpirvReduction : SpirvShader {
  uint32_t accumulator_stride = 0;
  uint32_t result_words = 0;
  uint32_t unit_sizes[8] = {};
};

struct SpirvPayload {
  uint32_t spirv_version = 0x00010300;
  uint32_t generator_version = 0;
  uint32_t global_block_size = 0;
  std::vector<SpirvKernel> kernels;
  std::vector<SpirvGlobal> globals;
  std::vector<SpirvReduction> reductions;
};

// Parses and checks a payload; on failure `error` names the field and its byte offset.
bool ParseSpirvPayload(const void* data, size_t size, SpirvPayload* out, std::string* error);

// Serializes a payload in the current layout.
std::string WriteSpirvPayload(const SpirvPayload& payload);

// What a SPIR-V module declares at its boundary.
struct SpirvInterface {
  uint32_t version = 0;  // from the module header
  std::vector<std::string> compute_entry_points;
  std::set<std::pair<uint32_t, uint32_t>> bindings;  // (set, binding) of every decorated variable
  std::set<uint32_t> spec_ids;
};

// Walks the instruction stream; fails (with the word offset) on a malformed header or instruction.
bool ScanSpirvInterface(const std::vector<uint32_t>& code, SpirvInterface* out, std::string* error);

}  // namespace spirv
}  // namespace kiln

#endif  // KILN_FORMATS_SPIRV_SPIRV_PAYLOAD_H_
