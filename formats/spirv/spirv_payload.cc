// The SPIR-V payload format (spirv_payload.h): the checked reader, the writer and the interface scan.

#include "formats/spirv/spirv_payload.h"

#include <cstring>
#include <functional>
#include <map>

#include "kiln/kernel_abi.h"

namespace kiln {
namespace spirv {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kOpDecorate = 71;
constexpr uint32_t kDecorationSpecId = 1;
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;
constexpr uint32_t kExecutionModelGLCompute = 5;

// Reads a row of `stride` bytes into T, zero-filling a shorter (older) row.
template <typename T>
void ReadRow(const uint8_t* base, uint32_t stride, T* out) {
  memset(out, 0, sizeof(T));
  memcpy(out, base, stride < sizeof(T) ? stride : sizeof(T));
}

bool InRange(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

class StringArea {
 public:
  StringArea(const char* base, uint32_t size) : base_(base), size_(size) {}
  bool Get(uint32_t offset, std::string* out) const {
    if (offset >= size_) return false;
    const void* end = memchr(base_ + offset, 0, size_ - offset);
    if (!end) return false;
    out->assign(base_ + offset, static_cast<const char*>(end));
    return true;
  }

 private:
  const char* base_;
  uint32_t size_;
};

// The fields every kernel and reduction row starts with (SpirvShader): strings, code in range, input count.
template <typename Row>
bool ReadShader(const Row& row, const StringArea& strings, const uint8_t* bytes, size_t size,
                const std::string& where, SpirvShader* out, std::string* error) {
  if (!strings.Get(row.name, &out->name) || !strings.Get(row.entry_point, &out->entry_point) ||
      !strings.Get(row.cpu_only_reason, &out->cpu_only_reason)) {
    *error = where + ": a string offset points outside the string area";
    return false;
  }
  if (row.code_size % 4 || row.code_offset % 4 || !InRange(row.code_offset, row.code_size, size)) {
    *error = where + " (" + out->name + "): code at offset " + std::to_string(row.code_offset) + " (+" +
             std::to_string(row.code_size) + ") is misaligned or outside the payload";
    return false;
  }
  if (row.num_inputs > KILN_KERNEL_MAX_INPUTS) {
    *error = where + " (" + out->name + "): " + std::to_string(row.num_inputs) + " inputs (at most " +
             std::to_string(KILN_KERNEL_MAX_INPUTS) + ")";
    return false;
  }
  out->code.resize(row.code_size / 4);
  if (row.code_size) memcpy(out->code.data(), bytes + row.code_offset, row.code_size);
  out->required_features = row.required_features;
  out->num_inputs = row.num_inputs;
  return true;
}

// The same fields written back; the code is appended to `code`, which starts at payload offset `code_offset`.
template <typename Row>
void WriteShader(const SpirvShader& shader, const std::function<uint32_t(const std::string&)>& intern,
                 uint32_t code_offset, std::string* code, Row* row) {
  row->name = intern(shader.name);
  row->entry_point = intern(shader.entry_point);
  row->cpu_only_reason = intern(shader.cpu_only_reason);
  row->code_offset = code_offset + static_cast<uint32_t>(code->size());
  row->code_size = static_cast<uint32_t>(shader.code.size() * 4);
  code->append(reinterpret_cast<const char*>(shader.code.data()), shader.code.size() * 4);
  row->required_features = shader.required_features;
  row->num_inputs = shader.num_inputs;
}

}  // namespace

bool ParseSpirvPayload(const void* data, size_t size, SpirvPayload* out, std::string* error) {
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  *out = SpirvPayload();
  if (!data || size < KILN_SPIRV_HEADER_SIZE_V1) {
    *error = "spirv payload of " + std::to_string(size) + " bytes is shorter than its " +
             std::to_string(KILN_SPIRV_HEADER_SIZE_V1) + "-byte header";
    return false;
  }
  KilnSpirvPayloadHeader header;
  memcpy(&header, bytes, KILN_SPIRV_HEADER_SIZE_V1);
  if (header.magic != KILN_SPIRV_PAYLOAD_MAGIC) {
    *error = "spirv payload: bad magic at offset 0 (not a Kiln SPIR-V payload)";
    return false;
  }
  if (header.abi_version != KILN_SPIRV_ABI_VERSION) {
    *error = "spirv payload: ABI version " + std::to_string(header.abi_version) +
             " at offset 4, this driver reads " + std::to_string(KILN_SPIRV_ABI_VERSION);
    return false;
  }
  if (header.header_size < KILN_SPIRV_HEADER_SIZE_V1 || header.header_size > size) {
    *error =
        "spirv payload: header_size " + std::to_string(header.header_size) + " at offset 8 is out of range";
    return false;
  }
  ReadRow(bytes, header.header_size, &header);  // an older header has no reduction table
  if (header.num_reductions > (1u << 16) ||
      (header.num_reductions &&
       (header.reduction_entry_size < 4 ||
        !InRange(header.reductions_offset, uint64_t{header.reduction_entry_size} * header.num_reductions,
                 size)))) {
    *error = "spirv payload: reduction table at offset " + std::to_string(header.reductions_offset) + " (" +
             std::to_string(header.num_reductions) + " rows of " + std::to_string(header.reduction_entry_size) +
             " bytes) does not fit in " + std::to_string(size) + " bytes";
    return false;
  }
  if (header.num_kernels > (1u << 16) || header.num_globals > (1u << 16)) {
    *error = "spirv payload: implausible table sizes (" + std::to_string(header.num_kernels) + " kernels, " +
             std::to_string(header.num_globals) + " globals)";
    return false;
  }
  if (header.num_kernels &&
      (header.kernel_entry_size < 4 ||
       !InRange(header.kernels_offset, uint64_t{header.kernel_entry_size} * header.num_kernels, size))) {
    *error = "spirv payload: kernel table at offset " + std::to_string(header.kernels_offset) + " (" +
             std::to_string(header.num_kernels) + " rows of " + std::to_string(header.kernel_entry_size) +
             " bytes) does not fit in " + std::to_string(size) + " bytes";
    return false;
  }
  if (header.num_globals &&
      (header.global_entry_size < 4 ||
       !InRange(header.globals_offset, uint64_t{header.global_entry_size} * header.num_globals, size))) {
    *error = "spirv payload: global table at offset " + std::to_string(header.globals_offset) +
             " does not fit in " + std::to_string(size) + " bytes";
    return false;
  }
  if (!InRange(header.strings_offset, header.strings_size, size)) {
    *error = "spirv payload: string area at offset " + std::to_string(header.strings_offset) + " (+" +
             std::to_string(header.strings_size) + ") does not fit in " + std::to_string(size) + " bytes";
    return false;
  }
  if (header.global_block_size > (64u << 20)) {
    *error =
        "spirv payload: global block of " + std::to_string(header.global_block_size) + " bytes is too large";
    return false;
  }
  StringArea strings(reinterpret_cast<const char*>(bytes) + header.strings_offset, header.strings_size);
  out->spirv_version = header.spirv_version;
  out->generator_version = header.generator_version;
  out->global_block_size = header.global_block_size;
  for (uint32_t i = 0; i < header.num_kernels; ++i) {
    const uint64_t row_offset = header.kernels_offset + uint64_t{i} * header.kernel_entry_size;
    KilnSpirvKernelEntry row;
    ReadRow(bytes + row_offset, header.kernel_entry_size, &row);
    SpirvKernel kernel;
    const std::string where =
        "spirv payload: kernel row " + std::to_string(i) + " at offset " + std::to_string(row_offset);
    if (!ReadShader(row, strings, bytes, size, where, &kernel, error)) return false;
    if (row.has_output > 1) {
      *error = where + " (" + kernel.name + "): has_output " + std::to_string(row.has_output);
      return false;
    }
    kernel.has_output = row.has_output != 0;
    memcpy(kernel.unit_sizes, row.unit_sizes, sizeof(kernel.unit_sizes));
    out->kernels.push_back(std::move(kernel));
  }
  for (uint32_t i = 0; i < header.num_globals; ++i) {
    const uint64_t row_offset = header.globals_offset + uint64_t{i} * header.global_entry_size;
    KilnSpirvGlobalEntry row;
    ReadRow(bytes + row_offset, header.global_entry_size, &row);
    SpirvGlobal global;
    const std::string where =
        "spirv payload: global row " + std::to_string(i) + " at offset " + std::to_string(row_offset);
    if (!strings.Get(row.name, &global.name)) {
      *error = where + ": its name offset points outside the string area";
      return false;
    }
    global.kind = row.kind;
    global.size = row.size;
    global.block_offset = row.block_offset;
    global.unit_size = row.unit_size;
    const uint64_t extent =
        global.kind == KILN_SPIRV_GLOBAL_ALLOCATION ? sizeof(KilnSpirvAllocationInfo) : global.size;
    if (global.kind > KILN_SPIRV_GLOBAL_ALLOCATION ||
        !InRange(global.block_offset, extent, header.global_block_size) ||
        (global.kind == KILN_SPIRV_GLOBAL_ALLOCATION &&
         (global.block_offset % 16 || global.unit_size == 0))) {
      *error = where + " (" + global.name + "): kind " + std::to_string(global.kind) + ", " +
               std::to_string(extent) + " bytes at block offset " + std::to_string(global.block_offset) +
               " do not fit the " + std::to_string(header.global_block_size) + "-byte global block";
      return false;
    }
    out->globals.push_back(std::move(global));
  }
  for (uint32_t i = 0; i < header.num_reductions; ++i) {
    const uint64_t row_offset = header.reductions_offset + uint64_t{i} * header.reduction_entry_size;
    KilnSpirvReductionEntry row;
    ReadRow(bytes + row_offset, header.reduction_entry_size, &row);
    SpirvReduction reduction;
    const std::string where =
        "spirv payload: reduction row " + std::to_string(i) + " at offset " + std::to_string(row_offset);
    if (!ReadShader(row, strings, bytes, size, where, &reduction, error)) return false;
    if (row.code_size && (row.accumulator_stride == 0 || row.accumulator_stride > (1u << 20) ||
                          row.result_words == 0 || row.result_words > (1u << 20))) {
      *error = where + " (" + reduction.name + "): accumulator stride " + std::to_string(row.accumulator_stride) +
               ", " + std::to_string(row.result_words) + " result words (out of range)";
      return false;
    }
    reduction.accumulator_stride = row.accumulator_stride;
    reduction.result_words = row.result_words;
    memcpy(reduction.unit_sizes, row.unit_sizes, sizeof(reduction.unit_sizes));
    out->reductions.push_back(std::move(reduction));
  }
  return true;
}

std::string WriteSpirvPayload(const SpirvPayload& payload) {
  std::string strings(1, '\0');  // offset 0 is the empty string
  std::map<std::string, uint32_t> interned;
  auto intern = [&](const std::string& s) -> uint32_t {
    if (s.empty()) return 0;
    auto it = interned.find(s);
    if (it != interned.end()) return it->second;
    uint32_t offset = static_cast<uint32_t>(strings.size());
    strings += s;
    strings += '\0';
    interned.emplace(s, offset);
    return offset;
  };
  KilnSpirvPayloadHeader header{};
  header.magic = KILN_SPIRV_PAYLOAD_MAGIC;
  header.abi_version = KILN_SPIRV_ABI_VERSION;
  header.header_size = sizeof(header);
  header.spirv_version = payload.spirv_version;
  header.generator_version = payload.generator_version;
  header.num_kernels = static_cast<uint32_t>(payload.kernels.size());
  header.kernel_entry_size = sizeof(KilnSpirvKernelEntry);
  header.kernels_offset = sizeof(header);
  header.num_globals = static_cast<uint32_t>(payload.globals.size());
  header.global_entry_size = sizeof(KilnSpirvGlobalEntry);
  header.globals_offset = header.kernels_offset + header.num_kernels * header.kernel_entry_size;
  header.global_block_size = payload.global_block_size;
  header.num_reductions = static_cast<uint32_t>(payload.reductions.size());
  header.reduction_entry_size = sizeof(KilnSpirvReductionEntry);
  header.reductions_offset = header.globals_offset + header.num_globals * header.global_entry_size;
  uint32_t code_offset = header.reductions_offset + header.num_reductions * header.reduction_entry_size;
  std::vector<KilnSpirvKernelEntry> kernel_rows;
  std::string code;
  for (const SpirvKernel& kernel : payload.kernels) {
    KilnSpirvKernelEntry row{};
    WriteShader(kernel, intern, code_offset, &code, &row);
    row.has_output = kernel.has_output ? 1 : 0;
    memcpy(row.unit_sizes, kernel.unit_sizes, sizeof(row.unit_sizes));
    kernel_rows.push_back(row);
  }
  std::vector<KilnSpirvGlobalEntry> global_rows;
  for (const SpirvGlobal& global : payload.globals) {
    KilnSpirvGlobalEntry row{};
    row.name = intern(global.name);
    row.kind = global.kind;
    row.size = global.size;
    row.block_offset = global.block_offset;
    row.unit_size = global.unit_size;
    global_rows.push_back(row);
  }
  std::vector<KilnSpirvReductionEntry> reduction_rows;
  for (const SpirvReduction& reduction : payload.reductions) {
    KilnSpirvReductionEntry row{};
    WriteShader(reduction, intern, code_offset, &code, &row);
    row.accumulator_stride = reduction.accumulator_stride;
    row.result_words = reduction.result_words;
    memcpy(row.unit_sizes, reduction.unit_sizes, sizeof(row.unit_sizes));
    reduction_rows.push_back(row);
  }
  header.strings_offset = code_offset + static_cast<uint32_t>(code.size());
  header.strings_size = static_cast<uint32_t>(strings.size());
  std::string out(reinterpret_cast<const char*>(&header), sizeof(header));
  out.append(reinterpret_cast<const char*>(kernel_rows.data()),
             kernel_rows.size() * sizeof(KilnSpirvKernelEntry));
  out.append(reinterpret_cast<const char*>(global_rows.data()),
             global_rows.size() * sizeof(KilnSpirvGlobalEntry));
  out.append(reinterpret_cast<const char*>(reduction_rows.data()),
             reduction_rows.size() * sizeof(KilnSpirvReductionEntry));
  out += code;
  out += strings;
  return out;
}

bool ScanSpirvInterface(const std::vector<uint32_t>& code, SpirvInterface* out, std::string* error) {
  *out = SpirvInterface();
  if (code.size() < 5 || code[0] != kSpirvMagic) {
    *error = "not a SPIR-V module (" + std::to_string(code.size() * 4) + " bytes, bad magic or header)";
    return false;
  }
  out->version = code[1];
  std::map<uint32_t, uint32_t> set_of, binding_of;
  size_t i = 5;
  while (i < code.size()) {
    const uint32_t word_count = code[i] >> 16;
    const uint32_t opcode = code[i] & 0xffffu;
    if (word_count == 0 || i + word_count > code.size()) {
      *error = "malformed SPIR-V instruction at word " + std::to_string(i) + " (opcode " +
               std::to_string(opcode) + ", " + std::to_string(word_count) + " words)";
      return false;
    }
    if (opcode == kOpEntryPoint && word_count >= 4 && code[i + 1] == kExecutionModelGLCompute) {
      const char* name = reinterpret_cast<const char*>(&code[i + 3]);
      size_t max_len = (word_count - 3) * 4;
      out->compute_entry_points.emplace_back(name, strnlen(name, max_len));
    } else if (opcode == kOpDecorate && word_count >= 4) {
      const uint32_t target = code[i + 1];
      const uint32_t decoration = code[i + 2];
      if (decoration == kDecorationBinding) binding_of[target] = code[i + 3];
      if (decoration == kDecorationDescriptorSet) set_of[target] = code[i + 3];
      if (decoration == kDecorationSpecId) out->spec_ids.insert(code[i + 3]);
    }
    i += word_count;
  }
  for (const auto& [target, binding] : binding_of) {
    auto set = set_of.find(target);
    out->bindings.emplace(set == set_of.end() ? 0u : set->second, binding);
  }
  return true;
}

}  // namespace spirv
}  // namespace kiln
