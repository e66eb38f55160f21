// NumPy .npy reading and writing (npy.h), every header field checked.

#include "tools/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace kiln {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct DescrEntry {
  const char* descr;
  KilnType type;
  size_t size;
};

constexpr DescrEntry kDescrs[] = {
    {"<f4", kKilnFloat32, 4}, {"<f8", kKilnFloat64, 8}, {"<f2", kKilnFloat16, 2}, {"|i1", kKilnInt8, 1},
    {"|u1", kKilnUInt8, 1},   {"<i2", kKilnInt16, 2},   {"<u2", kKilnUInt16, 2},  {"<i4", kKilnInt32, 4},
    {"<u4", kKilnUInt32, 4},  {"<i8", kKilnInt64, 8},   {"<u8", kKilnUInt64, 8},  {"|b1", kKilnBool, 1},
};

// Finds `'key':` in the header dict and returns the position after the colon, or npos.
size_t FindKey(const std::string& header, const std::string& key) {
  size_t pos = header.find("'" + key + "'");
  if (pos == std::string::npos) return pos;
  pos = header.find(':', pos);
  return pos == std::string::npos ? pos : pos + 1;
}

// Arrays hold little-endian elements at any alignment.
template <typename T>
T LoadLittle(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

size_t SkipSpaces(const std::string& s, size_t pos) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  return pos;
}

}  // namespace

std::string NpyDescr(KilnType type) {
  for (const DescrEntry& e : kDescrs) {
    if (e.type == type) return e.descr;
  }
  return "";
}

bool ParseNpy(const std::vector<uint8_t>& bytes, NpyArray* out, std::string* error) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) {
    *error = "not a .npy file (missing the \\x93NUMPY magic)";
    return false;
  }
  const int major = bytes[6];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      *error = "truncated .npy header";
      return false;
    }
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    *error = "unsupported .npy version " + std::to_string(major);
    return false;
  }
  if (header_start + header_len > bytes.size()) {
    *error = "truncated .npy header (declares " + std::to_string(header_len) + " bytes)";
    return false;
  }
  const std::string header(reinterpret_cast<const char*>(bytes.data()) + header_start, header_len);

  size_t pos = FindKey(header, "descr");
  if (pos == std::string::npos) {
    *error = ".npy header has no 'descr'";
    return false;
  }
  pos = SkipSpaces(header, pos);
  const size_t quote_end = pos < header.size() ? header.find(header[pos], pos + 1) : std::string::npos;
  if (pos >= header.size() || (header[pos] != '\'' && header[pos] != '"') || quote_end == std::string::npos) {
    *error = ".npy header: 'descr' is not a string (structured dtypes are not supported)";
    return false;
  }
  std::string descr = header.substr(pos + 1, quote_end - pos - 1);
  if (descr.size() == 3 && descr[0] == '=') descr[0] = '<';
  if (descr == "<i1" || descr == "<u1" || descr == "<b1") descr[0] = '|';
  const DescrEntry* entry = nullptr;
  for (const DescrEntry& e : kDescrs) {
    if (descr == e.descr) entry = &e;
  }
  if (entry == nullptr) {
    *error = ".npy dtype '" + descr + "' is not supported (big-endian or non-numeric?)";
    return false;
  }

  pos = FindKey(header, "fortran_order");
  if (pos != std::string::npos && header.compare(SkipSpaces(header, pos), 4, "True") == 0) {
    *error = ".npy array is in Fortran order; save it with np.ascontiguousarray first";
    return false;
  }

  pos = FindKey(header, "shape");
  if (pos == std::string::npos || (pos = header.find('(', pos)) == std::string::npos) {
    *error = ".npy header has no 'shape' tuple";
    return false;
  }
  const size_t close = header.find(')', pos);
  if (close == std::string::npos) {
    *error = ".npy header: unterminated 'shape' tuple";
    return false;
  }
  out->shape.clear();
  uint64_t count = 1;
  for (size_t p = pos + 1; p < close;) {
    p = SkipSpaces(header, p);
    if (p >= close) break;
    if (header[p] == ',') {
      ++p;
      continue;
    }
    size_t end = p;
    while (end < close && header[end] >= '0' && header[end] <= '9') ++end;
    if (end == p || end - p > 12) {
      *error = ".npy header: bad dimension in 'shape' near '" + header.substr(p, 8) + "'";
      return false;
    }
    const int64_t dim = std::stoll(header.substr(p, end - p));
    out->shape.push_back(dim);
    if (dim != 0 && count > (uint64_t{1} << 40) / static_cast<uint64_t>(dim)) {
      *error = ".npy shape is too large";
      return false;
    }
    count *= static_cast<uint64_t>(dim);
    p = end;
  }
  const size_t data_start = header_start + header_len;
  const uint64_t data_bytes = count * entry->size;
  if (bytes.size() - data_start < data_bytes) {
    *error = ".npy data is truncated: expected " + std::to_string(data_bytes) + " bytes, found " +
             std::to_string(bytes.size() - data_start);
    return false;
  }
  out->type = entry->type;
  out->data.assign(bytes.begin() + data_start, bytes.begin() + data_start + data_bytes);
  return true;
}

bool ReadNpyFile(const std::string& path, NpyArray* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!ParseNpy(bytes, out, error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

std::vector<uint8_t> SerializeNpy(KilnType type, const std::vector<int64_t>& shape, const void* data,
                                  size_t bytes) {
  std::string header = "{'descr': '" + NpyDescr(type) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    header += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) header += ",";
    if (i + 1 < shape.size()) header += " ";
  }
  header += "), }";
  // Pad with spaces so that the data starts at a multiple of 64, ending the header with '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  const auto* begin = static_cast<const uint8_t*>(data);
  out.insert(out.end(), begin, begin + bytes);
  return out;
}

bool Dequantize(const NpyArray& quantized, const Quantization& quantization, NpyArray* out,
                std::string* error) {
  const size_t count_scales = quantization.scales.size();
  if (count_scales == 0 || quantization.zero_points.size() != count_scales) {
    *error = "the tensor is not quantized";
    return false;
  }
  size_t element = 0;
  for (const DescrEntry& e : kDescrs) {
    if (e.type == quantized.type) element = e.size;
  }
  int64_t (*load)(const uint8_t*) = nullptr;
  switch (quantized.type) {
    case kKilnInt8:
      load = [](const uint8_t* p) -> int64_t { return static_cast<int8_t>(*p); };
      break;
    case kKilnUInt8:
      load = [](const uint8_t* p) -> int64_t { return *p; };
      break;
    case kKilnInt16:
      load = [](const uint8_t* p) -> int64_t { return LoadLittle<int16_t>(p); };
      break;
    case kKilnUInt16:
      load = [](const uint8_t* p) -> int64_t { return LoadLittle<uint16_t>(p); };
      break;
    case kKilnInt32:
      load = [](const uint8_t* p) -> int64_t { return LoadLittle<int32_t>(p); };
      break;
    case kKilnInt64:
      load = [](const uint8_t* p) -> int64_t { return LoadLittle<int64_t>(p); };
      break;
    default:
      *error = std::string("cannot dequantize a ") + KilnTypeGetName(quantized.type) + " tensor";
      return false;
  }
  // Element i lies at index (i / inner) % channels of the quantized dimension, C order.
  size_t channels = 1, inner = 1;
  if (count_scales > 1) {
    const int dim = quantization.quantized_dimension;
    if (dim < 0 || static_cast<size_t>(dim) >= quantized.shape.size() ||
        quantized.shape[static_cast<size_t>(dim)] != static_cast<int64_t>(count_scales)) {
      *error = std::to_string(count_scales) + " scales do not match dimension " + std::to_string(dim) +
               " of the shape";
      return false;
    }
    channels = count_scales;
    for (size_t d = static_cast<size_t>(dim) + 1; d < quantized.shape.size(); ++d) {
      inner *= static_cast<size_t>(quantized.shape[d]);
    }
  }
  const size_t count = quantized.data.size() / element;
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t c = channels == 1 ? 0 : (i / inner) % channels;
    const double q = static_cast<double>(load(quantized.data.data() + i * element));
    values[i] = static_cast<float>(static_cast<double>(quantization.scales[c]) *
                                   (q - static_cast<double>(quantization.zero_points[c])));
  }
  out->type = kKilnFloat32;
  out->shape = quantized.shape;
  out->data.resize(count * sizeof(float));
  std::memcpy(out->data.data(), values.data(), out->data.size());
  return true;
}

bool WriteNpyFile(const std::string& path, KilnType type, const std::vector<int64_t>& shape, const void* data,
                  size_t bytes, std::string* error) {
  if (NpyDescr(type).empty()) {
    *error = std::string("cannot write ") + KilnTypeGetName(type) + " tensors as .npy";
    return false;
  }
  const std::vector<uint8_t> serialized = SerializeNpy(type, shape, data, bytes);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(serialized.data()),
            static_cast<std::streamsize>(serialized.size()));
  if (!out) {
    *error = path + ": cannot write";
    return false;
  }
  return true;
}

}  // namespace kiln
