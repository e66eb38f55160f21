// Reading and writing NumPy's .npy format (version 1.0-3.0 read, 1.0 written), the arrays ML users have at hand.
#ifndef KILN_TOOLS_NPY_H_
#define KILN_TOOLS_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/common.h"

namespace kiln {

struct NpyArray {
  KilnType type = kKilnNoType;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // little-endian, C order
};

// Parses .npy bytes. On failure returns false and sets `*error` (what is wrong and where in the header).
bool ParseNpy(const std::vector<uint8_t>& bytes, NpyArray* out, std::string* error);
bool ReadNpyFile(const std::string& path, NpyArray* out, std::string* error);

// Serialises an array as .npy version 1.0.
std::vector<uint8_t> SerializeNpy(KilnType type, const std::vector<int64_t>& shape, const void* data,
                                  size_t bytes);
bool WriteNpyFile(const std::string& path, KilnType type, const std::vector<int64_t>& shape, const void* data,
                  size_t bytes, std::string* error);

// The NumPy descr ("<f4", "|i1", ...) of a Kiln type, or "" if NumPy has none.
std::string NpyDescr(KilnType type);

}  // namespace kiln

#endif  // KILN_TOOLS_NPY_H_
