// Ops that cut a tensor into pieces along an axis or repeat it: SPLIT, SPLIT_V, UNPACK (split), PACK (join),
// TILE and BROADCAST_TO (repeat). Shape logic for Prepare and byte-moving kernels for elements of any size.
#ifndef KILN_OPS_REFERENCE_SPLIT_PACK_H_
#define KILN_OPS_REFERENCE_SPLIT_PACK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/reference/common.h"

namespace kiln::ops::reference {

// A tensor seen as [outer, axis, inner] around one axis, the axis cut into pieces of `sizes`.
struct AxisPieces {
  int64_t outer = 1;
  int64_t inner = 1;
  std::vector<int64_t> sizes;  // per piece, along the axis
};

// Normalises `axis` (negative counts from the back) into [0, rank); false with a reason otherwise.
bool NormalizeAxis(int64_t axis, int64_t rank, int64_t* out, std::string* error);

// SPLIT: `num_splits` equal pieces along `axis` (normalised); the axis must divide evenly.
bool MakeSplit(const Dims& input, int64_t axis, int64_t num_splits, AxisPieces* pieces, std::string* error);
// SPLIT_V: pieces of `size_splits`, one of which may be -1 (the rest of the axis); the sizes must cover the
// axis.
bool MakeSplitV(const Dims& input, int64_t axis, const std::vector<int64_t>& size_splits, AxisPieces* pieces,
                std::string* error);
// The shape of piece `i`: the input's with the axis replaced by its size.
Dims PieceShape(const Dims& input, int64_t axis, int64_t size);

// Copies each piece of `input` to outputs[i] (SPLIT, SPLIT_V, UNPACK).
void SplitCopy(const AxisPieces& pieces, size_t element_size, const void* input, void* const* outputs);
// Joins inputs[i] (each of pieces.sizes[i] along the axis) into `output` (PACK).
void JoinCopy(const AxisPieces& pieces, size_t element_size, const void* const* inputs, void* output);

// PACK: `count` inputs of shape `input` stacked along a new axis `axis` in [-(rank + 1), rank].
bool MakePack(const Dims& input, int64_t axis, int64_t count, AxisPieces* pieces, Dims* output,
              std::string* error);
// UNPACK: `count` outputs along `axis` in [-rank, rank) (whose size must be `count`), each without that axis.
bool MakeUnpack(const Dims& input, int64_t axis, int64_t count, AxisPieces* pieces, Dims* output,
                std::string* error);

// TILE and BROADCAST_TO: output element at coordinates c takes the input element at c[d] % input_dims[d] (the
// input's dimensions aligned to the output's rank: 1s in front).
struct RepeatParams {
  Dims input_dims;
  Dims output_dims;
};

// TILE: output dim d = input dim d * multiples[d]; one non-negative multiple per input dimension.
bool MakeTile(const Dims& input, const std::vector<int64_t>& multiples, RepeatParams* params,
              std::string* error);
// BROADCAST_TO: `shape` has at least the input's rank; each input dimension (aligned to the back) is 1 or
// equal.
bool MakeBroadcastTo(const Dims& input, const std::vector<int64_t>& shape, RepeatParams* params,
                     std::string* error);
void RepeatCopy(const RepeatParams& params, size_t element_size, const void* input, void* output);

}  // namespace kiln::ops::reference

#endif  // KILN_OPS_REFERENCE_SPLIT_PACK_H_
