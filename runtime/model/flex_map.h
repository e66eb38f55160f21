// Opening a FlexBuffers map from a model file's bytes (custom op options), for Kiln's own readers of them: the
// C accessors of kiln/flex.h and the kernel op's options-to-globals (runtime/device/kernel_script.cc).
#ifndef KILN_RUNTIME_MODEL_FLEX_MAP_H_
#define KILN_RUNTIME_MODEL_FLEX_MAP_H_

#include <cstddef>

#include "flatbuffers/flexbuffers.h"

namespace kiln {

// Verifies `data` with the FlexBuffers verifier and finds its root map, with the checks the verifier leaves out:
// as many keys as values, and every key's terminator inside the buffer (keys are read as C strings). An empty
// buffer reads as an empty map (*empty set: an op without options). False for anything else.
bool OpenFlexMap(const void* data, size_t size, flexbuffers::Map* out, bool* empty);

}  // namespace kiln

#endif  // KILN_RUNTIME_MODEL_FLEX_MAP_H_
