// Small helpers shared by the runtime: error reporting, shapes, aligned memory, int arrays, type names.
#include "runtime/core.h"

#include <cstdint>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "runtime/model/limits.h"

namespace kiln {

std::string Printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  auto escape = [&out](unsigned char u) {
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02x", u);
    out += hex;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char u = static_cast<unsigned char>(text[i]);
    const unsigned char next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (u < 0x20 || u == 0x7f) {
      escape(u);
    } else if (u == 0xc2 && next >= 0x80 && next <= 0x9f) {  // a C1 control in UTF-8
      escape(u);
      escape(next);
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

void ReportV(KilnErrorReporter reporter, void* user_data, const char* format, va_list args) {
  if (reporter != nullptr) {
    reporter(user_data, format, args);
    return;
  }
  // Messages name tensors, ops and kernels read from files: printed escaped.
  char buffer[2048];
  std::vsnprintf(buffer, sizeof buffer, format, args);
  std::fprintf(stderr, "kiln: %s\n", Printable(buffer).c_str());
}

void Report(KilnErrorReporter reporter, void* user_data, const char* format, ...) {
  va_list args;
  va_start(args, format);
  ReportV(reporter, user_data, format, args);
  va_end(args);
}

int64_t ElementCount(const std::vector<int>& dims) {
  int64_t count = 1;
  for (int d : dims) {
    if (d < 0) return -1;
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) return -1;
    count *= d;
  }
  return count;
}

void* AlignedAlloc(size_t bytes) {
  const size_t alignment = bytes >= kPageAlignment ? kPageAlignment : kTensorAlignment;
  if (bytes > SIZE_MAX - alignment) return nullptr;
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
}

bool SetTensorShape(KilnTensor* tensor, const int* dims, int num_dims, std::string* error) {
  std::vector<int> shape(dims, dims + num_dims);
  const int64_t count = ElementCount(shape);
  if (count < 0) {
    *error = "shape has a negative dimension or too many elements";
    return false;
  }
  size_t element = TypeSize(tensor->type);
  if (element == 0 && tensor->type != kKilnString && tensor->type != kKilnNoType) element = 1;
  // A resource tensor holds the int32 id of a resource variable (VAR_HANDLE), as in LiteRT.
  if (tensor->type == kKilnResource) element = sizeof(int32_t);
  // The one memory rule (MaxTensorBytes, model.h): checked before anything is allocated for the tensor.
  const uint64_t limit = MaxTensorBytes();
  const uint64_t unit = element == 0 ? 1 : element;
  if (static_cast<uint64_t>(count) > limit / unit ||
      static_cast<uint64_t>(count) > std::numeric_limits<size_t>::max() / unit) {
    std::string text = "[";
    for (size_t d = 0; d < shape.size(); ++d) text += (d ? "," : "") + std::to_string(shape[d]);
    *error = "shape " + text + "] needs more than " + std::to_string(limit) + " bytes, the limit on one tensor";
    return false;
  }
  tensor->dims = std::move(shape);
  tensor->bytes = static_cast<size_t>(count) * element;
  return true;
}

}  // namespace kiln

extern "C" {

const char* KilnVersion(void) { return KILN_VERSION_STRING; }

size_t KilnTypeGetSize(KilnType type) { return kiln::TypeSize(type); }

const char* KilnTypeGetName(KilnType type) { return kiln::TypeName(type); }

KilnIntArray* KilnIntArrayCreate(int size) {
  if (size < 0) return nullptr;
  const size_t bytes = sizeof(KilnIntArray) + sizeof(int) * static_cast<size_t>(size);
  auto* array = static_cast<KilnIntArray*>(std::malloc(bytes));
  if (array != nullptr) array->size = size;
  return array;
}

void KilnIntArrayFree(KilnIntArray* array) { std::free(array); }

}  // extern "C"
