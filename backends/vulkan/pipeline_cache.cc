// The Vulkan driver's on-disk pipeline cache (pipeline_cache.h): read back with its header and identity checked,
// written through backends/common/cache_file.h (temporary file, then rename).

#include "backends/vulkan/pipeline_cache.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include "backends/common/cache_file.h"

namespace kiln {
namespace vulkan {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'V', 'K', 'P', 'C'};
constexpr uint32_t kFormatVersion = 1;

struct FileHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t vendor_id;
  uint32_t device_id;
  uint32_t driver_version;
  uint8_t uuid[16];
  char kiln_version[32];
  uint32_t num_keys;
  uint32_t vk_data_size;
  uint64_t body_checksum;    // over the keys and the Vulkan data
  uint64_t header_checksum;  // over every byte above
};

// VkPipelineCacheHeaderVersionOne, checked here because some drivers trust it blindly.
struct VkCacheHeader {
  uint32_t header_size;
  uint32_t header_version;
  uint32_t vendor_id;
  uint32_t device_id;
  uint8_t uuid[16];
};

FileHeader MakeHeader(const PipelineCacheIdentity& identity) {
  FileHeader header;
  memset(&header, 0, sizeof(header));
  memcpy(header.magic, kMagic, sizeof(kMagic));
  header.format_version = kFormatVersion;
  header.vendor_id = identity.vendor_id;
  header.device_id = identity.device_id;
  header.driver_version = identity.driver_version;
  memcpy(header.uuid, identity.pipeline_cache_uuid, 16);
  snprintf(header.kiln_version, sizeof(header.kiln_version), "%s", identity.kiln_version.c_str());
  return header;
}

}  // namespace

uint64_t Fnv1a64(const void* data, size_t size, uint64_t hash) {
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string PipelineCachePath(const std::string& dir, const PipelineCacheIdentity& identity) {
  FileHeader header = MakeHeader(identity);
  char name[96];
  snprintf(name, sizeof(name), "/vulkan/%04x-%04x-%016llx.kvpc", identity.vendor_id, identity.device_id,
           static_cast<unsigned long long>(Fnv1a64(&header, offsetof(FileHeader, num_keys))));
  return dir + name;
}

CacheLoadResult LoadPipelineCache(const std::string& path, const PipelineCacheIdentity& identity,
                                  std::set<uint64_t>* keys, std::string* vk_data, std::string* detail) {
  keys->clear();
  vk_data->clear();
  std::string file;
  // An unreadable file is treated like a missing one: the cache is rebuilt and written again.
  if (driver::ReadWholeFile(path, &file, detail) != driver::FileReadResult::kRead) {
    *detail = "no cache file " + path;
    return CacheLoadResult::kAbsent;
  }
  FileHeader header;
  if (file.size() < sizeof(header)) {
    *detail = path + ": truncated (" + std::to_string(file.size()) + " bytes, header needs " +
              std::to_string(sizeof(header)) + ")";
    return CacheLoadResult::kCorrupt;
  }
  memcpy(&header, file.data(), sizeof(header));
  if (memcmp(header.magic, kMagic, sizeof(kMagic)) != 0 ||
      Fnv1a64(&header, offsetof(FileHeader, header_checksum)) != header.header_checksum) {
    *detail = path + ": bad magic or header checksum";
    return CacheLoadResult::kCorrupt;
  }
  FileHeader expected = MakeHeader(identity);
  if (header.format_version != kFormatVersion ||
      memcmp(&header.vendor_id, &expected.vendor_id,
             offsetof(FileHeader, num_keys) - offsetof(FileHeader, vendor_id)) != 0) {
    *detail = path + ": made for another device, driver, or Kiln version";
    return CacheLoadResult::kMismatch;
  }
  const uint64_t body_size = uint64_t{header.num_keys} * 8 + header.vk_data_size;
  if (file.size() - sizeof(header) != body_size) {
    *detail = path + ": body is " + std::to_string(file.size() - sizeof(header)) + " bytes, header says " +
              std::to_string(body_size);
    return CacheLoadResult::kCorrupt;
  }
  if (Fnv1a64(file.data() + sizeof(header), body_size) != header.body_checksum) {
    *detail = path + ": body checksum mismatch";
    return CacheLoadResult::kCorrupt;
  }
  std::vector<uint64_t> key_list(header.num_keys);
  memcpy(key_list.data(), file.data() + sizeof(header), key_list.size() * 8);
  *vk_data = file.substr(sizeof(header) + key_list.size() * 8);
  if (!vk_data->empty()) {
    VkCacheHeader vk;
    if (vk_data->size() < sizeof(vk)) {
      *detail = path + ": Vulkan cache data shorter than its header";
      vk_data->clear();
      return CacheLoadResult::kCorrupt;
    }
    memcpy(&vk, vk_data->data(), sizeof(vk));
    if (vk.header_size < sizeof(vk) || vk.header_size > vk_data->size() ||
        vk.vendor_id != identity.vendor_id || vk.device_id != identity.device_id ||
        memcmp(vk.uuid, identity.pipeline_cache_uuid, 16) != 0) {
      *detail = path + ": Vulkan cache data does not match the device";
      vk_data->clear();
      return CacheLoadResult::kCorrupt;
    }
  }
  keys->insert(key_list.begin(), key_list.end());
  *detail = path + ": " + std::to_string(keys->size()) + " pipeline(s)";
  return CacheLoadResult::kLoaded;
}

bool StorePipelineCache(const std::string& path, const PipelineCacheIdentity& identity,
                        const std::set<uint64_t>& keys, const std::string& vk_data, std::string* error) {
  std::string body;
  for (uint64_t key : keys) body.append(reinterpret_cast<const char*>(&key), 8);
  body += vk_data;
  FileHeader header = MakeHeader(identity);
  header.num_keys = static_cast<uint32_t>(keys.size());
  header.vk_data_size = static_cast<uint32_t>(vk_data.size());
  header.body_checksum = Fnv1a64(body.data(), body.size());
  header.header_checksum = Fnv1a64(&header, offsetof(FileHeader, header_checksum));
  return driver::WriteFileAtomically(path, &header, sizeof(header), body.data(), body.size(), error);
}

}  // namespace vulkan
}  // namespace kiln
