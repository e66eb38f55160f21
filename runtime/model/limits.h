// Kiln's one limit on tensor memory, shared by the model reader and the runtime.
#ifndef KILN_RUNTIME_MODEL_LIMITS_H_
#define KILN_RUNTIME_MODEL_LIMITS_H_

#include <cstdint>

namespace kiln {

// The one memory rule for tensors: no tensor's data (declared in the file, or sized by an op at Prepare or
// Invoke: TILE multiples, a FILL shape, ONE_HOT depth, ...) and no tensor arena may take more than
// MaxTensorBytes() bytes. Asking for more fails with a message naming the tensor before anything is allocated.
// 64 GiB by default, far above real models. Process-wide and internal (not in the C API): the interpreter fuzzer
// lowers it to its memory budget, as it does the WHILE iteration limit.
constexpr uint64_t kDefaultMaxTensorBytes = uint64_t{1} << 36;
uint64_t MaxTensorBytes();
void SetMaxTensorBytes(uint64_t bytes);

}  // namespace kiln

#endif  // KILN_RUNTIME_MODEL_LIMITS_H_
