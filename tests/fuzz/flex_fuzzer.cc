// libFuzzer target: the kiln/flex.h accessors on arbitrary bytes (custom op options come from model files)
// must return a status and never read outside the input. Strings and keys they hand out must end inside it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kiln/flex.h"

namespace {

void CheckInside(const uint8_t* data, size_t size, const char* text) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(text);
  if (p < data || p + std::strlen(text) >= data + size) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int count = 0;
  if (KilnFlexMapSize(data, size, &count) != kKilnOk) return 0;
  for (int i = 0; i < count && i < 64; ++i) {
    const char* key = nullptr;
    KilnFlexValueKind kind;
    if (KilnFlexMapEntry(data, size, i, &key, &kind) != kKilnOk) continue;
    CheckInside(data, size, key);
    float f;
    int64_t n;
    bool b;
    const char* s = nullptr;
    float vector[8];
    int length;
    KilnFlexMapGetFloat(data, size, key, &f);
    KilnFlexMapGetInt(data, size, key, &n);
    KilnFlexMapGetBool(data, size, key, &b);
    if (KilnFlexMapGetString(data, size, key, &s) == kKilnOk) CheckInside(data, size, s);
    KilnFlexMapGetFloatVector(data, size, key, vector, 8, &length);
  }
  return 0;
}
