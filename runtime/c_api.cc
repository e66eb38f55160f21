// The application-facing C API (kiln/c_api.h): models, options, interpreters and tensors. The top of the
// runtime: here Kiln's builtin op table (ops/) is handed to the interpreter, which knows no op itself.
#include "kiln/c_api.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "ops/builtin_ops.h"
#if KILN_HAVE_XNNPACK
#include "ops/xnnpack/xnnpack_engine.h"
#endif
#include "runtime/core.h"
#include "runtime/interpreter.h"

namespace kiln {
namespace {

// Kiln's host engine for builtin ops, when this build has one.
HostEngineFactory HostEngineMaker() {
#if KILN_HAVE_XNNPACK
  return ops::CreateXnnpackEngine;
#else
  return nullptr;
#endif
}

// Kiln's builtin ops, as the interpreter takes them. Made on first use; valid for the process lifetime.
const BuiltinOpTable& Builtins() {
  static const BuiltinOpTable table = [] {
    BuiltinOpTable t;
    for (const ops::BuiltinOp& op : ops::BuiltinOps()) {
      t.push_back({op.builtin_code, op.min_version, op.max_version, op.op, op.output_type_from_input});
    }
    return t;
  }();
  return table;
}

struct HeapBytes : ModelBytes {
  std::vector<uint8_t> storage;
};

// A read-only private mapping of the model file: nothing ever writes it, so a page dropped with MADV_DONTNEED
// holds the file's bytes again when it is next read.
struct MappedBytes : ModelBytes {
  ~MappedBytes() override {
    if (data != nullptr && size > 0) munmap(const_cast<uint8_t*>(data), size);
  }
  size_t ReleasePages(const void* range, size_t bytes) const override {
    const uintptr_t start = reinterpret_cast<uintptr_t>(range);
    const uintptr_t base = reinterpret_cast<uintptr_t>(data);
    if (start < base || bytes > size || start - base > size - bytes) return 0;
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t first = (start + page - 1) / page * page;  // the whole pages inside the range
    const uintptr_t last = (start + bytes) / page * page;
    if (last <= first) return 0;
    if (madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) return 0;
    return last - first;
  }
};

KilnModel* FinishModel(std::unique_ptr<ModelBytes> bytes, const char* where, KilnErrorReporter reporter,
                       void* user_data) {
  auto model_data = std::make_shared<ModelData>();
  model_data->bytes = std::move(bytes);
  std::string error;
  if (!ReadModel(model_data->bytes->data, model_data->bytes->size, &model_data->desc, &error)) {
    Report(reporter, user_data, "%s: %s", where, error.c_str());
    return nullptr;
  }
  auto* model = new (std::nothrow) KilnModel;
  if (model != nullptr) model->data = std::move(model_data);
  return model;
}

}  // namespace
}  // namespace kiln

using kiln::Interpreter;

extern "C" {

KilnModel* KilnModelCreateWithErrorReporter(const void* model_data, size_t model_size,
                                            KilnErrorReporter reporter, void* user_data) {
  if (model_data == nullptr || model_size == 0) {
    kiln::Report(reporter, user_data, "KilnModelCreate: the model buffer is %s",
                 model_data == nullptr ? "NULL" : "empty");
    return nullptr;
  }
  auto bytes = std::make_unique<kiln::HeapBytes>();
  const auto* begin = static_cast<const uint8_t*>(model_data);
  bytes->storage.assign(begin, begin + model_size);
  bytes->data = bytes->storage.data();
  bytes->size = bytes->storage.size();
  return kiln::FinishModel(std::move(bytes), "model buffer", reporter, user_data);
}

KilnModel* KilnModelCreate(const void* model_data, size_t model_size) {
  return KilnModelCreateWithErrorReporter(model_data, model_size, nullptr, nullptr);
}

KilnModel* KilnModelCreateFromFileWithErrorReporter(const char* model_path, KilnErrorReporter reporter,
                                                    void* user_data) {
  if (model_path == nullptr) {
    kiln::Report(reporter, user_data, "KilnModelCreateFromFile: the path is NULL");
    return nullptr;
  }
  const int fd = open(model_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    kiln::Report(reporter, user_data, "%s: cannot open model: %s", model_path, std::strerror(errno));
    return nullptr;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    kiln::Report(reporter, user_data, "%s: not a regular file", model_path);
    close(fd);
    return nullptr;
  }
  if (st.st_size == 0) {
    kiln::Report(reporter, user_data, "%s: the file is empty", model_path);
    close(fd);
    return nullptr;
  }
  void* mapping = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapping == MAP_FAILED) {
    kiln::Report(reporter, user_data, "%s: cannot map model: %s", model_path, std::strerror(errno));
    return nullptr;
  }
  auto bytes = std::make_unique<kiln::MappedBytes>();
  bytes->data = static_cast<const uint8_t*>(mapping);
  bytes->size = static_cast<size_t>(st.st_size);
  return kiln::FinishModel(std::move(bytes), model_path, reporter, user_data);
}

KilnModel* KilnModelCreateFromFile(const char* model_path) {
  return KilnModelCreateFromFileWithErrorReporter(model_path, nullptr, nullptr);
}

void KilnModelDelete(KilnModel* model) { delete model; }

KilnInterpreterOptions* KilnInterpreterOptionsCreate(void) {
  return new (std::nothrow) KilnInterpreterOptions;
}

void KilnInterpreterOptionsDelete(KilnInterpreterOptions* options) { delete options; }

void KilnInterpreterOptionsSetNumThreads(KilnInterpreterOptions* options, int32_t num_threads) {
  if (options != nullptr) options->num_threads = num_threads;
}

void KilnInterpreterOptionsSetUseReferenceKernels(KilnInterpreterOptions* options, bool use) {
  if (options != nullptr) options->use_reference_kernels = use;
}

void KilnInterpreterOptionsSetProfiling(KilnInterpreterOptions* options, bool enable) {
  if (options != nullptr) options->profiling = enable;
}

int32_t KilnInterpreterGetProfileEventCount(const KilnInterpreter* interpreter) {
  return interpreter != nullptr ? static_cast<int32_t>(interpreter->impl->profile().size()) : 0;
}

KilnStatus KilnInterpreterGetProfileEvent(const KilnInterpreter* interpreter, int32_t index,
                                          KilnProfileEvent* out) {
  if (interpreter == nullptr || out == nullptr || index < 0 ||
      index >= KilnInterpreterGetProfileEventCount(interpreter) ||
      out->struct_size < sizeof(KilnProfileEvent)) {
    return kKilnInvalidArgument;
  }
  const kiln::Interpreter::ProfileEvent& e = interpreter->impl->profile()[index];
  out->first_node = e.first;
  out->last_node = e.last;
  out->op = e.op.c_str();
  out->engine = e.engine.c_str();
  out->start_ns = e.start_ns;
  out->duration_ns = e.duration_ns;
  return kKilnOk;
}

void KilnInterpreterOptionsAddOperator(KilnInterpreterOptions* options, KilnOperator* op) {
  if (options != nullptr && op != nullptr) options->operators.push_back(op);
}

void KilnInterpreterOptionsSetErrorReporter(KilnInterpreterOptions* options, KilnErrorReporter reporter,
                                            void* user_data) {
  if (options == nullptr) return;
  options->reporter = reporter;
  options->reporter_user_data = user_data;
}

void KilnInterpreterOptionsSetDevicePolicy(KilnInterpreterOptions* options, KilnDevicePolicy policy) {
  // Read as the int a C caller may pass: Create checks the range.
  if (options != nullptr) std::memcpy(&options->device_policy, &policy, sizeof(int32_t));
}

void KilnInterpreterOptionsSetDriverPath(KilnInterpreterOptions* options, const char* path) {
  if (options != nullptr) options->driver_path = path != nullptr ? path : "";
}

void KilnInterpreterOptionsSetDeviceTimeout(KilnInterpreterOptions* options, uint32_t milliseconds) {
  if (options != nullptr) options->device_timeout_ms = milliseconds;
}

void KilnInterpreterOptionsSetAllowAnyDriverDependency(KilnInterpreterOptions* options, bool allow) {
  if (options != nullptr) options->allow_any_driver_dependency = allow;
}

int32_t KilnModelGetOperatorCount(const KilnModel* model) {
  if (model == nullptr || model->data == nullptr || model->data->desc.subgraphs.empty()) return 0;
  return static_cast<int32_t>(model->data->desc.subgraphs[0].operators.size());
}

KilnStatus KilnModelGetOperator(const KilnModel* model, int32_t index, KilnBuiltinOperator* out_builtin_code,
                                const char** out_custom_name, int32_t* out_version) {
  if (index < 0 || index >= KilnModelGetOperatorCount(model)) return kKilnInvalidArgument;
  const kiln::OperatorDesc& op = model->data->desc.subgraphs[0].operators[index];
  const bool custom = op.builtin_code == kKilnBuiltinCustom;
  if (out_builtin_code != nullptr) *out_builtin_code = static_cast<KilnBuiltinOperator>(op.builtin_code);
  if (out_custom_name != nullptr) *out_custom_name = custom ? op.custom_name.c_str() : nullptr;
  if (out_version != nullptr) *out_version = op.version;
  return kKilnOk;
}

KilnStatus KilnModelGetOperatorCustomOptions(const KilnModel* model, int32_t index, const void** out_data,
                                             size_t* out_size) {
  if (out_data == nullptr || out_size == nullptr) return kKilnInvalidArgument;
  if (index < 0 || index >= KilnModelGetOperatorCount(model)) return kKilnInvalidArgument;
  const kiln::OperatorDesc& op = model->data->desc.subgraphs[0].operators[index];
  *out_size = op.custom_options != nullptr ? op.custom_options_size : 0;
  *out_data = *out_size != 0 ? op.custom_options : nullptr;
  return kKilnOk;
}

const char* KilnModelGetDescription(const KilnModel* model) {
  return model != nullptr ? model->data->desc.description.c_str() : "";
}

int32_t KilnModelGetSignatureCount(const KilnModel* model) {
  return model != nullptr ? static_cast<int32_t>(model->data->desc.signatures.size()) : 0;
}

namespace {
const kiln::SignatureDesc* Signature(const KilnModel* model, int32_t index) {
  if (model == nullptr || index < 0 || static_cast<size_t>(index) >= model->data->desc.signatures.size()) {
    return nullptr;
  }
  return &model->data->desc.signatures[static_cast<size_t>(index)];
}
KilnStatus SignatureTensor(const std::vector<kiln::SignatureTensor>* list, int32_t index, const char** out_name,
                           int32_t* out_tensor_index) {
  if (list == nullptr || index < 0 || static_cast<size_t>(index) >= list->size()) return kKilnInvalidArgument;
  const kiln::SignatureTensor& t = (*list)[static_cast<size_t>(index)];
  if (out_name != nullptr) *out_name = t.name.c_str();
  if (out_tensor_index != nullptr) *out_tensor_index = t.tensor_index;
  return kKilnOk;
}
}  // namespace

KilnStatus KilnModelGetSignature(const KilnModel* model, int32_t signature_index, const char** out_key,
                                 int32_t* out_subgraph_index, int32_t* out_input_count, int32_t* out_output_count) {
  const kiln::SignatureDesc* sig = Signature(model, signature_index);
  if (sig == nullptr) return kKilnInvalidArgument;
  if (out_key != nullptr) *out_key = sig->key.c_str();
  if (out_subgraph_index != nullptr) *out_subgraph_index = sig->subgraph_index;
  if (out_input_count != nullptr) *out_input_count = static_cast<int32_t>(sig->inputs.size());
  if (out_output_count != nullptr) *out_output_count = static_cast<int32_t>(sig->outputs.size());
  return kKilnOk;
}

KilnStatus KilnModelGetSignatureInput(const KilnModel* model, int32_t signature_index, int32_t index,
                                      const char** out_name, int32_t* out_tensor_index) {
  const kiln::SignatureDesc* sig = Signature(model, signature_index);
  return SignatureTensor(sig != nullptr ? &sig->inputs : nullptr, index, out_name, out_tensor_index);
}

KilnStatus KilnModelGetSignatureOutput(const KilnModel* model, int32_t signature_index, int32_t index,
                                       const char** out_name, int32_t* out_tensor_index) {
  const kiln::SignatureDesc* sig = Signature(model, signature_index);
  return SignatureTensor(sig != nullptr ? &sig->outputs : nullptr, index, out_name, out_tensor_index);
}

int32_t KilnModelGetSubgraphCount(const KilnModel* model) {
  return model != nullptr ? static_cast<int32_t>(model->data->desc.subgraphs.size()) : 0;
}

namespace {
const kiln::SubgraphDesc* MainSubgraph(const KilnModel* model) {
  return model != nullptr && !model->data->desc.subgraphs.empty() ? &model->data->desc.subgraphs[0] : nullptr;
}
int32_t CountOf(const KilnModel* model, const std::vector<int> kiln::SubgraphDesc::*list) {
  const kiln::SubgraphDesc* graph = MainSubgraph(model);
  return graph != nullptr ? static_cast<int32_t>((graph->*list).size()) : 0;
}
int32_t EntryOf(const KilnModel* model, const std::vector<int> kiln::SubgraphDesc::*list, int32_t index) {
  return index >= 0 && index < CountOf(model, list) ? (MainSubgraph(model)->*list)[index] : -1;
}
}  // namespace

int32_t KilnModelGetTensorCount(const KilnModel* model) {
  const kiln::SubgraphDesc* graph = MainSubgraph(model);
  return graph != nullptr ? static_cast<int32_t>(graph->tensors.size()) : 0;
}

int32_t KilnModelGetInputCount(const KilnModel* model) { return CountOf(model, &kiln::SubgraphDesc::inputs); }
int32_t KilnModelGetOutputCount(const KilnModel* model) {
  return CountOf(model, &kiln::SubgraphDesc::outputs);
}
int32_t KilnModelGetInputTensorIndex(const KilnModel* model, int32_t index) {
  return EntryOf(model, &kiln::SubgraphDesc::inputs, index);
}
int32_t KilnModelGetOutputTensorIndex(const KilnModel* model, int32_t index) {
  return EntryOf(model, &kiln::SubgraphDesc::outputs, index);
}

KilnStatus KilnModelGetTensor(const KilnModel* model, int32_t tensor_index, const char** out_name,
                              KilnType* out_type, int32_t* out_num_dims, const int32_t** out_dims) {
  if (tensor_index < 0 || tensor_index >= KilnModelGetTensorCount(model)) return kKilnInvalidArgument;
  const kiln::TensorDesc& tensor = MainSubgraph(model)->tensors[tensor_index];
  static_assert(sizeof(int) == sizeof(int32_t), "shapes are handed out as int32_t");
  if (out_name != nullptr) *out_name = tensor.name.c_str();
  if (out_type != nullptr) *out_type = tensor.type;
  if (out_num_dims != nullptr) *out_num_dims = static_cast<int32_t>(tensor.shape.size());
  if (out_dims != nullptr) *out_dims = reinterpret_cast<const int32_t*>(tensor.shape.data());
  return kKilnOk;
}

const char* KilnBuiltinOperatorGetName(KilnBuiltinOperator builtin_code) {
  return kiln::BuiltinOperatorCName(builtin_code);
}

bool KilnBuiltinOpIsSupported(KilnBuiltinOperator builtin_code, int32_t version) {
  for (const kiln::BuiltinOpRegistration& builtin : kiln::Builtins()) {
    // The custom ops Kiln serves (TFLite_Detection_PostProcess) are no builtin op.
    if (builtin.builtin_code == builtin_code && builtin_code != kKilnBuiltinCustom &&
        (version == 0 || (version >= builtin.min_version && version <= builtin.max_version))) {
      return true;
    }
  }
  return false;
}

bool KilnCustomOpIsSupported(const char* custom_name, int32_t version) {
  if (custom_name == nullptr) return false;
  for (const kiln::BuiltinOpRegistration& builtin : kiln::Builtins()) {
    if (builtin.builtin_code == kKilnBuiltinCustom && builtin.op != nullptr &&
        builtin.op->custom_name == custom_name &&
        (version == 0 || (version >= builtin.min_version && version <= builtin.max_version))) {
      return true;
    }
  }
  return false;
}

KilnInterpreter* KilnInterpreterCreateWithStatus(const KilnModel* model,
                                                 const KilnInterpreterOptions* options,
                                                 KilnStatus* out_status) {
  KilnStatus status = kKilnOk;
  KilnInterpreterOptions defaults;
  const KilnInterpreterOptions& opts = options != nullptr ? *options : defaults;
  KilnInterpreter* result = nullptr;
  if (model == nullptr || model->data == nullptr) {
    kiln::Report(opts.reporter, opts.reporter_user_data, "KilnInterpreterCreate: the model is NULL");
    status = kKilnInvalidArgument;
  } else if (opts.device_policy < kKilnDeviceAuto || opts.device_policy > kKilnDeviceGpuOnly) {
    kiln::Report(opts.reporter, opts.reporter_user_data, "KilnInterpreterCreate: unknown device policy %d",
                 static_cast<int>(opts.device_policy));
    status = kKilnInvalidArgument;
  } else if (auto impl =
                 Interpreter::Create(model->data, opts, kiln::Builtins(), kiln::HostEngineMaker(), &status)) {
    result = new (std::nothrow) KilnInterpreter;
    if (result != nullptr) {
      result->impl = std::move(impl);
    } else {
      status = kKilnOutOfMemory;
    }
  }
  if (out_status != nullptr) *out_status = status;
  return result;
}

KilnInterpreter* KilnInterpreterCreate(const KilnModel* model, const KilnInterpreterOptions* options) {
  return KilnInterpreterCreateWithStatus(model, options, nullptr);
}

void KilnInterpreterDelete(KilnInterpreter* interpreter) { delete interpreter; }

int32_t KilnInterpreterGetInputTensorCount(const KilnInterpreter* interpreter) {
  return interpreter ? static_cast<int32_t>(interpreter->impl->inputs().size()) : 0;
}

KilnTensor* KilnInterpreterGetInputTensor(const KilnInterpreter* interpreter, int32_t input_index) {
  if (interpreter == nullptr || input_index < 0 ||
      input_index >= static_cast<int32_t>(interpreter->impl->inputs().size())) {
    return nullptr;
  }
  return interpreter->impl->tensor(interpreter->impl->inputs()[input_index]);
}

KilnStatus KilnInterpreterResizeInputTensor(KilnInterpreter* interpreter, int32_t input_index,
                                            const int* input_dims, int32_t input_dims_size) {
  if (interpreter == nullptr) return kKilnInvalidArgument;
  return interpreter->impl->ResizeInputTensor(input_index, input_dims, input_dims_size);
}

KilnStatus KilnInterpreterAllocateTensors(KilnInterpreter* interpreter) {
  if (interpreter == nullptr) return kKilnInvalidArgument;
  return interpreter->impl->AllocateTensors();
}

struct KilnSignatureRunner {
  kiln::Interpreter* executor;  // of the signature's subgraph, owned by the interpreter
  const kiln::SignatureDesc* signature;
};

namespace {

const kiln::SignatureTensor* FindSignatureTensor(const std::vector<kiln::SignatureTensor>& list, const char* name) {
  if (name == nullptr) return nullptr;
  for (const kiln::SignatureTensor& t : list) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const char* SignatureTensorName(const std::vector<kiln::SignatureTensor>& list, int32_t index) {
  if (index < 0 || static_cast<size_t>(index) >= list.size()) return nullptr;
  return list[static_cast<size_t>(index)].name.c_str();
}

}  // namespace

int32_t KilnInterpreterGetSignatureCount(const KilnInterpreter* interpreter) {
  return interpreter != nullptr ? static_cast<int32_t>(interpreter->impl->model_desc().signatures.size()) : 0;
}

const char* KilnInterpreterGetSignatureKey(const KilnInterpreter* interpreter, int32_t signature_index) {
  if (interpreter == nullptr || signature_index < 0 ||
      static_cast<size_t>(signature_index) >= interpreter->impl->model_desc().signatures.size()) {
    return nullptr;
  }
  return interpreter->impl->model_desc().signatures[static_cast<size_t>(signature_index)].key.c_str();
}

KilnSignatureRunner* KilnInterpreterGetSignatureRunner(const KilnInterpreter* interpreter, const char* signature_key) {
  if (interpreter == nullptr) return nullptr;
  kiln::Interpreter* root = interpreter->impl.get();
  const std::vector<kiln::SignatureDesc>& signatures = root->model_desc().signatures;
  const kiln::SignatureDesc* signature = nullptr;
  for (const kiln::SignatureDesc& s : signatures) {
    if (signature_key == nullptr || s.key == signature_key) {
      signature = &s;
      break;
    }
  }
  if (signature == nullptr) {
    root->ReportError("KilnInterpreterGetSignatureRunner: the model has no signature '%s' (it has %zu)",
                      signature_key != nullptr ? signature_key : "(first)", signatures.size());
    return nullptr;
  }
  kiln::Interpreter* executor = root->Subgraph(signature->subgraph_index);
  if (executor == nullptr) return nullptr;
  return new (std::nothrow) KilnSignatureRunner{executor, signature};
}

size_t KilnSignatureRunnerGetInputCount(const KilnSignatureRunner* runner) {
  return runner != nullptr ? runner->signature->inputs.size() : 0;
}

const char* KilnSignatureRunnerGetInputName(const KilnSignatureRunner* runner, int32_t input_index) {
  return runner != nullptr ? SignatureTensorName(runner->signature->inputs, input_index) : nullptr;
}

KilnStatus KilnSignatureRunnerResizeInputTensor(KilnSignatureRunner* runner, const char* input_name,
                                                const int* input_dims, int32_t input_dims_size) {
  if (runner == nullptr || input_name == nullptr) return kKilnInvalidArgument;
  const kiln::SignatureTensor* input = FindSignatureTensor(runner->signature->inputs, input_name);
  const std::vector<int>& inputs = runner->executor->inputs();
  const auto it = input != nullptr ? std::find(inputs.begin(), inputs.end(), input->tensor_index) : inputs.end();
  if (it == inputs.end()) {
    runner->executor->ReportError("KilnSignatureRunnerResizeInputTensor: signature '%s' has no input '%s'",
                                  runner->signature->key.c_str(), input_name);
    return kKilnError;
  }
  return runner->executor->ResizeInputTensor(static_cast<int>(it - inputs.begin()), input_dims, input_dims_size);
}

KilnStatus KilnSignatureRunnerAllocateTensors(KilnSignatureRunner* runner) {
  return runner != nullptr ? runner->executor->AllocateTensors() : kKilnInvalidArgument;
}

KilnTensor* KilnSignatureRunnerGetInputTensor(KilnSignatureRunner* runner, const char* input_name) {
  if (runner == nullptr) return nullptr;
  const kiln::SignatureTensor* input = FindSignatureTensor(runner->signature->inputs, input_name);
  return input != nullptr ? runner->executor->tensor(input->tensor_index) : nullptr;
}

KilnStatus KilnSignatureRunnerInvoke(KilnSignatureRunner* runner) {
  return runner != nullptr ? runner->executor->Invoke() : kKilnInvalidArgument;
}

size_t KilnSignatureRunnerGetOutputCount(const KilnSignatureRunner* runner) {
  return runner != nullptr ? runner->signature->outputs.size() : 0;
}

const char* KilnSignatureRunnerGetOutputName(const KilnSignatureRunner* runner, int32_t output_index) {
  return runner != nullptr ? SignatureTensorName(runner->signature->outputs, output_index) : nullptr;
}

const KilnTensor* KilnSignatureRunnerGetOutputTensor(const KilnSignatureRunner* runner, const char* output_name) {
  if (runner == nullptr) return nullptr;
  const kiln::SignatureTensor* output = FindSignatureTensor(runner->signature->outputs, output_name);
  return output != nullptr ? runner->executor->tensor(output->tensor_index) : nullptr;
}

void KilnSignatureRunnerDelete(KilnSignatureRunner* runner) { delete runner; }

KilnStatus KilnInterpreterInvoke(KilnInterpreter* interpreter) {
  if (interpreter == nullptr) return kKilnInvalidArgument;
  return interpreter->impl->Invoke();
}

KilnStatus KilnInterpreterResetVariableTensors(KilnInterpreter* interpreter) {
  if (interpreter == nullptr) return kKilnInvalidArgument;
  return interpreter->impl->ResetVariableTensors();
}

int32_t KilnInterpreterGetOutputTensorCount(const KilnInterpreter* interpreter) {
  return interpreter ? static_cast<int32_t>(interpreter->impl->outputs().size()) : 0;
}

const KilnTensor* KilnInterpreterGetOutputTensor(const KilnInterpreter* interpreter, int32_t output_index) {
  if (interpreter == nullptr || output_index < 0 ||
      output_index >= static_cast<int32_t>(interpreter->impl->outputs().size())) {
    return nullptr;
  }
  return interpreter->impl->tensor(interpreter->impl->outputs()[output_index]);
}

KilnStatus KilnInterpreterGetArenaStats(const KilnInterpreter* interpreter, size_t* out_arena_bytes,
                                        size_t* out_naive_bytes) {
  if (interpreter == nullptr) return kKilnInvalidArgument;
  if (!interpreter->impl->allocated()) return kKilnError;
  if (out_arena_bytes != nullptr) *out_arena_bytes = interpreter->impl->arena_bytes();
  if (out_naive_bytes != nullptr) *out_naive_bytes = interpreter->impl->naive_bytes();
  return kKilnOk;
}

int32_t KilnInterpreterGetNodeCount(const KilnInterpreter* interpreter) {
  return interpreter ? static_cast<int32_t>(interpreter->impl->nodes().size()) : 0;
}

KilnStatus KilnInterpreterGetNodeInfo(const KilnInterpreter* interpreter, int32_t node_index,
                                      int32_t* out_builtin_code, const char** out_custom_name,
                                      int32_t* out_version) {
  if (interpreter == nullptr || node_index < 0 ||
      node_index >= static_cast<int32_t>(interpreter->impl->nodes().size())) {
    return kKilnInvalidArgument;
  }
  const kiln::OperatorDesc* desc = interpreter->impl->nodes()[node_index].desc;
  if (out_builtin_code != nullptr) *out_builtin_code = desc->builtin_code;
  if (out_custom_name != nullptr) {
    *out_custom_name = desc->builtin_code == kKilnBuiltinCustom ? desc->custom_name.c_str() : nullptr;
  }
  if (out_version != nullptr) *out_version = desc->version;
  return kKilnOk;
}

int32_t KilnInterpreterGetDecisionCount(const KilnInterpreter* interpreter) {
  return interpreter != nullptr ? static_cast<int32_t>(interpreter->impl->decisions().size()) : 0;
}

KilnStatus KilnInterpreterGetDecision(const KilnInterpreter* interpreter, int32_t index,
                                      KilnDecisionKind* out_kind, const char** out_subject,
                                      const char** out_message) {
  const kiln::Decision* d = interpreter != nullptr && index >= 0
                                ? interpreter->impl->decisions().Get(static_cast<size_t>(index))
                                : nullptr;
  if (d == nullptr) return kKilnInvalidArgument;
  if (out_kind != nullptr) *out_kind = d->kind;
  if (out_subject != nullptr) *out_subject = d->subject.c_str();
  if (out_message != nullptr) *out_message = d->message.c_str();
  return kKilnOk;
}

KilnType KilnTensorType(const KilnTensor* tensor) { return tensor ? tensor->type : kKilnNoType; }

int32_t KilnTensorNumDims(const KilnTensor* tensor) {
  return tensor ? static_cast<int32_t>(tensor->dims.size()) : 0;
}

int32_t KilnTensorDim(const KilnTensor* tensor, int32_t dim_index) {
  if (tensor == nullptr || dim_index < 0 || dim_index >= static_cast<int32_t>(tensor->dims.size())) return -1;
  return tensor->dims[dim_index];
}

size_t KilnTensorByteSize(const KilnTensor* tensor) { return tensor ? tensor->bytes : 0; }

void* KilnTensorData(const KilnTensor* tensor) { return tensor ? tensor->data : nullptr; }

const char* KilnTensorName(const KilnTensor* tensor) { return tensor ? tensor->name.c_str() : ""; }

KilnQuantizationParams KilnTensorQuantizationParams(const KilnTensor* tensor) {
  return tensor ? tensor->quant : KilnQuantizationParams{0.0f, 0};
}

KilnStatus KilnTensorGetPerChannelQuantization(const KilnTensor* tensor, const float** out_scales,
                                               const int32_t** out_zero_points, int* out_count,
                                               int* out_quantized_dimension) {
  if (tensor == nullptr || out_scales == nullptr || out_zero_points == nullptr || out_count == nullptr ||
      out_quantized_dimension == nullptr) {
    return kKilnInvalidArgument;
  }
  *out_scales = tensor->scales.data();
  *out_zero_points = tensor->zero_points.data();
  *out_count = static_cast<int>(tensor->scales.size());
  *out_quantized_dimension = tensor->quantized_dimension;
  return kKilnOk;
}

KilnStatus KilnTensorCopyFromBuffer(KilnTensor* tensor, const void* input_data, size_t input_data_size) {
  // An empty tensor takes an empty buffer, whose pointer may be null (an empty std::vector's, NumPy's).
  if (tensor != nullptr && tensor->bytes == 0 && input_data_size == 0 && tensor->allocation != kKilnMmapRo) {
    return kKilnOk;
  }
  if (tensor == nullptr || input_data == nullptr || tensor->data == nullptr) return kKilnInvalidArgument;
  if (tensor->allocation == kKilnMmapRo || input_data_size != tensor->bytes) return kKilnInvalidArgument;
  std::memcpy(tensor->data, input_data, input_data_size);
  return kKilnOk;
}

KilnStatus KilnTensorCopyToBuffer(const KilnTensor* tensor, void* output_data, size_t output_data_size) {
  if (tensor != nullptr && tensor->bytes == 0 && output_data_size == 0) return kKilnOk;  // empty, as above
  if (tensor == nullptr || output_data == nullptr || tensor->data == nullptr) return kKilnInvalidArgument;
  if (output_data_size != tensor->bytes) return kKilnInvalidArgument;
  std::memcpy(output_data, tensor->data, output_data_size);
  return kKilnOk;
}

}  // extern "C"
