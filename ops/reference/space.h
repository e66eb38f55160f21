// Ops that move an NHWC tensor's elements between space and depth: DEPTH_TO_SPACE and SPACE_TO_DEPTH. Shape logic
// for Prepare and byte-moving kernels for elements of any size.
#ifndef KILN_OPS_REFERENCE_SPACE_H_
#define KILN_OPS_REFERENCE_SPACE_H_

#include <cstddef>
#include <cstdint>
#include <string>

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

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_SPACE_H_
