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
  // block_size divides height, so it fits an int and its square fits int64; the depth times it may not.
  const int64_t block_area = block_size * block_size;
  if (input[3] > 2147483647 / block_area) {
    *error = "output depth " + std::to_string(input[3]) + " * " + std::to_string(block_area) + " is too large";
    return false;
  }
  *output = {input[0], input[1] / block_size, input[2] / block_size, input[3] * block_area};
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

namespace {

// The checks both ops share: rank 3 or 4, `block` and `pads` sized for rank - 2 spatial dimensions, blocks >= 1
// and pads >= 0 (`pad_name`: paddings or crops). Fills the rank-4 view of the input and the blocks and pads.
bool CheckBatchSpace(const Dims& input, const std::vector<int64_t>& block, const std::vector<int64_t>& pads,
                     const char* pad_name, BatchSpaceParams* p, std::string* error) {
  if (input.size() != 3 && input.size() != 4) {
    *error = "input must have rank 3 or 4, not " + std::to_string(input.size());
    return false;
  }
  const size_t spatial = input.size() - 2;
  if (block.size() != spatial || pads.size() != 2 * spatial) {
    *error = "block_shape has " + std::to_string(block.size()) + " entries and " + pad_name + " " +
             std::to_string(pads.size()) + "; expected " + std::to_string(spatial) + " and " +
             std::to_string(2 * spatial) + " for a rank-" + std::to_string(input.size()) + " input";
    return false;
  }
  *p = BatchSpaceParams();
  p->input = input;
  if (input.size() == 3) p->input.insert(p->input.begin() + 2, 1);
  for (size_t d = 0; d < spatial; ++d) {
    if (block[d] < 1) {
      *error = "block_shape[" + std::to_string(d) + "] is " + std::to_string(block[d]) + "; it must be at least 1";
      return false;
    }
    if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) {
      *error = std::string(pad_name) + " for spatial dimension " + std::to_string(d) + " are (" +
               std::to_string(pads[2 * d]) + ", " + std::to_string(pads[2 * d + 1]) + "); they must be >= 0";
      return false;
    }
    p->block[d] = block[d];
    p->before[d] = pads[2 * d];
  }
  return true;
}

// The output in the input's rank (rank 3: without the width of 1).
Dims InInputRank(const Dims& rank4, size_t rank) {
  Dims out = rank4;
  if (rank == 3) out.erase(out.begin() + 2);
  return out;
}

constexpr int64_t kMaxDim = 2147483647;

}  // namespace

bool MakeSpaceToBatch(const Dims& input, const std::vector<int64_t>& block, const std::vector<int64_t>& paddings,
                      BatchSpaceParams* p, Dims* output, std::string* error) {
  if (!CheckBatchSpace(input, block, paddings, "paddings", p, error)) return false;
  p->output = p->input;
  int64_t batch = p->input[0];
  for (size_t d = 0; d < input.size() - 2; ++d) {
    // Dimensions and paddings are within int32, so the sum fits.
    const int64_t padded = p->input[1 + d] + paddings[2 * d] + paddings[2 * d + 1];
    if (padded % block[d] != 0) {
      *error = "padded spatial dimension " + std::to_string(d) + " (" + std::to_string(padded) +
               ") is not a multiple of block_shape[" + std::to_string(d) + "] " + std::to_string(block[d]);
      return false;
    }
    p->output[1 + d] = padded / block[d];
    if (batch > kMaxDim / block[d]) {
      *error = "the output batch (input batch times the blocks) is too large";
      return false;
    }
    batch *= block[d];
  }
  p->output[0] = batch;
  *output = InInputRank(p->output, input.size());
  return true;
}

bool MakeBatchToSpace(const Dims& input, const std::vector<int64_t>& block, const std::vector<int64_t>& crops,
                      BatchSpaceParams* p, Dims* output, std::string* error) {
  if (!CheckBatchSpace(input, block, crops, "crops", p, error)) return false;
  p->output = p->input;
  int64_t batch = p->input[0];
  for (size_t d = 0; d < input.size() - 2; ++d) {
    if (batch % block[d] != 0) {
      *error = "input batch " + std::to_string(p->input[0]) + " is not a multiple of the product of block_shape";
      return false;
    }
    batch /= block[d];
    // Both factors are within int32, so the product fits int64.
    const int64_t size = p->input[1 + d] * block[d] - crops[2 * d] - crops[2 * d + 1];
    if (size < 0) {
      *error = "crops for spatial dimension " + std::to_string(d) + " (" + std::to_string(crops[2 * d]) + ", " +
               std::to_string(crops[2 * d + 1]) + ") exceed its size " + std::to_string(p->input[1 + d] * block[d]) +
               " after the blocks";
      return false;
    }
    p->output[1 + d] = size;
  }
  p->output[0] = batch;
  *output = InInputRank(p->output, input.size());
  return true;
}

void SpaceToBatch(const BatchSpaceParams& p, size_t element_size, const void* pad, const void* in, void* out) {
  const int64_t in_batch = p.input[0], in_height = p.input[1], in_width = p.input[2];
  const int64_t out_batch = p.output[0], out_height = p.output[1], out_width = p.output[2];
  const size_t run = static_cast<size_t>(p.input[3]) * element_size;
  if (run == 0) return;
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  for (int64_t ob = 0; ob < out_batch; ++ob) {
    const int64_t n = ob % in_batch;
    const int64_t offset = ob / in_batch;
    const int64_t sh = offset / p.block[1], sw = offset % p.block[1];
    for (int64_t oh = 0; oh < out_height; ++oh) {
      const int64_t h = oh * p.block[0] + sh - p.before[0];
      for (int64_t ow = 0; ow < out_width; ++ow) {
        const int64_t w = ow * p.block[1] + sw - p.before[1];
        if (h < 0 || h >= in_height || w < 0 || w >= in_width) {
          for (size_t i = 0; i < run; i += element_size) std::memcpy(dst + i, pad, element_size);
        } else {
          std::memcpy(dst, src + static_cast<size_t>((n * in_height + h) * in_width + w) * run, run);
        }
        dst += run;
      }
    }
  }
}

void BatchToSpace(const BatchSpaceParams& p, size_t element_size, const void* in, void* out) {
  const int64_t in_height = p.input[1], in_width = p.input[2];
  const int64_t out_batch = p.output[0], out_height = p.output[1], out_width = p.output[2];
  const size_t run = static_cast<size_t>(p.input[3]) * element_size;
  if (run == 0) return;
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  for (int64_t n = 0; n < out_batch; ++n) {
    for (int64_t h = 0; h < out_height; ++h) {
      const int64_t ph = h + p.before[0];
      for (int64_t w = 0; w < out_width; ++w) {
        const int64_t pw = w + p.before[1];
        const int64_t ib = ((ph % p.block[0]) * p.block[1] + pw % p.block[1]) * out_batch + n;
        std::memcpy(
            dst, src + static_cast<size_t>((ib * in_height + ph / p.block[0]) * in_width + pw / p.block[1]) * run, run);
        dst += run;
      }
    }
  }
}

bool MirrorPadShape(const Dims& input, const std::vector<int64_t>& before, const std::vector<int64_t>& after,
                    bool reflect, Dims* output, std::string* error) {
  if (before.size() != input.size() || after.size() != input.size()) {
    *error = "paddings has " + std::to_string(before.size()) + " rows; expected one per input dimension (" +
             std::to_string(input.size()) + ")";
    return false;
  }
  *output = input;
  for (size_t d = 0; d < input.size(); ++d) {
    const int64_t limit = reflect ? input[d] - 1 : input[d];
    if (before[d] < 0 || after[d] < 0 || before[d] > limit || after[d] > limit) {
      *error = "paddings (" + std::to_string(before[d]) + ", " + std::to_string(after[d]) + ") for dimension " +
               std::to_string(d) + " of size " + std::to_string(input[d]) + " must be in [0, " +
               std::to_string(limit < 0 ? 0 : limit) + "] (" + (reflect ? "REFLECT: dim - 1" : "SYMMETRIC: dim") + ")";
      return false;
    }
    (*output)[d] = input[d] + before[d] + after[d];
  }
  return true;
}

void MirrorPad(const Dims& input, const std::vector<int64_t>& before, const std::vector<int64_t>& after, bool reflect,
               size_t element_size, const void* in, void* out) {
  const size_t rank = input.size();
  Dims output(rank);
  for (size_t d = 0; d < rank; ++d) output[d] = input[d] + before[d] + after[d];
  const int64_t count = NumElements(output);
  if (count == 0) return;
  // Input strides, and the output coordinate walked in order.
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * input[d];
  std::vector<int64_t> coord(rank, 0);
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  for (int64_t k = 0; k < count; ++k) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += MirrorIndex(coord[d], input[d], before[d], reflect) * stride[d];
    std::memcpy(dst, src + static_cast<size_t>(offset) * element_size, element_size);
    dst += element_size;
    for (size_t d = rank; d-- > 0;) {
      if (++coord[d] < output[d]) break;
      coord[d] = 0;
    }
  }
}

void Reverse(const Dims& input, int64_t first, int64_t last, size_t element_size, const void* in, void* out) {
  const int64_t rank = static_cast<int64_t>(input.size());
  int64_t outer = 1, block = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (first <= last && d < first) {
      outer *= input[d];
    } else if (first <= last && d <= last) {
      block *= input[d];
    } else {
      inner *= input[d];
    }
  }
  const size_t run = static_cast<size_t>(inner) * element_size;
  if (run == 0 || outer == 0 || block == 0) return;
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t m = 0; m < block; ++m) {
      std::memcpy(dst, src + static_cast<size_t>(o * block + (block - 1 - m)) * run, run);
      dst += run;
    }
  }
}

}  // namespace kiln::ops::reference
