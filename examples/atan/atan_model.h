// Builds the sample model: y = Atan(ADD(x, add_offset)), with the custom op's option "offset" = op_offset.
#ifndef KILN_EXAMPLES_ATAN_MODEL_H_
#define KILN_EXAMPLES_ATAN_MODEL_H_

#include <cstdint>
#include <vector>

namespace kiln::examples {

// The offset the sample model was trained with (the true value is 1.0).
constexpr float kTrainedOffset = 0.99999905f;

// The .tflite bytes; the committed examples/atan/atan.tflite is AtanModel(kTrainedOffset, 0.0f).
std::vector<uint8_t> AtanModel(float add_offset, float op_offset);

}  // namespace kiln::examples

#endif  // KILN_EXAMPLES_ATAN_MODEL_H_
