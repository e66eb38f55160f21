#include "ops/reference/space.h"

#include <cstring>

namespace kiln::ops::reference {

bool DepthToSpaceShape(const Dims& input, int64_t block_size, Dims* output, std::string* error) {
  if (input.size() != 4) {
    *error = "input must have rank 4 (NHWC), not " + std::to_string(input.size());
    return false;
  }
  if (block_size < 1) {
    *error = "block_size " + std::to_string(block_size) + " must be at least 1";
    return false;
  }
  // block_size fits an int, so its square fits int64.
  const int64_t block_area = block_size * block_size;
  if (input[3] % block_area != 0) {
    *error = "input depth " + std::to_string(input[3]) + " is not a multiple of block_size squared (" +
             std::to_string(block_area) + ")";
    return false;
  }
  *output = {input[0], input[1] * block_size, input[2] * block_size, input[3] / block_area};
  return true;
}

bool SpaceToDepthShape(const Dims& input, int64_t block_size, Dims* output, std::string* error) {
  if (input.size() != 4) {
    *error = "input must have rank 4 (NHWC), not " + std::to_string(input.size());
    return false;
  }
  if (block_size < 1) {
    *error = "block_size " + std::to_string(block_size) + " must be at least 1";
    return false;
  }
  if (input[1] % block_size != 0 || input[2] % block_size != 0) {
    *error = "input height " + std::to_string(input[1]) + " and width " + std::to_string(input[2]) +
             " must be multiples of block_size " + std::to_string(block_size);
    return false;
  }
  *output = {input[0], input[1] / block_size, input[2] / block_size, input[3] * block_size * block_size};
  return true;
}

void DepthToSpace(const Dims& input, int64_t block_size, size_t element_size, const void* in, void* out) {
  const int64_t batch = input[0], in_height = input[1], in_width = input[2], in_depth = input[3];
  const int64_t b = block_size;
  const int64_t out_depth = in_depth / (b * b);
  const size_t run = static_cast<size_t>(out_depth) * element_size;  // one output pixel's channels
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  if (run == 0) return;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t h = 0; h < in_height * b; ++h) {
      for (int64_t w = 0; w < in_width * b; ++w) {
        const int64_t channel = ((h % b) * b + w % b) * out_depth;
        const int64_t offset = ((n * in_height + h / b) * in_width + w / b) * in_depth + channel;
        std::memcpy(dst, src + static_cast<size_t>(offset) * element_size, run);
        dst += run;
      }
    }
  }
}

void SpaceToDepth(const Dims& input, int64_t block_size, size_t element_size, const void* in, void* out) {
  const int64_t batch = input[0], in_height = input[1], in_width = input[2], in_depth = input[3];
  const int64_t b = block_size;
  const size_t run = static_cast<size_t>(in_depth) * element_size;  // one input pixel's channels
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  if (run == 0) return;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t h = 0; h < in_height / b; ++h) {
      for (int64_t w = 0; w < in_width / b; ++w) {
        for (int64_t dh = 0; dh < b; ++dh) {
          for (int64_t dw = 0; dw < b; ++dw) {
            const int64_t offset = ((n * in_height + h * b + dh) * in_width + w * b + dw) * in_depth;
            std::memcpy(dst, src + static_cast<size_t>(offset) * element_size, run);
            dst += run;
          }
        }
      }
    }
  }
}

}  // namespace kiln::ops::reference
