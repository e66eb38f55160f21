// The C accessors of kiln/flex.h over FlexBuffers maps (custom op options).
//
// Custom options come straight from a model file, so every call verifies the bytes with the FlexBuffers
// verifier before reading anything, and adds the checks the verifier leaves out (a map whose keys and
// values vectors differ in length).
#include "kiln/flex.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "flatbuffers/flexbuffers.h"
#include "runtime/model/flex_map.h"

namespace kiln {

bool OpenFlexMap(const void* data, size_t size, flexbuffers::Map* out, bool* empty) {
  *empty = false;
  if (size == 0) {
    *empty = true;
    return true;
  }
  if (data == nullptr || size >= FLATBUFFERS_MAX_BUFFER_SIZE) return false;
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  // The tracker (one byte per input byte) keeps verification linear when values share sub-vectors.
  std::vector<uint8_t> reuse_tracker;
  if (!flexbuffers::VerifyBuffer(bytes, size, &reuse_tracker)) return false;
  flexbuffers::Reference root = flexbuffers::GetRoot(bytes, size);
  if (!root.IsMap()) return false;
  flexbuffers::Map map = root.AsMap();
  if (map.Keys().size() != map.size()) return false;
  // The verifier checks that a key starts inside the buffer, not that its terminator does: every key is
  // handed out as a C string (KilnFlexMapEntry) and compared with strcmp, so each must end inside the buffer.
  const uint8_t* end = bytes + size;
  flexbuffers::TypedVector keys = map.Keys();
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint8_t* key = reinterpret_cast<const uint8_t*>(keys[i].AsKey());
    if (key < bytes || key >= end || std::memchr(key, 0, static_cast<size_t>(end - key)) == nullptr) return false;
  }
  *out = map;
  return true;
}

namespace {

// The value stored under `key`, found by a linear scan (maps are small, and a scan does not depend on the
// keys being sorted, which the verifier does not check).
bool Find(const void* data, size_t size, const char* key, flexbuffers::Reference* out) {
  if (key == nullptr) return false;
  flexbuffers::Map map = flexbuffers::Map::EmptyMap();
  bool empty = false;
  if (!OpenFlexMap(data, size, &map, &empty) || empty) return false;
  flexbuffers::TypedVector keys = map.Keys();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (std::strcmp(keys[i].AsKey(), key) == 0) {
      *out = map.Values()[i];
      return true;
    }
  }
  return false;
}

bool IsNumber(const flexbuffers::Reference& value) {
  return value.IsInt() || value.IsUInt() || value.IsFloat();
}

KilnFlexValueKind KindOf(const flexbuffers::Reference& value) {
  if (value.IsNull()) return kKilnFlexNull;
  if (value.IsBool()) return kKilnFlexBool;
  if (value.IsInt() || value.IsUInt()) return kKilnFlexInt;
  if (value.IsFloat()) return kKilnFlexFloat;
  if (value.IsString()) return kKilnFlexString;
  if (value.IsMap()) return kKilnFlexOther;
  if (value.IsVector() || value.IsTypedVector() || value.IsFixedTypedVector()) return kKilnFlexVector;
  return kKilnFlexOther;
}

}  // namespace
}  // namespace kiln

extern "C" {

KILN_CAPI_EXPORT KilnStatus KilnFlexMapGetFloat(const void* data, size_t size, const char* key, float* out) {
  flexbuffers::Reference value;
  if (out == nullptr || !kiln::Find(data, size, key, &value) || !kiln::IsNumber(value)) {
    return kKilnInvalidArgument;
  }
  *out = value.IsFloat()
             ? static_cast<float>(value.AsDouble())
             : (value.IsUInt() ? static_cast<float>(value.AsUInt64()) : static_cast<float>(value.AsInt64()));
  return kKilnOk;
}

KILN_CAPI_EXPORT KilnStatus KilnFlexMapGetInt(const void* data, size_t size, const char* key, int64_t* out) {
  flexbuffers::Reference value;
  if (out == nullptr || !kiln::Find(data, size, key, &value)) return kKilnInvalidArgument;
  if (value.IsBool()) {
    *out = value.AsBool() ? 1 : 0;
  } else if (value.IsInt()) {
    *out = value.AsInt64();
  } else if (value.IsUInt()) {
    uint64_t u = value.AsUInt64();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return kKilnInvalidArgument;
    *out = static_cast<int64_t>(u);
  } else {
    return kKilnInvalidArgument;
  }
  return kKilnOk;
}

KILN_CAPI_EXPORT KilnStatus KilnFlexMapGetBool(const void* data, size_t size, const char* key, bool* out) {
  flexbuffers::Reference value;
  if (out == nullptr || !kiln::Find(data, size, key, &value)) return kKilnInvalidArgument;
  // Some writers store flags as integers; 0 and non-zero read as false and true, as in LiteRT.
  if (value.IsBool()) {
    *out = value.AsBool();
  } else if (value.IsInt()) {
    *out = value.AsInt64() != 0;
  } else if (value.IsUInt()) {
    *out = value.AsUInt64() != 0;
  } else {
    return kKilnInvalidArgument;
  }
  return kKilnOk;
}

KILN_CAPI_EXPORT KilnStatus KilnFlexMapGetString(const void* data, size_t size, const char* key,
                                                 const char** out) {
  flexbuffers::Reference value;
  if (out == nullptr || !kiln::Find(data, size, key, &value) || !value.IsString())
    return kKilnInvalidArgument;
  // The verifier checks that the string's bytes and one more lie inside the buffer, not that that byte is the
  // terminator (found by flex_fuzzer's campaign: a string of length 33 with no NUL after it): handed out as a C
  // string, it must end where its length says, inside the buffer.
  const flexbuffers::String text = value.AsString();
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  const uint8_t* begin = reinterpret_cast<const uint8_t*>(text.c_str());
  if (begin < bytes || text.length() >= static_cast<size_t>(bytes + size - begin) || begin[text.length()] != 0) {
    return kKilnInvalidArgument;
  }
  *out = text.c_str();
  return kKilnOk;
}

KILN_CAPI_EXPORT KilnStatus KilnFlexMapSize(const void* data, size_t size, int* out_count) {
  if (out_count == nullptr) return kKilnInvalidArgument;
  flexbuffers::Map map = flexbuffers::Map::EmptyMap();
  bool empty = false;
  if (!kiln::OpenFlexMap(data, size, &map, &empty)) return kKilnInvalidArgument;
  if (empty) {
    *out_count = 0;
    return kKilnOk;
  }
  if (map.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return kKilnInvalidArgument;
  *out_count = static_cast<int>(map.size());
  return kKilnOk;
}

KILN_CAPI_EXPORT KilnStatus KilnFlexMapEntry(const void* data, size_t size, int index, const char** out_key,
                                             KilnFlexValueKind* out_kind) {
  if (out_key == nullptr || out_kind == nullptr || index < 0) return kKilnInvalidArgument;
  flexbuffers::Map map = flexbuffers::Map::EmptyMap();
  bool empty = false;
  if (!kiln::OpenFlexMap(data, size, &map, &empty) || empty) return kKilnInvalidArgument;
  if (static_cast<size_t>(index) >= map.size()) return kKilnInvalidArgument;
  *out_key = map.Keys()[static_cast<size_t>(index)].AsKey();
  *out_kind = kiln::KindOf(map.Values()[static_cast<size_t>(index)]);
  return kKilnOk;
}

KILN_CAPI_EXPORT KilnStatus KilnFlexMapGetFloatVector(const void* data, size_t size, const char* key,
                                                      float* out, int capacity, int* out_length) {
  if (out_length == nullptr || capacity < 0 || (out == nullptr && capacity > 0)) return kKilnInvalidArgument;
  flexbuffers::Reference value;
  if (!kiln::Find(data, size, key, &value) || value.IsMap()) return kKilnInvalidArgument;
  auto copy = [&](const auto& vector) {
    size_t length = vector.size();
    if (length > static_cast<size_t>(std::numeric_limits<int>::max())) return kKilnInvalidArgument;
    for (size_t i = 0; i < length; ++i) {
      flexbuffers::Reference element = vector[i];
      if (!kiln::IsNumber(element) && !element.IsBool()) return kKilnInvalidArgument;
    }
    for (size_t i = 0; i < length && i < static_cast<size_t>(capacity); ++i) {
      flexbuffers::Reference element = vector[i];
      out[i] =
          element.IsFloat() ? static_cast<float>(element.AsDouble()) : static_cast<float>(element.AsInt64());
      if (element.IsUInt()) out[i] = static_cast<float>(element.AsUInt64());
    }
    *out_length = static_cast<int>(length);
    return kKilnOk;
  };
  if (value.IsFixedTypedVector()) return copy(value.AsFixedTypedVector());
  if (value.IsTypedVector()) return copy(value.AsTypedVector());
  if (value.IsVector()) return copy(value.AsVector());
  return kKilnInvalidArgument;
}

}  // extern "C"
