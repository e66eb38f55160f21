// _kiln: the C++ half of the Python package `kiln` (python/kiln). It binds Kiln's public C API (libkiln.so) as
// thin handle classes, plus kilnc as a library (compiler/compiler.h) and the kernel-module reflection
// (formats/kmod/module.h). The LiteRT-shaped API, dtype rules and packing of script globals live in Python
// (python/kiln/*.py); this file owns lifetimes, the GIL, error messages and NumPy views of Kiln's memory.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "formats/kmod/module.h"
#include "kiln/c_api.h"
#include "kiln/c_api_opaque.h"
#include "kiln/compute.h"
#include "kiln/device.h"
#include "kiln/operator.h"

namespace py = pybind11;

namespace kiln::python {
namespace {

// Raised as kiln.KilnError (a RuntimeError): a failure that Kiln reported, with its messages.
class KilnException : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Collects what an object's error reporter receives, so that the call that failed can raise it.
class Messages {
 public:
  static void Report(void* user_data, const char* format, va_list args) {
    char buffer[4096];
    std::vsnprintf(buffer, sizeof buffer, format, args);
    auto* self = static_cast<Messages*>(user_data);
    std::lock_guard<std::mutex> lock(self->mutex_);
    if (!self->text_.empty()) self->text_ += '\n';
    self->text_ += buffer;
  }
  void Add(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!text_.empty()) text_ += '\n';
    text_ += text;
  }
  std::string Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string text;
    text.swap(text_);
    return text;
  }
  // Throws KilnException: `what`, then what the reporter received.
  [[noreturn]] void Raise(const std::string& what) {
    const std::string reported = Take();
    throw KilnException(reported.empty() ? what : what + ": " + reported);
  }
  void Check(KilnStatus status, const std::string& what) {
    if (status != kKilnOk) Raise(what);
    Take();  // warnings of a call that worked are not carried into the next failure
  }

 private:
  std::mutex mutex_;
  std::string text_;
};

// ---- Types ----

std::string DtypeName(KilnType type) {
  switch (type) {
    case kKilnFloat32: return "float32";
    case kKilnFloat16: return "float16";
    case kKilnFloat64: return "float64";
    case kKilnInt8: return "int8";
    case kKilnUInt8: return "uint8";
    case kKilnInt16: return "int16";
    case kKilnUInt16: return "uint16";
    case kKilnInt32: return "int32";
    case kKilnUInt32: return "uint32";
    case kKilnInt64: return "int64";
    case kKilnUInt64: return "uint64";
    case kKilnBool: return "bool";
    case kKilnComplex64: return "complex64";
    case kKilnComplex128: return "complex128";
    default: return "";
  }
}

// The Kiln type of a native-byte-order NumPy dtype; kKilnNoType for any other.
KilnType TypeFromDtype(const py::dtype& dtype) {
  if (!py::cast<bool>(dtype.attr("isnative"))) return kKilnNoType;
  const std::string name = py::cast<std::string>(dtype.attr("name"));
  static const KilnType kTypes[] = {kKilnFloat32, kKilnFloat16, kKilnFloat64, kKilnInt8,      kKilnUInt8,
                                    kKilnInt16,   kKilnUInt16,  kKilnInt32,   kKilnUInt32,    kKilnInt64,
                                    kKilnUInt64,  kKilnBool,    kKilnComplex64, kKilnComplex128};
  for (KilnType t : kTypes) {
    if (name == DtypeName(t)) return t;
  }
  return kKilnNoType;
}

py::dtype DtypeOf(KilnType type) {
  const std::string name = DtypeName(type);
  if (name.empty()) throw py::type_error(std::string("Kiln type ") + KilnTypeGetName(type) + " has no NumPy dtype");
  return py::dtype(name);
}

std::vector<py::ssize_t> Shape(const KilnTensor* t) {
  std::vector<py::ssize_t> shape;
  for (int i = 0; i < KilnTensorNumDims(t); ++i) shape.push_back(KilnTensorDim(t, i));
  return shape;
}

std::vector<py::ssize_t> Shape(const KilnOpaqueTensor* t) {
  std::vector<py::ssize_t> shape;
  for (int i = 0; i < KilnOpaqueTensorNumDims(t); ++i) shape.push_back(KilnOpaqueTensorDim(t, i));
  return shape;
}

// A NumPy array over `data` (no copy) that keeps `owner` alive.
py::array View(KilnType type, const std::vector<py::ssize_t>& shape, void* data, py::handle owner) {
  return py::array(DtypeOf(type), shape, data, owner);
}

// ---- Kernel modules ----

py::dict TypeDict(const KernelTypeDesc& type);

const char* KindName(KernelTypeKind kind) {
  switch (kind) {
    case KernelTypeKind::kVoid: return "void";
    case KernelTypeKind::kScalar: return "scalar";
    case KernelTypeKind::kStruct: return "struct";
    case KernelTypeKind::kPointer: return "pointer";
    case KernelTypeKind::kAllocation: return "allocation";
    case KernelTypeKind::kObject: return "object";
  }
  return "unknown";
}

py::dict TypeDict(const KernelTypeDesc& type) {
  py::dict d;
  d["kind"] = KindName(type.kind);
  d["name"] = KernelTypeName(type);
  d["dtype"] = DtypeName(type.element_type);
  d["vector_size"] = type.vector_size;
  d["size"] = type.size;
  d["alignment"] = type.alignment;
  d["array_size"] = type.array_size;
  py::list fields;
  for (const KernelFieldDesc& f : type.fields) {
    py::dict field;
    field["name"] = f.name;
    field["offset"] = f.offset;
    field["type"] = TypeDict(f.type);
    fields.append(field);
  }
  d["fields"] = fields;
  return d;
}

py::list TypeList(const std::vector<KernelTypeDesc>& types) {
  py::list list;
  for (const KernelTypeDesc& t : types) list.append(TypeDict(t));
  return list;
}

// A loaded kernel module: the runtime's handle and the reflection, read from the same bytes.
class Module {
 public:
  explicit Module(const py::bytes& data) {
    const std::string bytes = data;
    std::string error;
    if (!ReadKernelModule(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &desc_, &error)) {
      throw KilnException("not a valid kernel module: " + error);
    }
    module_ = KilnModuleCreateWithErrorReporter(bytes.data(), bytes.size(), &Messages::Report, &messages_);
    if (module_ == nullptr) messages_.Raise("the runtime refused the kernel module");
    bytes_ = bytes;
  }
  ~Module() { KilnModuleDelete(module_); }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const KilnModule* handle() const { return module_; }
  const KernelModuleDesc& desc() const { return desc_; }
  py::bytes bytes() const { return py::bytes(bytes_); }

  py::dict Reflection() const {
    py::dict d;
    d["source_name"] = desc_.source_name;
    d["compiler_version"] = desc_.compiler_version;
    d["hal_level"] = desc_.hal_level.ToString();
    d["package_name"] = desc_.package_name;
    d["has_init"] = desc_.has_init;
    py::list payloads;
    for (const PayloadDesc& p : desc_.payloads) payloads.append(p.target);
    d["payloads"] = payloads;
    py::list kernels;
    for (const KernelDesc& k : desc_.kernels) {
      py::dict kd;
      kd["name"] = k.name;
      kd["inputs"] = TypeList(k.inputs);
      kd["output"] = TypeDict(k.output);
      kd["has_output"] = k.has_output();
      kd["hal_level"] = k.hal_level.ToString();
      kd["cpu_only_reasons"] = k.cpu_only_reasons;
      kernels.append(kd);
    }
    d["kernels"] = kernels;
    py::list globals;
    for (const GlobalDesc& g : desc_.globals) {
      py::dict gd;
      gd["name"] = g.name;
      gd["type"] = TypeDict(g.type);
      gd["size"] = g.size;
      gd["is_const"] = g.is_const;
      gd["is_allocation"] = g.is_allocation;
      gd["is_static"] = g.is_static;
      gd["default"] = py::bytes(reinterpret_cast<const char*>(g.default_value.data()), g.default_value.size());
      globals.append(gd);
    }
    d["globals"] = globals;
    py::list invokables;
    for (const InvokableDesc& f : desc_.invokables) {
      py::dict fd;
      fd["name"] = f.name;
      py::list params;
      for (const ParamDesc& p : f.params) {
        py::dict pd;
        pd["name"] = p.name;
        pd["type"] = TypeDict(p.type);
        pd["offset"] = p.offset;
        params.append(pd);
      }
      fd["params"] = params;
      fd["args_size"] = f.args_size;
      invokables.append(fd);
    }
    d["invokables"] = invokables;
    py::list reductions;
    for (const ReductionDesc& r : desc_.reductions) {
      py::dict rd;
      rd["name"] = r.name;
      rd["inputs"] = TypeList(r.inputs);
      rd["result"] = TypeDict(r.result);
      rd["cpu_only_reasons"] = r.cpu_only_reasons;
      reductions.append(rd);
    }
    d["reductions"] = reductions;
    return d;
  }

 private:
  Messages messages_;
  KilnModule* module_ = nullptr;
  KernelModuleDesc desc_;
  std::string bytes_;
};

// kilnc as a library: the module's bytes, or KilnError carrying kilnc's diagnostics.
py::bytes Compile(const std::string& source, const std::string& filename, const std::vector<std::string>& include_dirs,
                  const std::vector<std::string>& defines, int opt_level, bool gpu) {
  CompileOptions options;
  options.include_dirs = include_dirs;
  options.defines = defines;
  options.opt_level = opt_level;
  options.lower_gpu = gpu;
  CompileResult result;
  {
    py::gil_scoped_release release;
    CompileKernelSource(source, filename, options, &result);
  }
  if (!result.ok) throw KilnException("kilnc could not compile " + filename + ":\n" + result.diagnostics);
  return py::bytes(reinterpret_cast<const char*>(result.kmod.data()), result.kmod.size());
}

// ---- Decision logs ----

template <typename Object, typename CountFn, typename GetFn>
py::list Decisions(const Object* object, CountFn count, GetFn get) {
  py::list list;
  for (int32_t i = 0; i < count(object); ++i) {
    KilnDecisionKind kind;
    const char* subject = nullptr;
    const char* message = nullptr;
    if (get(object, i, &kind, &subject, &message) != kKilnOk) continue;
    py::dict d;
    d["kind"] = KilnDecisionKindName(kind);
    d["subject"] = subject != nullptr ? subject : "";
    d["message"] = message != nullptr ? message : "";
    list.append(d);
  }
  return list;
}

KilnDevicePolicy ParsePolicy(const std::string& device) {
  if (device == "auto") return kKilnDeviceAuto;
  if (device == "cpu") return kKilnDeviceCpuOnly;
  if (device == "gpu") return kKilnDevicePreferGpu;
  if (device == "gpu-only") return kKilnDeviceGpuOnly;
  throw py::value_error("device must be \"auto\", \"cpu\", \"gpu\" or \"gpu-only\", not \"" + device + "\"");
}

// ---- Custom ops ----

// A custom op served by a Python callable: fn(*inputs) -> output array or a sequence of them. Its outputs are
// sized in Prepare by `shapes(*input_shapes)` (a shape, or a list of one per output), or, when that is None,
// take the broadcast shape of the inputs, as kernel-backed ops do.
struct PythonOp {
  std::string name;
  py::object fn;
  py::object shapes;
};

KilnStatus PythonOpPrepare(void* user_data, KilnOpaqueContext* context, KilnOpaqueNode* node) {
  auto* op = static_cast<PythonOp*>(user_data);
  py::gil_scoped_acquire gil;
  try {
    py::list shapes;
    for (int i = 0; i < KilnOpaqueNodeNumberOfInputs(node); ++i) {
      const KilnOpaqueTensor* t = KilnOpaqueNodeGetInput(context, node, i);
      if (t != nullptr) shapes.append(py::tuple(py::cast(Shape(t))));
    }
    const int outputs = KilnOpaqueNodeNumberOfOutputs(node);
    py::list per_output;
    if (op->shapes.is_none()) {
      if (py::len(shapes) == 0) return kKilnOk;  // nothing to broadcast: the declared shapes stand
      py::object shape = py::module_::import("numpy").attr("broadcast_shapes")(*shapes);
      for (int i = 0; i < outputs; ++i) per_output.append(shape);
    } else {
      py::object result = op->shapes(*shapes);
      py::list list = py::cast<py::list>(py::module_::import("builtins").attr("list")(result));
      const bool one_shape = py::len(list) == 0 || !py::hasattr(list[0], "__len__");
      if (one_shape) {
        per_output.append(list);
      } else {
        per_output = list;
      }
    }
    if (static_cast<int>(py::len(per_output)) != outputs) {
      KilnOpaqueContextReportError(context, "custom op '%s' (a Python function): the output shapes name %d output(s); "
                                   "the node has %d",
                                   op->name.c_str(), static_cast<int>(py::len(per_output)), outputs);
      return kKilnError;
    }
    for (int i = 0; i < outputs; ++i) {
      const std::vector<int> dims = py::cast<std::vector<int>>(per_output[static_cast<size_t>(i)]);
      KilnIntArray* size = KilnIntArrayCreate(static_cast<int>(dims.size()));
      if (size == nullptr) return kKilnOutOfMemory;
      for (size_t k = 0; k < dims.size(); ++k) size->data[k] = dims[k];
      if (KilnStatus s = KilnOpaqueContextResizeTensor(context, KilnOpaqueNodeGetOutput(context, node, i), size);
          s != kKilnOk) {
        return s;
      }
    }
    return kKilnOk;
  } catch (py::error_already_set& e) {
    KilnOpaqueContextReportError(context, "custom op '%s' (a Python function): sizing its outputs raised %s",
                                 op->name.c_str(), e.what());
    return kKilnError;
  } catch (std::exception& e) {
    KilnOpaqueContextReportError(context, "custom op '%s' (a Python function): sizing its outputs: %s",
                                 op->name.c_str(), e.what());
    return kKilnError;
  }
}

KilnStatus PythonOpInvoke(void* user_data, KilnOpaqueContext* context, KilnOpaqueNode* node) {
  auto* op = static_cast<PythonOp*>(user_data);
  py::gil_scoped_acquire gil;
  try {
    py::list inputs;
    for (int i = 0; i < KilnOpaqueNodeNumberOfInputs(node); ++i) {
      const KilnOpaqueTensor* t = KilnOpaqueNodeGetInput(context, node, i);
      if (t == nullptr) {
        inputs.append(py::none());
        continue;
      }
      // A copy: the callable may keep what it is given, and the arena is reused.
      py::array a(DtypeOf(KilnOpaqueTensorType(t)), Shape(t));
      if (KilnOpaqueTensorByteSize(t) > 0) std::memcpy(a.mutable_data(), KilnOpaqueTensorData(t), KilnOpaqueTensorByteSize(t));
      inputs.append(a);
    }
    py::object result = op->fn(*inputs);
    const int outputs = KilnOpaqueNodeNumberOfOutputs(node);
    py::list results;
    if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
      for (py::handle h : result) results.append(h);
    } else {
      results.append(result);
    }
    if (static_cast<int>(py::len(results)) != outputs) {
      KilnOpaqueContextReportError(context, "custom op '%s' (a Python function) returned %d output(s); the node has %d",
                                   op->name.c_str(), static_cast<int>(py::len(results)), outputs);
      return kKilnError;
    }
    py::module_ np = py::module_::import("numpy");
    for (int i = 0; i < outputs; ++i) {
      KilnOpaqueTensor* t = KilnOpaqueNodeGetOutput(context, node, i);
      const py::dtype dtype = DtypeOf(KilnOpaqueTensorType(t));
      py::array value = np.attr("asarray")(results[static_cast<size_t>(i)]);
      const std::vector<py::ssize_t> want = Shape(t);
      const std::vector<py::ssize_t> got(value.shape(), value.shape() + value.ndim());
      if (got != want) {
        const std::string got_s = py::str(py::tuple(py::cast(got))), want_s = py::str(py::tuple(py::cast(want)));
        KilnOpaqueContextReportError(context, "custom op '%s' (a Python function): output %d has shape %s; the model "
                                     "declares %s",
                                     op->name.c_str(), i, got_s.c_str(), want_s.c_str());
        return kKilnError;
      }
      py::array cast = value.attr("astype")(dtype, py::arg("order") = "C", py::arg("casting") = "same_kind");
      if (KilnOpaqueTensorByteSize(t) > 0) {
        std::memcpy(KilnOpaqueTensorData(t), cast.data(), KilnOpaqueTensorByteSize(t));
      }
    }
    return kKilnOk;
  } catch (py::error_already_set& e) {
    KilnOpaqueContextReportError(context, "custom op '%s' (a Python function) raised %s", op->name.c_str(), e.what());
    return kKilnError;
  } catch (std::exception& e) {
    KilnOpaqueContextReportError(context, "custom op '%s' (a Python function): %s", op->name.c_str(), e.what());
    return kKilnError;
  }
}

// ---- Interpreter ----

class Interpreter {
 public:
  // `custom_ops`: (name, kind, ...) tuples: ("kernel", Module, kernel, {input index: global}, options_as_globals)
  // or ("python", callable, output shapes callable or None).
  Interpreter(py::object model_content, const std::string& model_path, int num_threads, const std::string& device,
              const std::string& driver_path, bool reference_kernels, bool profiling, const py::list& custom_ops) {
    const KilnDevicePolicy policy = ParsePolicy(device);
    if (!model_content.is_none()) {
      const std::string bytes = py::bytes(model_content);
      model_ = KilnModelCreateWithErrorReporter(bytes.data(), bytes.size(), &Messages::Report, &messages_);
      if (model_ == nullptr) messages_.Raise("could not load the model from model_content");
    } else {
      model_ = KilnModelCreateFromFileWithErrorReporter(model_path.c_str(), &Messages::Report, &messages_);
      if (model_ == nullptr) messages_.Raise("could not load the model " + model_path);
    }
    options_ = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetErrorReporter(options_, &Messages::Report, &messages_);
    KilnInterpreterOptionsSetNumThreads(options_, num_threads);
    KilnInterpreterOptionsSetDevicePolicy(options_, policy);
    if (!driver_path.empty()) KilnInterpreterOptionsSetDriverPath(options_, driver_path.c_str());
    KilnInterpreterOptionsSetUseReferenceKernels(options_, reference_kernels);
    KilnInterpreterOptionsSetProfiling(options_, profiling);
    for (py::handle entry : custom_ops) AddCustomOp(py::cast<py::tuple>(entry));
    KilnStatus status = kKilnOk;
    {
      py::gil_scoped_release release;
      interpreter_ = KilnInterpreterCreateWithStatus(model_, options_, &status);
    }
    if (interpreter_ == nullptr) messages_.Raise("could not create the interpreter");
    messages_.Take();
  }

  ~Interpreter() {
    for (auto& entry : runners_) KilnSignatureRunnerDelete(entry.second);
    KilnInterpreterDelete(interpreter_);
    for (KilnOperator* op : operators_) KilnOperatorDelete(op);
    KilnInterpreterOptionsDelete(options_);
    KilnModelDelete(model_);
  }
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  int InputCount() const { return KilnInterpreterGetInputTensorCount(interpreter_); }
  int OutputCount() const { return KilnInterpreterGetOutputTensorCount(interpreter_); }
  int InputTensorIndex(int i) const { return KilnModelGetInputTensorIndex(model_, i); }
  int OutputTensorIndex(int i) const { return KilnModelGetOutputTensorIndex(model_, i); }

  // The details LiteRT's get_input_details() gives, for input (`output` false) or output `i`.
  py::dict Details(bool output, int i) const {
    const KilnTensor* t = Tensor(output, i);
    py::dict d;
    d["name"] = std::string(KilnTensorName(t));
    d["index"] = output ? OutputTensorIndex(i) : InputTensorIndex(i);
    std::vector<int32_t> shape;
    for (int k = 0; k < KilnTensorNumDims(t); ++k) shape.push_back(KilnTensorDim(t, k));
    d["shape"] = py::array_t<int32_t>(static_cast<py::ssize_t>(shape.size()), shape.data());
    const std::string dtype = DtypeName(KilnTensorType(t));
    d["dtype"] = dtype.empty() ? py::object(py::str(KilnTypeGetName(KilnTensorType(t)))) : py::object(py::dtype(dtype));
    const KilnQuantizationParams q = KilnTensorQuantizationParams(t);
    d["quantization"] = py::make_tuple(q.scale, q.zero_point);
    const float* scales = nullptr;
    const int32_t* zero_points = nullptr;
    int count = 0, dim = 0;
    KilnTensorGetPerChannelQuantization(t, &scales, &zero_points, &count, &dim);
    py::dict qp;
    qp["scales"] = py::array_t<float>(count, scales);
    qp["zero_points"] = py::array_t<int32_t>(count, zero_points);
    qp["quantized_dimension"] = dim;
    d["quantization_parameters"] = qp;
    return d;
  }

  void Resize(int i, const std::vector<int>& dims) {
    messages_.Check(KilnInterpreterResizeInputTensor(interpreter_, i, dims.data(), static_cast<int32_t>(dims.size())),
                    "could not resize input " + std::to_string(i));
  }

  void Allocate() {
    KilnStatus s;
    {
      py::gil_scoped_release release;
      s = KilnInterpreterAllocateTensors(interpreter_);
    }
    messages_.Check(s, "allocate_tensors failed");
  }

  void Invoke() {
    KilnStatus s;
    {
      py::gil_scoped_release release;
      s = KilnInterpreterInvoke(interpreter_);
    }
    messages_.Check(s, "invoke failed");
  }

  // A NumPy view of input or output `i` (valid until the next resize or allocation), kept alive by `self`.
  static py::array ViewOf(py::object self, bool output, int i) {
    auto& me = self.cast<Interpreter&>();
    const KilnTensor* t = me.Tensor(output, i);
    if (KilnTensorData(t) == nullptr) {
      throw KilnException("tensor '" + std::string(KilnTensorName(t)) + "' has no memory yet; call allocate_tensors()");
    }
    return View(KilnTensorType(t), Shape(t), KilnTensorData(t), self);
  }

  // Signature runners over any subgraph (KilnSignatureRunner), by signature key and tensor name.
  void SignatureResize(const std::string& key, const std::string& name, const std::vector<int>& dims) {
    messages_.Check(KilnSignatureRunnerResizeInputTensor(Runner(key), name.c_str(), dims.data(),
                                                         static_cast<int32_t>(dims.size())),
                    "could not resize input '" + name + "' of signature '" + key + "'");
  }

  void SignatureAllocate(const std::string& key) {
    KilnSignatureRunner* runner = Runner(key);
    KilnStatus s;
    {
      py::gil_scoped_release release;
      s = KilnSignatureRunnerAllocateTensors(runner);
    }
    messages_.Check(s, "allocate_tensors failed for signature '" + key + "'");
  }

  void SignatureInvoke(const std::string& key) {
    KilnSignatureRunner* runner = Runner(key);
    KilnStatus s;
    {
      py::gil_scoped_release release;
      s = KilnSignatureRunnerInvoke(runner);
    }
    messages_.Check(s, "invoke failed for signature '" + key + "'");
  }

  // The signature's tensor `name`: shape and dtype (LiteRT's details, less the index), and a NumPy view of it
  // (after allocation) kept alive by `self`.
  py::dict SignatureDetails(const std::string& key, bool output, const std::string& name) {
    const KilnTensor* t = SignatureTensor(key, output, name);
    py::dict d;
    d["name"] = name;
    std::vector<int32_t> shape;
    for (int k = 0; k < KilnTensorNumDims(t); ++k) shape.push_back(KilnTensorDim(t, k));
    d["shape"] = py::array_t<int32_t>(static_cast<py::ssize_t>(shape.size()), shape.data());
    const std::string dtype = DtypeName(KilnTensorType(t));
    d["dtype"] = dtype.empty() ? py::object(py::str(KilnTypeGetName(KilnTensorType(t)))) : py::object(py::dtype(dtype));
    const KilnQuantizationParams q = KilnTensorQuantizationParams(t);
    d["quantization"] = py::make_tuple(q.scale, q.zero_point);
    return d;
  }

  static py::array SignatureView(py::object self, const std::string& key, bool output, const std::string& name) {
    auto& me = self.cast<Interpreter&>();
    const KilnTensor* t = me.SignatureTensor(key, output, name);
    if (KilnTensorData(t) == nullptr) {
      throw KilnException("tensor '" + name + "' of signature '" + key + "' has no memory yet; call allocate_tensors()");
    }
    return View(KilnTensorType(t), Shape(t), KilnTensorData(t), self);
  }

  py::list GetDecisions() const {
    return Decisions(interpreter_, KilnInterpreterGetDecisionCount, KilnInterpreterGetDecision);
  }

  py::list Profile() const {
    py::list events;
    for (int32_t i = 0; i < KilnInterpreterGetProfileEventCount(interpreter_); ++i) {
      KilnProfileEvent e{};
      e.struct_size = sizeof e;
      if (KilnInterpreterGetProfileEvent(interpreter_, i, &e) != kKilnOk) continue;
      py::dict d;
      d["first_node"] = e.first_node;
      d["last_node"] = e.last_node;
      d["op"] = e.op != nullptr ? e.op : "";
      d["engine"] = e.engine != nullptr ? e.engine : "";
      d["start_ns"] = e.start_ns;
      d["duration_ns"] = e.duration_ns;
      events.append(d);
    }
    return events;
  }

  // The model's SignatureDefs: key, subgraph, inputs and outputs as (name, tensor index) pairs.
  py::list Signatures() const {
    py::list list;
    for (int32_t i = 0; i < KilnModelGetSignatureCount(model_); ++i) {
      const char* key = nullptr;
      int32_t subgraph = 0, inputs = 0, outputs = 0;
      if (KilnModelGetSignature(model_, i, &key, &subgraph, &inputs, &outputs) != kKilnOk) continue;
      py::dict d;
      d["key"] = key;
      d["subgraph"] = subgraph;
      for (int output = 0; output < 2; ++output) {
        py::list tensors;
        for (int32_t k = 0; k < (output ? outputs : inputs); ++k) {
          const char* name = nullptr;
          int32_t tensor = -1;
          const KilnStatus s = output ? KilnModelGetSignatureOutput(model_, i, k, &name, &tensor)
                                      : KilnModelGetSignatureInput(model_, i, k, &name, &tensor);
          if (s == kKilnOk) tensors.append(py::make_tuple(name, tensor));
        }
        d[output ? "outputs" : "inputs"] = tensors;
      }
      list.append(d);
    }
    return list;
  }

  py::list Nodes() const {
    py::list nodes;
    for (int32_t i = 0; i < KilnInterpreterGetNodeCount(interpreter_); ++i) {
      int32_t code = 0, version = 0;
      const char* custom = nullptr;
      KilnInterpreterGetNodeInfo(interpreter_, i, &code, &custom, &version);
      py::dict d;
      d["index"] = i;
      d["op"] = custom != nullptr ? std::string(custom)
                                  : std::string(KilnBuiltinOperatorGetName(static_cast<KilnBuiltinOperator>(code)));
      d["custom"] = custom != nullptr;
      d["version"] = version;
      nodes.append(d);
    }
    return nodes;
  }

 private:
  const KilnTensor* Tensor(bool output, int i) const {
    const int count = output ? OutputCount() : InputCount();
    if (i < 0 || i >= count) {
      throw py::index_error(std::string(output ? "output" : "input") + " " + std::to_string(i) + " out of range: the model has " +
                            std::to_string(count));
    }
    return output ? KilnInterpreterGetOutputTensor(interpreter_, i) : KilnInterpreterGetInputTensor(interpreter_, i);
  }

  KilnSignatureRunner* Runner(const std::string& key) {
    auto it = runners_.find(key);
    if (it != runners_.end()) return it->second;
    KilnSignatureRunner* runner = KilnInterpreterGetSignatureRunner(interpreter_, key.c_str());
    if (runner == nullptr) messages_.Raise("no signature runner for '" + key + "'");
    runners_[key] = runner;
    return runner;
  }

  const KilnTensor* SignatureTensor(const std::string& key, bool output, const std::string& name) {
    KilnSignatureRunner* runner = Runner(key);
    const KilnTensor* t = output ? KilnSignatureRunnerGetOutputTensor(runner, name.c_str())
                                 : KilnSignatureRunnerGetInputTensor(runner, name.c_str());
    if (t == nullptr) {
      throw py::value_error("signature '" + key + "' has no " + (output ? "output" : "input") + " '" + name + "'");
    }
    return t;
  }

  void AddCustomOp(const py::tuple& entry) {
    const std::string name = py::cast<std::string>(entry[0]);
    const std::string kind = py::cast<std::string>(entry[1]);
    if (kind == "kernel") {
      // Keep the module alive as long as the operator: the operator also holds the runtime's handle.
      keep_.push_back(entry[2]);
      const Module& module = py::cast<const Module&>(entry[2]);
      const std::string kernel = py::cast<std::string>(entry[3]);
      KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, name.c_str(), 1);
      operators_.push_back(op);
      messages_.Check(KilnOperatorSetKernel(op, module.handle(), kernel.c_str()),
                      "custom op '" + name + "': the module has no kernel '" + kernel + "'");
      for (auto item : py::cast<py::dict>(entry[4])) {
        const int input = py::cast<int>(item.first);
        const std::string global = py::cast<std::string>(item.second);
        messages_.Check(KilnOperatorSetKernelInputGlobal(op, input, global.c_str()),
                        "custom op '" + name + "': cannot bind input " + std::to_string(input) + " to '" + global + "'");
      }
      if (!py::cast<bool>(entry[5])) {
        messages_.Check(KilnOperatorSetKernelOptionsAsGlobals(op, false), "custom op '" + name + "'");
      }
      KilnInterpreterOptionsAddOperator(options_, op);
    } else if (kind == "python") {
      python_ops_.push_back(std::make_unique<PythonOp>(PythonOp{name, py::reinterpret_borrow<py::object>(entry[2]),
                                                                py::reinterpret_borrow<py::object>(entry[3])}));
      KilnOperator* op = KilnOperatorCreateWithData(kKilnBuiltinCustom, name.c_str(), 1, python_ops_.back().get());
      operators_.push_back(op);
      KilnOperatorSetPrepareWithData(op, &PythonOpPrepare);
      KilnOperatorSetInvokeWithData(op, &PythonOpInvoke);
      KilnInterpreterOptionsAddOperator(options_, op);
    } else {
      throw py::value_error("unknown custom op kind '" + kind + "'");
    }
  }

  Messages messages_;
  KilnModel* model_ = nullptr;
  KilnInterpreterOptions* options_ = nullptr;
  KilnInterpreter* interpreter_ = nullptr;
  std::vector<KilnOperator*> operators_;
  std::map<std::string, KilnSignatureRunner*> runners_;  // by signature key, deleted before the interpreter
  std::vector<std::unique_ptr<PythonOp>> python_ops_;
  std::vector<py::object> keep_;
};

// ---- Compute: contexts, tensors, scripts ----

// The context and its messages; scripts and tensors share ownership, so it is deleted after all of them.
struct ContextState {
  Messages messages;
  KilnContext* context = nullptr;
  ~ContextState() { KilnContextDelete(context); }
};

class Context {
 public:
  Context(const std::string& device, int num_threads, const std::string& driver_path)
      : state_(std::make_shared<ContextState>()) {
    KilnContextOptions* options = KilnContextOptionsCreate();
    KilnContextOptionsSetErrorReporter(options, &Messages::Report, &state_->messages);
    KilnContextOptionsSetNumThreads(options, num_threads);
    try {
      KilnContextOptionsSetDevicePolicy(options, ParsePolicy(device));
    } catch (...) {
      KilnContextOptionsDelete(options);
      throw;
    }
    if (!driver_path.empty()) KilnContextOptionsSetDriverPath(options, driver_path.c_str());
    {
      py::gil_scoped_release release;
      state_->context = KilnContextCreate(options);
    }
    KilnContextOptionsDelete(options);
    if (state_->context == nullptr) state_->messages.Raise("could not create a context for device \"" + device + "\"");
    state_->messages.Take();
  }
  const std::shared_ptr<ContextState>& state() const { return state_; }
  py::list GetDecisions() const { return Decisions(state_->context, KilnContextGetDecisionCount, KilnContextGetDecision); }

 private:
  std::shared_ptr<ContextState> state_;
};

// A NumPy array as a tensor of a context: its memory used in place when it is C-contiguous and aligned for the
// CPU driver (KilnTensorCreateFromHostMemory), else copied in (and, for an output, back by CopyBack).
class Tensor {
 public:
  Tensor(std::shared_ptr<ContextState> state, py::array array, bool writable) : state_(std::move(state)), array_(array) {
    const KilnType type = TypeFromDtype(array.dtype());
    if (type == kKilnNoType) {
      throw py::type_error("arrays of dtype " + std::string(py::str(array.dtype())) + " cannot be Kiln tensors");
    }
    std::vector<int> dims;
    for (py::ssize_t i = 0; i < array.ndim(); ++i) dims.push_back(static_cast<int>(array.shape(i)));
    const bool contiguous = (array.flags() & py::array::c_style) != 0;
    const bool aligned = reinterpret_cast<uintptr_t>(array.data()) % KILN_HOST_MEMORY_ALIGNMENT == 0;
    if (contiguous && aligned && array.nbytes() > 0 && (!writable || array.writeable())) {
      tensor_ = KilnTensorCreateFromHostMemory(state_->context, type, dims.data(), static_cast<int32_t>(dims.size()),
                                               const_cast<void*>(array.data()), static_cast<size_t>(array.nbytes()));
      if (tensor_ == nullptr) state_->messages.Raise("could not wrap the array");
      wrapped_ = true;
    } else {
      tensor_ = KilnTensorCreate(state_->context, type, dims.data(), static_cast<int32_t>(dims.size()));
      if (tensor_ == nullptr) state_->messages.Raise("could not create a tensor");
      py::array c = py::array::ensure(array, py::array::c_style | py::array::forcecast);
      if (c.nbytes() > 0) std::memcpy(KilnTensorData(tensor_), c.data(), static_cast<size_t>(c.nbytes()));
    }
  }
  ~Tensor() { KilnTensorDelete(tensor_); }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  KilnTensor* handle() const { return tensor_; }
  bool wrapped() const { return wrapped_; }
  // After a launch: an output that was copied in goes back into the caller's array.
  void CopyBack() {
    if (wrapped_ || array_.nbytes() == 0) return;
    py::array tmp(array_.dtype(), std::vector<py::ssize_t>(array_.shape(), array_.shape() + array_.ndim()),
                  KilnTensorData(tensor_));
    py::module_::import("numpy").attr("copyto")(array_, tmp);
  }

 private:
  std::shared_ptr<ContextState> state_;
  py::array array_;
  KilnTensor* tensor_ = nullptr;
  bool wrapped_ = false;
};

std::unique_ptr<KilnLaunchOptions> LaunchOptions(const py::object& limits) {
  if (limits.is_none()) return nullptr;
  auto options = std::make_unique<KilnLaunchOptions>();
  *options = KilnLaunchOptions{};
  options->struct_size = sizeof(KilnLaunchOptions);
  auto t = py::cast<std::vector<uint32_t>>(limits);
  if (t.size() != 6) throw py::value_error("launch limits are (x_start, x_end, y_start, y_end, z_start, z_end)");
  options->x_start = t[0];
  options->x_end = t[1];
  options->y_start = t[2];
  options->y_end = t[3];
  options->z_start = t[4];
  options->z_end = t[5];
  return options;
}

class Script {
 public:
  Script(const Context& context, py::object module) : state_(context.state()), module_(module) {
    script_ = KilnScriptCreate(state_->context, module.cast<const Module&>().handle());
    if (script_ == nullptr) state_->messages.Raise("could not create the script");
    state_->messages.Take();
  }
  ~Script() {
    KilnScriptDelete(script_);
    bound_.clear();  // after the script: its bindings go with it
  }
  Script(const Script&) = delete;
  Script& operator=(const Script&) = delete;

  void SetGlobal(const std::string& name, const py::bytes& value) {
    const std::string v = value;
    state_->messages.Check(KilnScriptSetGlobal(script_, name.c_str(), v.data(), v.size()),
                           "could not set global '" + name + "'");
  }
  py::bytes GetGlobal(const std::string& name, size_t size) const {
    std::string v(size, '\0');
    state_->messages.Check(KilnScriptGetGlobal(script_, name.c_str(), v.data(), size),
                           "could not read global '" + name + "'");
    return py::bytes(v);
  }
  void Bind(const std::string& name, py::object array, int vector_size) {
    std::unique_ptr<Tensor> tensor;
    if (!array.is_none()) tensor = std::make_unique<Tensor>(state_, array.cast<py::array>(), true);
    KilnTensor* handle = tensor ? tensor->handle() : nullptr;
    const KilnStatus s = vector_size > 0 ? KilnScriptBindAllocationWithElement(script_, name.c_str(), handle, vector_size)
                                         : KilnScriptBindAllocation(script_, name.c_str(), handle);
    state_->messages.Check(s, "could not bind '" + name + "'");
    for (auto it = bound_.begin(); it != bound_.end(); ++it) {
      if (it->first == name) {
        bound_.erase(it);
        break;
      }
    }
    if (tensor) bound_.emplace_back(name, std::move(tensor));
  }
  // After a launch: bound arrays that were copied get the kernel's writes.
  void CopyBackBound() {
    for (auto& b : bound_) b.second->CopyBack();
  }

  void ForEach(const std::string& kernel, const std::vector<py::array>& inputs, py::object out, py::object limits) {
    std::vector<std::unique_ptr<Tensor>> in;
    std::vector<const KilnTensor*> handles;
    for (const py::array& a : inputs) {
      in.push_back(std::make_unique<Tensor>(state_, a, false));
      handles.push_back(in.back()->handle());
    }
    std::unique_ptr<Tensor> output;
    if (!out.is_none()) output = std::make_unique<Tensor>(state_, out.cast<py::array>(), true);
    auto options = LaunchOptions(limits);
    KilnStatus s;
    {
      py::gil_scoped_release release;
      s = KilnScriptForEach(script_, kernel.c_str(), handles.data(), static_cast<int32_t>(handles.size()),
                            output ? output->handle() : nullptr, options.get());
    }
    state_->messages.Check(s, "foreach '" + kernel + "' failed");
    if (output) output->CopyBack();
    CopyBackBound();
  }

  py::bytes Reduce(const std::string& name, const std::vector<py::array>& inputs, size_t result_size, py::object limits) {
    std::vector<std::unique_ptr<Tensor>> in;
    std::vector<const KilnTensor*> handles;
    for (const py::array& a : inputs) {
      in.push_back(std::make_unique<Tensor>(state_, a, false));
      handles.push_back(in.back()->handle());
    }
    std::string result(result_size, '\0');
    auto options = LaunchOptions(limits);
    KilnStatus s;
    {
      py::gil_scoped_release release;
      s = KilnScriptReduce(script_, name.c_str(), handles.data(), static_cast<int32_t>(handles.size()), result.data(),
                           result_size, options.get());
    }
    state_->messages.Check(s, "reduce '" + name + "' failed");
    CopyBackBound();
    return py::bytes(result);
  }

  void Invoke(const std::string& name, const py::bytes& args) {
    const std::string a = args;
    KilnStatus s;
    {
      py::gil_scoped_release release;
      s = KilnScriptInvoke(script_, name.c_str(), a.empty() ? nullptr : a.data(), a.size());
    }
    state_->messages.Check(s, "invoke '" + name + "' failed");
    CopyBackBound();
  }

 private:
  std::shared_ptr<ContextState> state_;
  py::object module_;
  KilnScript* script_ = nullptr;
  std::vector<std::pair<std::string, std::unique_ptr<Tensor>>> bound_;
};

}  // namespace
}  // namespace kiln::python

PYBIND11_MODULE(_kiln, m) {
  using namespace kiln::python;
  m.doc() = "Kiln's C API for the Python package `kiln` (use `import kiln`, not this module)";
  py::register_exception<KilnException>(m, "KilnError", PyExc_RuntimeError);
  m.def("version", &KilnVersion);
  m.def("compiler_version", &kiln::CompilerVersion);
  m.def("compile", &Compile, py::arg("source"), py::arg("filename"), py::arg("include_dirs"), py::arg("defines"),
        py::arg("opt_level"), py::arg("gpu"));

  py::class_<Module>(m, "Module")
      .def(py::init<const py::bytes&>())
      .def("reflection", &Module::Reflection)
      .def("bytes", &Module::bytes);

  py::class_<Interpreter>(m, "Interpreter")
      .def(py::init<py::object, const std::string&, int, const std::string&, const std::string&, bool, bool,
                    const py::list&>())
      .def("input_count", &Interpreter::InputCount)
      .def("output_count", &Interpreter::OutputCount)
      .def("input_tensor_index", &Interpreter::InputTensorIndex)
      .def("output_tensor_index", &Interpreter::OutputTensorIndex)
      .def("details", &Interpreter::Details)
      .def("resize", &Interpreter::Resize)
      .def("allocate", &Interpreter::Allocate)
      .def("invoke", &Interpreter::Invoke)
      .def("view", &Interpreter::ViewOf)
      .def("decisions", &Interpreter::GetDecisions)
      .def("profile", &Interpreter::Profile)
      .def("nodes", &Interpreter::Nodes)
      .def("signatures", &Interpreter::Signatures)
      .def("signature_resize", &Interpreter::SignatureResize)
      .def("signature_allocate", &Interpreter::SignatureAllocate)
      .def("signature_invoke", &Interpreter::SignatureInvoke)
      .def("signature_details", &Interpreter::SignatureDetails)
      .def("signature_view", &Interpreter::SignatureView);

  py::class_<Context>(m, "Context")
      .def(py::init<const std::string&, int, const std::string&>())
      .def("decisions", &Context::GetDecisions);

  py::class_<Script>(m, "Script")
      .def(py::init<const Context&, py::object>())
      .def("set_global", &Script::SetGlobal)
      .def("get_global", &Script::GetGlobal)
      .def("bind", &Script::Bind)
      .def("foreach", &Script::ForEach)
      .def("reduce", &Script::Reduce)
      .def("invoke", &Script::Invoke);
}
