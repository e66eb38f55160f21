// Ops that move an NHWC tensor's elements between space and depth: DEPTH_TO_SPACE and SPACE_TO_DEPTH. Shape logic
// for Prepare and byte-moving kernels for elements of any size.
#ifndef KILN_OPS_REFERENCE_SPACE_H_
#define KILN_OPS_REFERENCE_SPACE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

// DEPTH_TO_SPACE's output shape for a rank-4 NHWC `input`: [N, H * b, W * b, C / (b * b)]. False with a reason
// where block_size is below 1 or C is not a multiple of b * b.
bool DepthToSpaceShape(const Dims& input, int64_t block_size, Dims* output, std::string* error);
// SPACE_TO_DEPTH's output shape: [N, H / b, W / b, C * b * b]; b must be at least 1 and divide H and W.
bool SpaceToDepthShape(const Dims& input, int64_t block_size, Dims* output, std::string* error);

// DEPTH_TO_SPACE in depth-column-row order: output[n, h, w, c] = input[n, h / b, w / b, ((h % b) * b + w % b) *
// C_out + c], for elements of `element_size` bytes. `input` is the NHWC input shape.
void DepthToSpace(const Dims& input, int64_t block_size, size_t element_size, const void* in, void* out);
// SPACE_TO_DEPTH, the inverse: output[n, h, w, (dh * b + dw) * C + c] = input[n, h * b + dh, w * b + dw, c].
void SpaceToDepth(const Dims& input, int64_t block_size, size_t element_size, const void* in, void* out);

// SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND on a rank-3 ([N, H, C]) or rank-4 ([N, H, W, C]) input, seen as rank
// 4 (a rank-3 input gets W = 1, block 1 and no padding there).
struct BatchSpaceParams {
  Dims input;   // rank 4
  Dims output;  // rank 4
  int64_t block[2] = {1, 1};
  int64_t before[2] = {0, 0};  // SPACE_TO_BATCH_ND: leading padding; BATCH_TO_SPACE_ND: leading crop
};

// SPACE_TO_BATCH_ND: `block` (>= 1, one per spatial dimension: rank - 2 of them) and `paddings` ([before, after]
// per spatial dimension, >= 0); each padded spatial dimension must be a multiple of its block. The output is
// [N * prod(block), padded / block..., C] (`output` in the input's rank). False with a reason otherwise.
bool MakeSpaceToBatch(const Dims& input, const std::vector<int64_t>& block, const std::vector<int64_t>& paddings,
                      BatchSpaceParams* params, Dims* output, std::string* error);
// BATCH_TO_SPACE_ND: `block` (>= 1) and `crops` (>= 0); N must be a multiple of prod(block) and the crops leave
// each spatial dimension (dim * block - before - after) at least 0.
bool MakeBatchToSpace(const Dims& input, const std::vector<int64_t>& block, const std::vector<int64_t>& crops,
                      BatchSpaceParams* params, Dims* output, std::string* error);

// output[(sh * bw + sw) * N + n, h, w, c] = input[n, h * bh + sh - top, w * bw + sw - left, c], or the
// `pad` element (`element_size` bytes) where that falls in the padding.
void SpaceToBatch(const BatchSpaceParams& p, size_t element_size, const void* pad, const void* in, void* out);
// The inverse: output[n, h, w, c] = input[((h + top) % bh * bw + (w + left) % bw) * N + n, (h + top) / bh,
// (w + left) / bw, c].
void BatchToSpace(const BatchSpaceParams& p, size_t element_size, const void* in, void* out);

// MIRROR_PAD: each dimension d padded by before[d] and after[d] (>= 0) with its mirror image, leaving the edge out
// (`reflect`: padding at most dim - 1) or repeating it (symmetric: at most dim). Output dim + before + after.
bool MirrorPadShape(const Dims& input, const std::vector<int64_t>& before, const std::vector<int64_t>& after,
                    bool reflect, Dims* output, std::string* error);
// The input index an output index `i` of a dimension of size `dim` padded by `before` reads.
inline int64_t MirrorIndex(int64_t i, int64_t dim, int64_t before, bool reflect) {
  const int64_t j = i - before;
  if (j < 0) return reflect ? -j : -j - 1;
  if (j >= dim) return reflect ? 2 * dim - 2 - j : 2 * dim - 1 - j;
  return j;
}
void MirrorPad(const Dims& input, const std::vector<int64_t>& before, const std::vector<int64_t>& after, bool reflect,
               size_t element_size, const void* in, void* out);

// REVERSE_V2 over the consecutive axes [first, last] (0 <= first <= last < rank; first > last: none, a copy):
// reversing each of them is reversing their flattened block, so the tensor is seen as [outer, block, inner].
void Reverse(const Dims& input, int64_t first, int64_t last, size_t element_size, const void* in, void* out);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_SPACE_H_
