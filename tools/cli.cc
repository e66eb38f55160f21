// What `kiln run` and `kiln benchmark` share (cli.h).
#include "tools/cli.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "runtime/core.h"
#include "tools/npy.h"

namespace kiln {
namespace cli {
namespace {

// Fills whole values of sizeof(draw()) bytes; a ragged tail stays as it is.
template <typename Draw>
void FillValues(uint8_t* data, size_t bytes, Draw draw) {
  for (size_t i = 0; i + sizeof(draw()) <= bytes; i += sizeof(draw())) {
    const auto v = draw();
    std::memcpy(data + i, &v, sizeof v);
  }
}

}  // namespace

void PrintError(void*, const char* format, va_list args) {
  char buffer[2048];
  std::vsnprintf(buffer, sizeof buffer, format, args);
  std::fprintf(stderr, "kiln: %s\n", Printable(buffer).c_str());
}

std::string Printable(const char* text) { return kiln::Printable(text != nullptr ? text : ""); }

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<int64_t> TensorShape(const KilnTensor* t) {
  std::vector<int64_t> shape;
  for (int i = 0; i < KilnTensorNumDims(t); ++i) shape.push_back(KilnTensorDim(t, i));
  return shape;
}

void FillRandom(KilnTensor* t, std::mt19937* rng) {
  auto* data = static_cast<uint8_t*>(KilnTensorData(t));
  const size_t bytes = KilnTensorByteSize(t);
  switch (KilnTensorType(t)) {
    case kKilnFloat32: {
      std::uniform_real_distribution<float> dist(0.0f, 1.0f);
      FillValues(data, bytes, [&] { return dist(*rng); });
      break;
    }
    case kKilnInt32: {
      std::uniform_int_distribution<int32_t> dist(0, 9);
      FillValues(data, bytes, [&] { return dist(*rng); });
      break;
    }
    case kKilnBool: {
      // Only 0 and 1 are bools: any other byte is not a value a model could be given.
      std::uniform_int_distribution<int> dist(0, 1);
      FillValues(data, bytes, [&] { return static_cast<uint8_t>(dist(*rng)); });
      break;
    }
    default: {
      std::uniform_int_distribution<int> dist(0, 255);
      for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(dist(*rng));
      break;
    }
  }
}

bool ReadFile(const std::string& path, std::vector<uint8_t>* bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) bytes->insert(bytes->end(), chunk, chunk + n);
  std::fclose(f);
  return true;
}

std::string CustomOpNames(const KilnModel* model) {
  std::vector<std::string> names;
  for (int32_t i = 0; i < KilnModelGetOperatorCount(model); ++i) {
    KilnBuiltinOperator code;
    const char* name = nullptr;
    int32_t version = 0;
    KilnModelGetOperator(model, i, &code, &name, &version);
    if (code == kKilnBuiltinCustom && name != nullptr &&
        std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + Printable(n.c_str());
  return text;
}

// Operators for the --op flags: one per version of the custom op the model uses. Owned by the caller.
bool MakeKernelOps(const std::string& model_path, const std::vector<KernelOpSpec>& specs,
                   std::vector<KilnOperator*>* ops, std::vector<KilnModule*>* modules) {
  if (specs.empty()) return true;
  std::unique_ptr<KilnModel, void (*)(KilnModel*)> model(
      KilnModelCreateFromFileWithErrorReporter(model_path.c_str(), PrintError, nullptr), KilnModelDelete);
  if (model == nullptr) return false;
  for (const KernelOpSpec& spec : specs) {
    std::vector<int> versions;
    for (int32_t i = 0; i < KilnModelGetOperatorCount(model.get()); ++i) {
      KilnBuiltinOperator code;
      const char* name = nullptr;
      int32_t version = 0;
      KilnModelGetOperator(model.get(), i, &code, &name, &version);
      if (code == kKilnBuiltinCustom && spec.name == name &&
          std::find(versions.begin(), versions.end(), version) == versions.end()) {
        versions.push_back(version);
      }
    }
    if (versions.empty()) {
      const std::string names = CustomOpNames(model.get());
      std::fprintf(stderr, "kiln: --op %s: the model has no custom op named '%s'; %s\n", Printable(spec.name.c_str()).c_str(),
                   Printable(spec.name.c_str()).c_str(),
                   names.empty() ? "it has no custom ops" : ("its custom ops: " + names).c_str());
      return false;
    }
    KilnModule* module = KilnModuleCreateFromFileWithErrorReporter(spec.module.c_str(), PrintError, nullptr);
    if (module == nullptr) return false;
    modules->push_back(module);
    for (int version : versions) {
      KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, spec.name.c_str(), version);
      ops->push_back(op);
      if (KilnOperatorSetKernel(op, module, spec.kernel.c_str()) != kKilnOk) return false;
    }
  }
  return true;
}

// Prints a decision log, one decision per line, with its kind.
void PrintDecisions(int count, const std::function<void(int, KilnDecisionKind*, const char**)>& get) {
  for (int i = 0; i < count; ++i) {
    KilnDecisionKind kind;
    const char* message = nullptr;
    get(i, &kind, &message);
    std::printf("  [%s] %s\n", KilnDecisionKindName(kind), Printable(message).c_str());
  }
}

bool ParseKernelOpSpec(const std::string& v, KernelOpSpec* out) {
  const size_t eq = v.find('='), colon = v.rfind(':');
  if (eq == std::string::npos || colon == std::string::npos || colon < eq || eq == 0 ||
      colon + 1 == v.size()) {
    std::fprintf(stderr, "kiln: --op expects NAME=MODULE.kmod:KERNEL, got '%s'\n", v.c_str());
    return false;
  }
  *out = {v.substr(0, eq), v.substr(eq + 1, colon - eq - 1), v.substr(colon + 1)};
  return true;
}

std::unique_ptr<Session> Session::Open(const std::string& model_path, const SessionOptions& options) {
  std::unique_ptr<Session> session(new Session());
  KilnModel* model = KilnModelCreateFromFileWithErrorReporter(model_path.c_str(), PrintError, nullptr);
  if (model == nullptr) return nullptr;
  if (!MakeKernelOps(model_path, options.kernel_ops, &session->ops_, &session->modules_)) {
    KilnModelDelete(model);
    return nullptr;
  }
  KilnInterpreterOptions* interpreter_options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(interpreter_options, PrintError, nullptr);
  KilnInterpreterOptionsSetNumThreads(interpreter_options, options.threads);
  KilnInterpreterOptionsSetUseReferenceKernels(interpreter_options, options.reference_kernels);
  KilnInterpreterOptionsSetProfiling(interpreter_options, options.profiling);
  for (KilnOperator* op : session->ops_) KilnInterpreterOptionsAddOperator(interpreter_options, op);
  KilnInterpreterOptionsSetDevicePolicy(interpreter_options, options.device.policy);
  if (!options.device.driver.empty()) {
    KilnInterpreterOptionsSetDriverPath(interpreter_options, options.device.driver.c_str());
  }
  session->interpreter_ = KilnInterpreterCreate(model, interpreter_options);
  KilnInterpreterOptionsDelete(interpreter_options);
  // A custom op nothing serves is the usual first stop with a new model: when preparing fails, say how to
  // serve it.
  for (int32_t i = 0; i < KilnModelGetOperatorCount(model) && session->unserved_custom_op_.empty(); ++i) {
    KilnBuiltinOperator code;
    const char* name = nullptr;
    int32_t version = 0;
    KilnModelGetOperator(model, i, &code, &name, &version);
    if (code != kKilnBuiltinCustom || name == nullptr) continue;
    bool served = false;
    for (const KernelOpSpec& spec : options.kernel_ops) served |= spec.name == name;
    if (!served) session->unserved_custom_op_ = name;
  }
  if (session->interpreter_ == nullptr) session->HintCustomOps();
  KilnModelDelete(model);  // the interpreter keeps what it needs
  if (session->interpreter_ == nullptr) return nullptr;
  if (!options.signature.empty()) {
    session->runner_ = KilnInterpreterGetSignatureRunner(session->interpreter_, options.signature.c_str());
    if (session->runner_ == nullptr) {
      std::string keys;
      for (int32_t i = 0; i < KilnInterpreterGetSignatureCount(session->interpreter_); ++i) {
        keys += std::string(i ? ", " : "") + "'" + Printable(KilnInterpreterGetSignatureKey(session->interpreter_, i)) +
                "'";
      }
      std::fprintf(stderr, "kiln: --signature %s: the model's signatures are: %s\n",
                   Printable(options.signature.c_str()).c_str(), keys.empty() ? "(none)" : keys.c_str());
      return nullptr;
    }
  }
  return session;
}

int Session::InputCount() const {
  return runner_ != nullptr ? static_cast<int>(KilnSignatureRunnerGetInputCount(runner_))
                            : KilnInterpreterGetInputTensorCount(interpreter_);
}

KilnTensor* Session::Input(int index) const {
  return runner_ != nullptr
             ? KilnSignatureRunnerGetInputTensor(runner_, KilnSignatureRunnerGetInputName(runner_, index))
             : KilnInterpreterGetInputTensor(interpreter_, index);
}

std::string Session::InputName(int index) const {
  return runner_ != nullptr ? KilnSignatureRunnerGetInputName(runner_, index) : KilnTensorName(Input(index));
}

int Session::OutputCount() const {
  return runner_ != nullptr ? static_cast<int>(KilnSignatureRunnerGetOutputCount(runner_))
                            : KilnInterpreterGetOutputTensorCount(interpreter_);
}

const KilnTensor* Session::Output(int index) const {
  return runner_ != nullptr
             ? KilnSignatureRunnerGetOutputTensor(runner_, KilnSignatureRunnerGetOutputName(runner_, index))
             : KilnInterpreterGetOutputTensor(interpreter_, index);
}

std::string Session::OutputName(int index) const {
  return runner_ != nullptr ? KilnSignatureRunnerGetOutputName(runner_, index) : KilnTensorName(Output(index));
}

KilnStatus Session::Invoke() {
  return runner_ != nullptr ? KilnSignatureRunnerInvoke(runner_) : KilnInterpreterInvoke(interpreter_);
}

void Session::HintCustomOps() const {
  if (unserved_custom_op_.empty()) return;
  const std::string name = Printable(unserved_custom_op_.c_str());
  std::fprintf(stderr,
               "kiln: to serve custom op '%s' with a kernel, compile one with kilnc and pass --op %s=MODULE.kmod:KERNEL "
               "(docs/compute-api.md)\n",
               name.c_str(), name.c_str());
}

Session::~Session() {
  KilnSignatureRunnerDelete(runner_);
  KilnInterpreterDelete(interpreter_);
  for (KilnOperator* op : ops_) KilnOperatorDelete(op);
  for (KilnModule* m : modules_) KilnModuleDelete(m);
}

bool Session::SetInputs(const std::vector<InputSpec>& specs, uint32_t seed, bool verbose) {
  std::map<int, NpyArray> given;
  const int num_inputs = InputCount();
  for (size_t s = 0; s < specs.size(); ++s) {
    int index = -1;
    if (specs[s].name.empty()) {
      index = static_cast<int>(s);
    } else {
      for (int i = 0; i < num_inputs; ++i) {
        if (specs[s].name == InputName(i)) index = i;
      }
    }
    if (index < 0 || index >= num_inputs) {
      std::fprintf(
          stderr, "kiln: --input %s: the model has no input %s\n", specs[s].file.c_str(),
          specs[s].name.empty() ? std::to_string(s).c_str() : ("named '" + specs[s].name + "'").c_str());
      return false;
    }
    NpyArray array;
    std::string error;
    if (!ReadNpyFile(specs[s].file, &array, &error)) {
      std::fprintf(stderr, "kiln: %s\n", error.c_str());
      return false;
    }
    KilnTensor* t = Input(index);
    if (array.type != KilnTensorType(t)) {
      std::fprintf(stderr, "kiln: %s is %s, but input %d ('%s') is %s\n", specs[s].file.c_str(),
                   KilnTypeGetName(array.type), index, Printable(KilnTensorName(t)).c_str(),
                   KilnTypeGetName(KilnTensorType(t)));
      return false;
    }
    if (array.shape != TensorShape(t)) {
      std::vector<int> dims(array.shape.begin(), array.shape.end());
      const KilnStatus resized =
          runner_ != nullptr
              ? KilnSignatureRunnerResizeInputTensor(runner_, InputName(index).c_str(), dims.data(),
                                                     static_cast<int>(dims.size()))
              : KilnInterpreterResizeInputTensor(interpreter_, index, dims.data(), static_cast<int>(dims.size()));
      if (resized != kKilnOk) {
        return false;
      }
    }
    given[index] = std::move(array);
  }
  const KilnStatus allocated =
      runner_ != nullptr ? KilnSignatureRunnerAllocateTensors(runner_) : KilnInterpreterAllocateTensors(interpreter_);
  if (allocated != kKilnOk) {
    HintCustomOps();
    return false;
  }
  std::mt19937 rng(seed);
  for (int i = 0; i < num_inputs; ++i) {
    KilnTensor* t = Input(i);
    auto it = given.find(i);
    if (it == given.end()) {
      FillRandom(t, &rng);
      if (verbose) {
        std::printf("input %d '%s': %s%s <- random (seed %u)\n", i, Printable(KilnTensorName(t)).c_str(),
                    KilnTypeGetName(KilnTensorType(t)), ShapeString(TensorShape(t)).c_str(), seed);
      }
    } else if (KilnTensorCopyFromBuffer(t, it->second.data.data(), it->second.data.size()) != kKilnOk) {
      std::fprintf(stderr, "kiln: input %d: size mismatch\n", i);
      return false;
    } else if (verbose) {
      std::printf("input %d '%s': %s%s <- file\n", i, Printable(KilnTensorName(t)).c_str(),
                  KilnTypeGetName(KilnTensorType(t)), ShapeString(TensorShape(t)).c_str());
    }
  }
  return true;
}

}  // namespace cli
}  // namespace kiln
