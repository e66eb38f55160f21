// What `kiln run` and `kiln benchmark` share: reading the command line's model, inputs and --op kernels into
// an interpreter through the public C API, random inputs, printing shapes and decisions.
#ifndef KILN_TOOLS_CLI_H_
#define KILN_TOOLS_CLI_H_

#include <cstdarg>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/compute.h"
#include "kiln/operator.h"

namespace kiln {
namespace cli {

// An error reporter that prints "kiln: MESSAGE" to stderr, escaped (messages name things read from files).
void PrintError(void*, const char* format, va_list args);

// `text` safe for a terminal: control characters become \xNN (runtime/core.h). Every name that comes from a
// file (tensors, ops, descriptions, decisions) is printed through it.
std::string Printable(const char* text);

std::string ShapeString(const std::vector<int64_t>& shape);
std::vector<int64_t> TensorShape(const KilnTensor* t);

// Seeded random values: floats in [0, 1), int32 in [0, 9], bools 0 or 1, other types byte by byte.
void FillRandom(KilnTensor* t, std::mt19937* rng);

bool ReadFile(const std::string& path, std::vector<uint8_t>* bytes);

// --op NAME=MODULE.kmod:KERNEL
struct KernelOpSpec {
  std::string name;
  std::string module;
  std::string kernel;
};

// Parses NAME=MODULE.kmod:KERNEL; prints why and returns false when it is not that.
bool ParseKernelOpSpec(const std::string& text, KernelOpSpec* out);

// Prints a decision log, one decision per line, with its kind.
void PrintDecisions(int count, const std::function<void(int, KilnDecisionKind*, const char**)>& get);

// Device choice from the command line.
struct DeviceFlags {
  KilnDevicePolicy policy = kKilnDeviceAuto;
  std::string driver;
  bool explain = false;
};

struct InputSpec {
  std::string name;  // empty: positional
  std::string file;
};

// What the command line asks of an interpreter.
struct SessionOptions {
  int threads = -1;
  bool reference_kernels = false;
  bool profiling = false;
  std::vector<KernelOpSpec> kernel_ops;
  DeviceFlags device;
  std::string signature;  // --signature KEY: run that signature's subgraph; empty: subgraph 0
};

// A model's interpreter, with the operators and kernel modules its --op flags made.
class Session {
 public:
  // Null, after printing why, when the model, a module or the interpreter cannot be made.
  static std::unique_ptr<Session> Open(const std::string& model_path, const SessionOptions& options);
  ~Session();
  KilnInterpreter* interpreter() const { return interpreter_; }
  // Reads the --input files (resizing inputs to their shapes), allocates tensors, and fills the inputs not
  // given with seeded random values. Prints one line per input when `verbose`. False after printing why.
  bool SetInputs(const std::vector<InputSpec>& specs, uint32_t seed, bool verbose);
  // The inputs and outputs run: the signature's (by its names) with --signature, else subgraph 0's.
  int InputCount() const;
  KilnTensor* Input(int index) const;
  std::string InputName(int index) const;
  int OutputCount() const;
  const KilnTensor* Output(int index) const;
  std::string OutputName(int index) const;
  KilnStatus Invoke();

 private:
  Session() = default;
  KilnInterpreter* interpreter_ = nullptr;
  KilnSignatureRunner* runner_ = nullptr;  // with --signature
  std::vector<KilnOperator*> ops_;
  std::vector<KilnModule*> modules_;
  std::string unserved_custom_op_;  // a custom op of the model no --op serves, for HintCustomOps
  // Prints how to serve that custom op with a kernel (when there is one); called when preparing fails.
  void HintCustomOps() const;
};

// `kiln benchmark`: see tools/benchmark.cc. Returns the process's exit code.
int Benchmark(int argc, char** argv);

}  // namespace cli
}  // namespace kiln

#endif  // KILN_TOOLS_CLI_H_
