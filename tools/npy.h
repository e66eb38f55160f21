// Reading and writing NumPy's .npy format (version 1.0-3.0 read, 1.0 written), the arrays ML users have at
// hand.
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

// Quantization as a tensor carries it: one scale and zero point per index of `quantized_dimension`, or one
// for the whole tensor.
struct Quantization {
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int quantized_dimension = 0;
};

// The float32 array real = scale[c] * (q - zero_point[c]) of an integer array (int8, uint8, int16, uint16,
// int32, int64), c being the element's index along the quantized dimension (0 with one scale), computed in
// double and rounded once. False, with `*error`, for another type, no scales, or scales that do not match the
// shape.
bool Dequantize(const NpyArray& quantized, const Quantization& quantization, NpyArray* out,
                std::string* error);

}  // namespace kiln

#endif  // KILN_TOOLS_NPY_H_
