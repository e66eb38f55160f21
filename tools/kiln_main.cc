// `kiln`: run and inspect .tflite models from the command line.
//
//   kiln run MODEL [--input NAME=FILE.npy | --input FILE.npy]... [--output-dir DIR] [--dequantize-outputs]
//            [--seed N] [--threads N] [--reference-kernels]
//                  [--op NAME=MODULE.kmod:KERNEL]... [--device cpu|gpu|gpu-only|auto] [--driver PATH]
//                  [--explain]
//   kiln inspect MODEL
//   kiln inspect MODULE.kmod [--device ...] [--driver PATH]   (reflection, GPU forms, placement)
//   kiln inspect --devices [--device ...] [--driver PATH]
//   kiln ops [--missing]     (the builtin ops Kiln serves, with versions; or the schema's ops it does not)
//
// `run` prints each output's shape and first values and writes outputs as .npy in the model's own types;
// inputs not given are filled with seeded random values. `--dequantize-outputs` also prints, and writes as
// float32, each quantized output's real values. `inspect` lists inputs, outputs, and ops with their versions
// and whether Kiln can run them; `inspect --devices` lists the drivers found, loaded or refused (and why) and
// their devices.
// `--explain` prints the decision log: where each node runs and why, and the partitions that run as one
// batch. The CLI uses the public C API for everything it runs.
#include <sys/stat.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "formats/kmod/module.h"
#include "kiln/c_api.h"
#include "kiln/compute.h"
#include "kiln/flex.h"
#include "kiln/operator.h"
#include "tools/cli.h"
#include "tools/npy.h"

namespace {

using namespace kiln::cli;  // NOLINT: the shared CLI pieces

constexpr int kShownValues = 8;

void Usage(FILE* out) {
  std::fprintf(
      out,
      "usage:\n"
      "  kiln run MODEL [--input NAME=FILE.npy | --input FILE.npy]... [--output-dir DIR]\n"
      "                 [--dequantize-outputs] [--seed N] [--threads N] [--reference-kernels]\n"
      "                 [--op NAME=MODULE.kmod:KERNEL]... [--device cpu|gpu|gpu-only|auto] [--driver PATH]\n"
      "                 [--explain] [--signature KEY]\n"
      "      --input an input as .npy, of the input's own type (float32, int8, uint8, int16, int32, int64,\n"
      "              bool, ...); inputs not given get seeded random values (--seed, default 0)\n"
      "      --output-dir writes output <i> as DIR/output_<i>.npy, of the output's own type\n"
      "      --dequantize-outputs for each quantized output, also prints its real values\n"
      "               scale * (q - zero_point) (per channel where it has several scales) and, with\n"
      "               --output-dir, writes them as float32 to DIR/output_<i>.dequantized.npy\n"
      "      --threads threads in all (default -1: one per core)\n"
      "      --reference-kernels run every builtin op on its reference kernel, not on XNNPACK\n"
      "      --op serves the model's custom op NAME with a kernel compiled by kilnc\n"
      "      --device where kernels run: cpu (built-in CPU driver only), gpu (a loaded driver's device\n"
      "               where it can, else the CPU), gpu-only (fail without one), auto (default: a real\n"
      "               GPU or accelerator when a driver has one)\n"
      "      --driver a driver library or directory to load instead of $KILN_DRIVER and the default\n"
      "      --explain print which driver and device runs each node, and why\n"
      "      --signature run the model's signature KEY (its subgraph, inputs and outputs by the signature's\n"
      "               names; `kiln inspect` lists them) instead of subgraph 0\n"
      "  kiln inspect MODEL | MODULE.kmod [--device ...] [--driver PATH]\n"
      "  kiln inspect --devices [--device ...] [--driver PATH]\n"
      "  kiln ops [--missing]  the builtin ops Kiln serves and their versions, one per line; with\n"
      "                        --missing, the .tflite schema's builtin ops it does not serve\n"
      "  kiln --version\n");
}

// Tensor data may sit at any alignment, so values are copied out and in.
template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::string FormatValue(KilnType type, const uint8_t* p) {
  char buf[48];
  switch (type) {
    case kKilnFloat32:
      std::snprintf(buf, sizeof buf, "%.8g", Load<float>(p));
      break;
    case kKilnFloat64:
      std::snprintf(buf, sizeof buf, "%.12g", Load<double>(p));
      break;
    case kKilnInt8:
      std::snprintf(buf, sizeof buf, "%d", static_cast<int8_t>(*p));
      break;
    case kKilnUInt8:
      std::snprintf(buf, sizeof buf, "%u", *p);
      break;
    case kKilnBool:
      std::snprintf(buf, sizeof buf, "%s", *p ? "true" : "false");
      break;
    case kKilnInt16:
      std::snprintf(buf, sizeof buf, "%d", Load<int16_t>(p));
      break;
    case kKilnInt32:
      std::snprintf(buf, sizeof buf, "%d", Load<int32_t>(p));
      break;
    case kKilnInt64:
      std::snprintf(buf, sizeof buf, "%" PRId64, Load<int64_t>(p));
      break;
    default:
      std::snprintf(buf, sizeof buf, "?");
      break;
  }
  return buf;
}

// A compute context on the devices the flags choose; errors go to stderr.
KilnContext* CreateContext(const DeviceFlags& flags) {
  KilnContextOptions* options = KilnContextOptionsCreate();
  KilnContextOptionsSetErrorReporter(options, PrintError, nullptr);
  KilnContextOptionsSetDevicePolicy(options, flags.policy);
  if (!flags.driver.empty()) KilnContextOptionsSetDriverPath(options, flags.driver.c_str());
  KilnContext* context = KilnContextCreate(options);
  KilnContextOptionsDelete(options);
  return context;
}

void PrintContextDecisions(const KilnContext* context) {
  PrintDecisions(KilnContextGetDecisionCount(context),
                 [&](int i, KilnDecisionKind* kind, const char** message) {
                   KilnContextGetDecision(context, i, kind, nullptr, message);
                 });
}

int InspectDevices(const DeviceFlags& flags) {
  KilnContext* context = CreateContext(flags);
  if (context == nullptr) return 1;
  std::printf("devices (policy %s):\n", KilnDevicePolicyName(flags.policy));
  PrintContextDecisions(context);
  KilnContextDelete(context);
  return 0;
}

// `kiln inspect MODULE.kmod`: the module's reflection (kernels, globals, invokables, reductions, with the
// reason any of them has no GPU form), then where each kernel and reduction runs under the device policy.
int InspectModule(const std::string& path, const std::vector<uint8_t>& bytes, const DeviceFlags& flags) {
  kiln::KernelModuleDesc desc;
  std::string error;
  if (!kiln::ReadKernelModule(bytes.data(), bytes.size(), &desc, &error)) {
    std::fprintf(stderr, "kiln: %s: %s\n", path.c_str(), Printable(error.c_str()).c_str());
    return 1;
  }
  std::printf("module: %s\n", path.c_str());
  const std::string description =
      kiln::DescribeKernelModule(desc);  // names from the file: escaped line by line
  for (size_t start = 0; start < description.size();) {
    const size_t end = std::min(description.find('\n', start), description.size());
    std::printf("%s\n", Printable(description.substr(start, end - start).c_str()).c_str());
    start = end + 1;
  }
  KilnModule* module = KilnModuleCreateFromFileWithErrorReporter(path.c_str(), PrintError, nullptr);
  KilnContext* context = CreateContext(flags);
  KilnScript* script = module && context ? KilnScriptCreate(context, module) : nullptr;
  if (script != nullptr) {
    std::printf("placement (policy %s):\n", KilnDevicePolicyName(flags.policy));
    PrintContextDecisions(context);
  }
  KilnScriptDelete(script);
  KilnContextDelete(context);
  KilnModuleDelete(module);
  return script != nullptr ? 0 : 1;
}

// A custom op's options as "key=value" pairs, decoded from the FlexBuffers map the converter writes; bytes that
// are not such a map are counted instead. Keys and strings come from the file, so they are escaped.
std::string CustomOptionsString(const void* data, size_t size) {
  int count = 0;
  if (KilnFlexMapSize(data, size, &count) != kKilnOk) return std::to_string(size) + " bytes, not a FlexBuffers map";
  if (count == 0) return "none (an empty map)";
  std::string text;
  for (int i = 0; i < count; ++i) {
    const char* key = "";
    KilnFlexValueKind kind = kKilnFlexOther;
    if (KilnFlexMapEntry(data, size, i, &key, &kind) != kKilnOk) continue;
    std::string value = "(unreadable)";
    int64_t integer = 0;
    float number = 0;
    bool flag = false;
    const char* string = nullptr;
    float vector[kShownValues];
    int length = 0;
    switch (kind) {
      case kKilnFlexNull: value = "null"; break;
      case kKilnFlexInt:
        if (KilnFlexMapGetInt(data, size, key, &integer) == kKilnOk) value = std::to_string(integer);
        break;
      case kKilnFlexFloat:
        if (KilnFlexMapGetFloat(data, size, key, &number) == kKilnOk) value = FormatValue(kKilnFloat32, reinterpret_cast<const uint8_t*>(&number));
        break;
      case kKilnFlexBool:
        if (KilnFlexMapGetBool(data, size, key, &flag) == kKilnOk) value = flag ? "true" : "false";
        break;
      case kKilnFlexString:
        if (KilnFlexMapGetString(data, size, key, &string) == kKilnOk) value = "\"" + Printable(string) + "\"";
        break;
      case kKilnFlexVector:
        if (KilnFlexMapGetFloatVector(data, size, key, vector, kShownValues, &length) == kKilnOk) {
          value = "[";
          for (int k = 0; k < length && k < kShownValues; ++k)
            value += (k ? ", " : "") + FormatValue(kKilnFloat32, reinterpret_cast<const uint8_t*>(&vector[k]));
          value += length > kShownValues ? ", ...]" : "]";
        } else {
          value = "(a vector of non-numbers)";
        }
        break;
      case kKilnFlexOther: value = "(a nested value)"; break;
    }
    text += (i ? ", " : "") + Printable(key) + "=" + value;
  }
  return text;
}

int Inspect(const std::string& path, const DeviceFlags& flags) {
  {
    // A kernel module (FlatBuffers identifier "KMOD", after the size prefix .kmod files carry) rather than a
    // model.
    std::vector<uint8_t> bytes;
    if (ReadFile(path, &bytes) && bytes.size() >= 12 &&
        (std::memcmp(bytes.data() + 8, "KMOD", 4) == 0 || std::memcmp(bytes.data() + 4, "KMOD", 4) == 0)) {
      return InspectModule(path, bytes, flags);
    }
  }
  KilnModel* model = KilnModelCreateFromFileWithErrorReporter(path.c_str(), PrintError, nullptr);
  if (model == nullptr) return 1;
  // Everything below comes from the verified model through the public API, including ops Kiln cannot run.
  std::printf("model: %s\n", path.c_str());
  if (*KilnModelGetDescription(model) != '\0')
    std::printf("description: %s\n", Printable(KilnModelGetDescription(model)).c_str());
  std::printf("subgraphs: %d, tensors: %d, operators: %d\n", KilnModelGetSubgraphCount(model),
              KilnModelGetTensorCount(model), KilnModelGetOperatorCount(model));
  auto print_tensors = [&](const char* what, int32_t count, int32_t (*tensor_of)(const KilnModel*, int32_t)) {
    std::printf("%s:\n", what);
    for (int32_t i = 0; i < count; ++i) {
      const int32_t index = tensor_of(model, i);
      const char* name = "";
      KilnType type = kKilnNoType;
      int32_t num_dims = 0;
      const int32_t* dims = nullptr;
      KilnModelGetTensor(model, index, &name, &type, &num_dims, &dims);
      std::printf("  %d: '%s' %s%s (tensor %d)\n", i, Printable(name).c_str(), KilnTypeGetName(type),
                  ShapeString(std::vector<int64_t>(dims, dims + num_dims)).c_str(), index);
    }
  };
  print_tensors("inputs", KilnModelGetInputCount(model), KilnModelGetInputTensorIndex);
  print_tensors("outputs", KilnModelGetOutputCount(model), KilnModelGetOutputTensorIndex);
  // Signatures (kiln run --signature KEY): key, subgraph, and the names of inputs and outputs.
  for (int32_t s = 0; s < KilnModelGetSignatureCount(model); ++s) {
    const char* key = "";
    int32_t subgraph = 0, num_inputs = 0, num_outputs = 0;
    KilnModelGetSignature(model, s, &key, &subgraph, &num_inputs, &num_outputs);
    std::printf("signature %d: '%s' (subgraph %d)\n", s, Printable(key).c_str(), subgraph);
    for (int32_t i = 0; i < num_inputs + num_outputs; ++i) {
      const char* name = "";
      int32_t tensor = 0;
      if (i < num_inputs) {
        KilnModelGetSignatureInput(model, s, i, &name, &tensor);
      } else {
        KilnModelGetSignatureOutput(model, s, i - num_inputs, &name, &tensor);
      }
      std::printf("  %s '%s' (tensor %d)\n", i < num_inputs ? "input" : "output", Printable(name).c_str(), tensor);
    }
  }
  std::printf("operators:\n");
  int unresolved = 0;
  for (int32_t i = 0; i < KilnModelGetOperatorCount(model); ++i) {
    KilnBuiltinOperator code = kKilnBuiltinCustom;
    const char* custom_name = nullptr;
    int32_t version = 0;
    KilnModelGetOperator(model, i, &code, &custom_name, &version);
    std::string status;
    std::string name;
    if (code == kKilnBuiltinCustom && KilnCustomOpIsSupported(custom_name, version)) {
      status = "custom, served by Kiln";
      name = "CUSTOM:" + Printable(custom_name);
    } else if (code == kKilnBuiltinCustom) {
      status = "custom: unresolved (kiln run --op NAME=MODULE.kmod:KERNEL, or KilnInterpreterOptionsAddOperator)";
      name = "CUSTOM:" + Printable(custom_name);
      ++unresolved;
    } else {
      const bool found = KilnBuiltinOpIsSupported(code, version);
      const bool code_known = KilnBuiltinOpIsSupported(code, 0);
      status = found        ? "builtin"
               : code_known ? "unresolved: version not supported"
                            : "unresolved: not implemented";
      if (!found) ++unresolved;
      name = KilnBuiltinOperatorGetName(code);
      if (name == "UNKNOWN") name += "(" + std::to_string(static_cast<int>(code)) + ")";
    }
    std::printf("  %3d: %-24s v%d  %s\n", i, name.c_str(), version, status.c_str());
    const void* options = nullptr;
    size_t options_size = 0;
    if (code == kKilnBuiltinCustom && KilnModelGetOperatorCustomOptions(model, i, &options, &options_size) == kKilnOk &&
        options_size != 0) {
      std::printf("       options: %s\n", CustomOptionsString(options, options_size).c_str());
    }
  }
  std::printf("unresolved ops: %d\n", unresolved);
  KilnModelDelete(model);
  return 0;
}

// Formats the first kShownValues values of `count` starting at `data`, with ", ..." when there are more.
std::string FirstValues(KilnType type, const uint8_t* data, size_t count) {
  const size_t element = KilnTypeGetSize(type);
  std::string values;
  for (size_t k = 0; k < count && k < kShownValues; ++k)
    values += (k ? ", " : "") + FormatValue(type, data + k * element);
  if (count > kShownValues) values += ", ...";
  return values;
}

// The real values of a quantized output (`--dequantize-outputs`): printed, and written as float32 next to
// the output's own file when there is one. True when there is nothing to do (not quantized).
bool DequantizeOutput(const KilnTensor* t, const std::string& file) {
  kiln::Quantization quantization;
  const float* scales = nullptr;
  const int32_t* zero_points = nullptr;
  int count = 0;
  if (KilnTensorGetPerChannelQuantization(t, &scales, &zero_points, &count,
                                          &quantization.quantized_dimension) != kKilnOk ||
      count == 0) {
    return true;
  }
  quantization.scales.assign(scales, scales + count);
  quantization.zero_points.assign(zero_points, zero_points + count);
  kiln::NpyArray quantized, real;
  quantized.type = KilnTensorType(t);
  quantized.shape = TensorShape(t);
  const auto* data = static_cast<const uint8_t*>(KilnTensorData(t));
  quantized.data.assign(data, data + KilnTensorByteSize(t));
  std::string error;
  if (!kiln::Dequantize(quantized, quantization, &real, &error)) {
    std::fprintf(stderr, "kiln: --dequantize-outputs: output '%s': %s\n",
                 Printable(KilnTensorName(t)).c_str(), error.c_str());
    return false;
  }
  const std::string how =
      count == 1 ? "scale " + FormatValue(kKilnFloat32, reinterpret_cast<const uint8_t*>(scales)) +
                       ", zero point " + std::to_string(zero_points[0])
                 : std::to_string(count) + " scales along dimension " +
                       std::to_string(quantization.quantized_dimension);
  std::printf("  dequantized (%s): float32%s = [%s]\n", how.c_str(), ShapeString(real.shape).c_str(),
              FirstValues(kKilnFloat32, real.data.data(), real.data.size() / sizeof(float)).c_str());
  if (file.empty()) return true;
  if (!kiln::WriteNpyFile(file, kKilnFloat32, real.shape, real.data.data(), real.data.size(), &error)) {
    std::fprintf(stderr, "kiln: %s\n", error.c_str());
    return false;
  }
  std::printf("  wrote %s\n", file.c_str());
  return true;
}

int Run(const std::string& path, const std::vector<InputSpec>& specs, const std::string& output_dir,
        bool dequantize_outputs, uint32_t seed, const SessionOptions& options) {
  std::unique_ptr<Session> session = Session::Open(path, options);
  if (session == nullptr) return 1;
  KilnInterpreter* interpreter = session->interpreter();
  const DeviceFlags& device = options.device;
  int rc = 1;
  if (!session->SetInputs(specs, seed, true)) goto done;
  if (session->Invoke() != kKilnOk) goto done;
  for (int i = 0; i < session->OutputCount(); ++i) {
    const KilnTensor* t = session->Output(i);
    const KilnType type = KilnTensorType(t);
    const size_t element = KilnTypeGetSize(type);
    const size_t count = element ? KilnTensorByteSize(t) / element : 0;
    std::printf("output %d '%s': %s%s = [%s]\n", i, Printable(session->OutputName(i).c_str()).c_str(),
                KilnTypeGetName(type), ShapeString(TensorShape(t)).c_str(),
                FirstValues(type, static_cast<const uint8_t*>(KilnTensorData(t)), count).c_str());
    const std::string stem = output_dir.empty() ? "" : output_dir + "/output_" + std::to_string(i);
    if (!output_dir.empty()) {
      const std::string file = stem + ".npy";
      std::string error;
      if (!kiln::WriteNpyFile(file, type, TensorShape(t), KilnTensorData(t), KilnTensorByteSize(t), &error)) {
        std::fprintf(stderr, "kiln: %s\n", error.c_str());
        goto done;
      }
      std::printf("  wrote %s\n", file.c_str());
    }
    if (dequantize_outputs && !DequantizeOutput(t, stem.empty() ? "" : stem + ".dequantized.npy")) goto done;
  }
  {
    size_t arena = 0, naive = 0;
    KilnInterpreterGetArenaStats(interpreter, &arena, &naive);
    std::printf("arena: %zu bytes (one buffer per tensor would take %zu bytes)\n", arena, naive);
  }
  if (device.policy == kKilnDevicePreferGpu || device.policy == kKilnDeviceGpuOnly) {
    // Asked for a GPU and got none: one line says so (the decision log says why).
    int kernel_nodes = 0, on_driver = 0;
    for (int i = 0; i < KilnInterpreterGetDecisionCount(interpreter); ++i) {
      KilnDecisionKind kind;
      const char* message = nullptr;
      KilnInterpreterGetDecision(interpreter, i, &kind, nullptr, &message);
      const std::string m = message ? message : "";
      if (kind != kKilnDecisionNode || m.find(", kernel '") == std::string::npos) continue;
      ++kernel_nodes;
      const size_t at = m.find(" runs on ");
      if (at != std::string::npos && m.compare(at + 9, 8, "kiln-cpu") != 0) ++on_driver;
    }
    if (kernel_nodes == 0) {
      std::fprintf(stderr, "kiln: --device %s: this model has no kernel ops, and builtin ops always run on the host "
                   "CPU (--explain shows each node)\n", (device.policy == kKilnDeviceGpuOnly ? "gpu-only" : "gpu"));
    } else if (on_driver == 0) {
      std::fprintf(stderr, "kiln: --device %s: no GPU driver ran anything; all %d kernel node(s) ran on the CPU "
                   "(--explain says why)\n", (device.policy == kKilnDeviceGpuOnly ? "gpu-only" : "gpu"), kernel_nodes);
    }
  }
  rc = 0;
done:
  if (device.explain) {
    std::printf("decisions (policy %s):\n", KilnDevicePolicyName(device.policy));
    PrintDecisions(KilnInterpreterGetDecisionCount(interpreter),
                   [&](int i, KilnDecisionKind* kind, const char** message) {
                     KilnInterpreterGetDecision(interpreter, i, kind, nullptr, message);
                   });
  }
  return rc;
}

// `kiln ops`: every builtin op the schema names, with the version range Kiln's table serves ("CONV_2D 1-8"), or
// with --missing the names of those it does not serve. CUSTOM (custom ops are the application's), DELEGATE (a
// delegate's stand-in, not an op) and the schema's placeholder are neither. docs/ops.md is checked against this.
int ListOps(int argc, char** argv) {
  bool missing = false;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--missing") {
      missing = true;
    } else {
      std::fprintf(stderr, "kiln ops: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }
  // The schema's codes are dense from 0. KilnBuiltinOperator's enumerators end at 209, so its values are those of
  // 8 bits: converting a larger int to it would be undefined behaviour (UBSan says so).
  constexpr int kMaxCode = 256;
  constexpr int kMaxVersion = 64;
  for (int code = 0; code < kMaxCode; ++code) {
    const auto builtin = static_cast<KilnBuiltinOperator>(code);
    const std::string name = KilnBuiltinOperatorGetName(builtin);
    if (name == "UNKNOWN" || builtin == kKilnBuiltinCustom || builtin == kKilnBuiltinDelegate ||
        name.rfind("PLACEHOLDER", 0) == 0) {
      continue;
    }
    int first = 0, last = 0;
    for (int version = 1; version <= kMaxVersion; ++version) {
      if (!KilnBuiltinOpIsSupported(builtin, version)) continue;
      if (first == 0) first = version;
      last = version;
    }
    if (missing) {
      if (first == 0) std::printf("%s\n", name.c_str());
    } else if (first != 0) {
      if (first == last) {
        std::printf("%s %d\n", name.c_str(), first);
      } else {
        std::printf("%s %d-%d\n", name.c_str(), first, last);
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    Usage(stderr);
    return 2;
  }
  const std::string command = argv[1];
  if (command == "--version" || command == "version") {
    std::printf("kiln %s\n", KilnVersion());
    return 0;
  }
  if (command == "-h" || command == "--help" || command == "help") {
    Usage(stdout);
    return 0;
  }
  if (command == "benchmark") return kiln::cli::Benchmark(argc - 1, argv + 1);
  if (command == "ops") return ListOps(argc, argv);
  if (command != "run" && command != "inspect") {
    std::fprintf(stderr, "kiln: unknown command '%s'\n", command.c_str());
    Usage(stderr);
    return 2;
  }
  std::string model;
  std::vector<InputSpec> inputs;
  SessionOptions options;
  std::vector<KernelOpSpec>& kernel_ops = options.kernel_ops;
  std::string output_dir;
  bool dequantize_outputs = false;
  uint32_t seed = 0;
  DeviceFlags& device = options.device;
  bool devices = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kiln: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--input") {
      const std::string v = value("--input");
      const size_t eq = v.find('=');
      inputs.push_back(eq == std::string::npos ? InputSpec{"", v}
                                               : InputSpec{v.substr(0, eq), v.substr(eq + 1)});
    } else if (arg == "--op") {
      KernelOpSpec spec;
      if (!ParseKernelOpSpec(value("--op"), &spec)) return 2;
      kernel_ops.push_back(spec);
    } else if (arg == "--output-dir") {
      output_dir = value("--output-dir");
      mkdir(output_dir.c_str(), 0755);
    } else if (arg == "--dequantize-outputs" && command == "run") {
      dequantize_outputs = true;
    } else if (arg == "--seed") {
      seed = static_cast<uint32_t>(std::strtoul(value("--seed"), nullptr, 10));
    } else if (arg == "--reference-kernels") {
      options.reference_kernels = true;
    } else if (arg == "--threads") {
      options.threads = std::atoi(value("--threads"));
    } else if (arg == "--device") {
      const std::string v = value("--device");
      if (v == "cpu") {
        device.policy = kKilnDeviceCpuOnly;
      } else if (v == "gpu") {
        device.policy = kKilnDevicePreferGpu;
      } else if (v == "gpu-only") {
        device.policy = kKilnDeviceGpuOnly;
      } else if (v == "auto") {
        device.policy = kKilnDeviceAuto;
      } else {
        std::fprintf(stderr, "kiln: --device expects cpu, gpu, gpu-only or auto, got '%s'\n", v.c_str());
        return 2;
      }
    } else if (arg == "--driver") {
      device.driver = value("--driver");
    } else if (arg == "--explain") {
      device.explain = true;
    } else if (arg == "--signature" && command == "run") {
      options.signature = value("--signature");
    } else if (arg == "--devices" && command == "inspect") {
      devices = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "kiln: unknown option '%s'\n", arg.c_str());
      Usage(stderr);
      return 2;
    } else if (model.empty()) {
      model = arg;
    } else {
      std::fprintf(stderr, "kiln: unexpected argument '%s'\n", arg.c_str());
      return 2;
    }
  }
  if (command == "inspect" && devices) return InspectDevices(device);
  if (model.empty()) {
    std::fprintf(stderr, "kiln: %s needs a MODEL\n", command.c_str());
    Usage(stderr);
    return 2;
  }
  if (command == "inspect") return Inspect(model, device);
  return Run(model, inputs, output_dir, dequantize_outputs, seed, options);
}
