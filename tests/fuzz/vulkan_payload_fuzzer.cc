// libFuzzer target for the Vulkan driver's two readers of untrusted bytes: the "spirv" payload of a module
// (formats/spirv/spirv_payload.cc, with the SPIR-V interface scan of every kernel and reduction it accepts)
// and the on-disk pipeline cache file (backends/vulkan/pipeline_cache.cc). Each input is tried as a payload on
// its own, then as byte edits of a valid payload (kernels, globals, reductions) and of a valid cache file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "backends/vulkan/pipeline_cache.h"
#include "formats/spirv/spirv_payload.h"

namespace {

// A minimal SPIR-V header plus an OpEntryPoint and a Binding decoration, enough for the interface scan.
std::vector<uint32_t> TinySpirv() {
  return {0x07230203u, 0x00010300u, 0u, 16u, 0u,
          (4u << 16) | 15u, 5u, 1u, 0x6e69616du,  // OpEntryPoint GLCompute %1 "main"
          0u,
          (4u << 16) | 71u, 2u, 33u, 9u};  // OpDecorate %2 Binding 9
}

std::string ValidPayload() {
  kiln::spirv::SpirvPayload p;
  p.global_block_size = 48;
  kiln::spirv::SpirvKernel k;
  k.name = "k";
  k.code = TinySpirv();
  k.num_inputs = 2;
  k.has_output = true;
  k.unit_sizes[0] = k.unit_sizes[1] = 4;
  k.unit_sizes[8] = 16;
  p.kernels.push_back(k);
  kiln::spirv::SpirvKernel cpu;
  cpu.name = "cpu_only";
  cpu.cpu_only_reason = "a call to 'rsDebug'";
  p.kernels.push_back(cpu);
  p.globals.push_back({"g", KILN_SPIRV_GLOBAL_VALUE, 4, 0, 0});
  p.globals.push_back({"a", KILN_SPIRV_GLOBAL_ALLOCATION, 0, 16, 4});
  kiln::spirv::SpirvReduction r;
  r.name = "r";
  r.code = TinySpirv();
  r.num_inputs = 1;
  r.accumulator_stride = 16;
  r.result_words = 2;
  r.unit_sizes[0] = 4;
  p.reductions.push_back(r);
  return kiln::spirv::WriteSpirvPayload(p);
}

void ReadPayload(const uint8_t* data, size_t size) {
  kiln::spirv::SpirvPayload payload;
  std::string error;
  if (!kiln::spirv::ParseSpirvPayload(data, size, &payload, &error)) {
    if (error.empty()) __builtin_trap();  // a refusal must say why
    return;
  }
  kiln::spirv::SpirvInterface interface;
  for (const auto& k : payload.kernels) {
    if (!k.code.empty() && !kiln::spirv::ScanSpirvInterface(k.code, &interface, &error) && error.empty())
      __builtin_trap();
  }
  for (const auto& r : payload.reductions) {
    if (!r.code.empty() && !kiln::spirv::ScanSpirvInterface(r.code, &interface, &error) && error.empty())
      __builtin_trap();
  }
  // Whatever the reader accepts re-serializes and reads back.
  const std::string again = kiln::spirv::WriteSpirvPayload(payload);
  kiln::spirv::SpirvPayload reread;
  if (!kiln::spirv::ParseSpirvPayload(again.data(), again.size(), &reread, &error)) __builtin_trap();
}

kiln::vulkan::PipelineCacheIdentity Identity() {
  kiln::vulkan::PipelineCacheIdentity id;
  id.vendor_id = 0x10005;
  id.device_id = 7;
  id.driver_version = 42;
  for (int i = 0; i < 16; ++i) id.pipeline_cache_uuid[i] = static_cast<uint8_t>(i);
  id.kiln_version = "fuzz";
  return id;
}

std::string CachePath() {
  static const std::string path = "/tmp/kiln_fuzz_cache_" + std::to_string(getpid()) + ".kvpc";
  return path;
}

std::string ValidCache() {
  CachePath();  // constructed before the exit handler is registered, so destroyed after it runs
  std::atexit([] { std::remove(CachePath().c_str()); });  // the smoke run leaves nothing behind
  std::string error;
  if (!kiln::vulkan::StorePipelineCache(CachePath(), Identity(), {1, 2, 0xffffffffffffull}, std::string(64, 'v'),
                                        &error)) {
    __builtin_trap();
  }
  std::FILE* f = std::fopen(CachePath().c_str(), "rb");
  std::string bytes;
  char buffer[4096];
  size_t n;
  while (f && (n = std::fread(buffer, 1, sizeof buffer, f)) > 0) bytes.append(buffer, n);
  if (f) std::fclose(f);
  return bytes;
}

void ReadCache(const std::string& bytes) {
  std::FILE* f = std::fopen(CachePath().c_str(), "wb");
  if (!f) return;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  std::set<uint64_t> keys;
  std::string vk_data, detail;
  kiln::vulkan::LoadPipelineCache(CachePath(), Identity(), &keys, &vk_data, &detail);
}

template <typename Bytes>
Bytes Edit(Bytes bytes, const uint8_t* data, size_t size) {
  // (offset high, offset low, value) triples, plus a truncation chosen by the last byte.
  for (size_t i = 0; i + 3 <= size && !bytes.empty(); i += 3) {
    const size_t offset = ((static_cast<size_t>(data[i]) << 8) | data[i + 1]) % bytes.size();
    bytes[offset] = static_cast<char>(data[i + 2]);
  }
  if (size % 3 == 1 && !bytes.empty()) bytes.resize(bytes.size() - data[size - 1] % bytes.size());
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string payload = ValidPayload();
  static const std::string cache = ValidCache();
  ReadPayload(data, size);
  const std::string edited = Edit(payload, data, size);
  ReadPayload(reinterpret_cast<const uint8_t*>(edited.data()), edited.size());
  ReadCache(Edit(cache, data, size));
  return 0;
}
