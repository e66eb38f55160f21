// The XNNPACK host engine: runs of consecutive float32 builtin nodes that XNNPACK supports become one XNNPACK
// runtime, built at AllocateTensors with the weights packed once (read in place from the model's mapped file)
// and run on the interpreter's thread pool. Everything else stays on the reference kernels (ops/reference),
// which remain the oracle; Supports says why a node is refused.
#ifndef KILN_OPS_XNNPACK_XNNPACK_ENGINE_H_
#define KILN_OPS_XNNPACK_XNNPACK_ENGINE_H_

#include <memory>

#include "runtime/host_engine.h"

namespace kiln {
namespace ops {

// A HostEngineFactory. Returns null (the reference kernels run everything) when XNNPACK cannot initialise on
// this CPU.
std::unique_ptr<HostEngine> CreateXnnpackEngine(int num_threads);

}  // namespace ops
}  // namespace kiln

#endif  // KILN_OPS_XNNPACK_XNNPACK_ENGINE_H_
