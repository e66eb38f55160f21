// Host engines: faster implementations of builtin ops on the host CPU (ops/xnnpack) that take over runs of
// consecutive builtin nodes after Prepare. The reference kernels stay the fallback and the oracle: a node the
// engine refuses runs on its reference kernel, and the interpreter records why.
//
// The interpreter knows no engine itself: the layer above hands a factory in (runtime/c_api.cc), as it hands
// in the builtin op table.
#ifndef KILN_RUNTIME_HOST_ENGINE_H_
#define KILN_RUNTIME_HOST_ENGINE_H_

#include <memory>
#include <string>
#include <vector>

#include "kiln/common.h"

namespace kiln {

class Interpreter;
struct Node;

// Nodes [first, last] of an interpreter, built for an engine.
class HostRun {
 public:
  virtual ~HostRun() = default;
  // Called after memory is planned, before the first Invoke: binds the tensors that cross the run's edges
  // (their data pointers stay put until the next AllocateTensors).
  virtual bool Bind(Interpreter* interpreter, std::string* error) = 0;
  virtual bool Invoke(std::string* error) = 0;
  // The kernel that runs node `node` of the run when it is not the engine's usual one (the xnnpack engine's
  // "kiln-vnni int8 gemm"); empty otherwise. The placement text names it.
  virtual std::string KernelOf(int node) const {
    (void)node;
    return std::string();
  }
  // The engine name the op profile gives this run's time when it is not the engine's own (a run mixing kernels:
  // "xnnpack+kiln-vnni"); null for the engine's name.
  virtual const char* ProfileEngine() const { return nullptr; }
  // The constant tensors the run copied into packed forms of its own when it was built and never reads again
  // (a convolution's filter and bias). The interpreter gives the model's pages that hold only such tensors
  // back to the system (ModelBytes::ReleasePages: they read the same if touched again).
  virtual std::vector<int> PackedConstants() const { return {}; }
  // Those of them whose memory must stay valid all the same while the run lives (XNNPACK's contract for a
  // value's static data, whatever it reads): a folded constant among them is not freed.
  virtual std::vector<int> PinnedConstants() const { return {}; }
  // Bytes of memory the run holds for tensors that pass between its own steps (not in the interpreter's arena;
  // KilnInterpreterGetArenaStats counts them). What an engine's library plans inside itself is not counted.
  virtual size_t WorkingBytes() const { return 0; }
};

// One engine instance serves one interpreter (it holds that interpreter's worker threads).
class HostEngine {
 public:
  virtual ~HostEngine() = default;
  // The name the decision log and the profiles show ("xnnpack").
  virtual const char* name() const = 0;
  // Whether `node` (a builtin op, prepared: every shape known) can run here; if not, why not, naming the
  // shape, type or option that stops it.
  virtual bool Supports(const Interpreter& interpreter, const Node& node, std::string* reason) const = 0;
  // Builds nodes [first, last], each of which Supports. `internal` lists the tensors produced and read only
  // inside the run: they get no memory of their own in the interpreter's arena and hold no data afterwards.
  // Null, with `*error`, when the engine cannot build the run after all.
  virtual std::unique_ptr<HostRun> Build(Interpreter* interpreter, int first, int last,
                                         const std::vector<int>& internal, std::string* error) = 0;
};

// Creates the engine for one interpreter, with `num_threads` threads in all (>= 1; the calling thread counts).
using HostEngineFactory = std::unique_ptr<HostEngine> (*)(int num_threads);

}  // namespace kiln

#endif  // KILN_RUNTIME_HOST_ENGINE_H_
