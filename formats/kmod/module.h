// Kiln kernel modules (.kmod): the validated, plain C++ view of a compiled script that the runtime and
// drivers use, and the reader/writer of the FlatBuffers file (schema: kmod.fbs). kilnc fills a
// KernelModuleDesc and writes it; the runtime reads it back and never touches the FlatBuffers tables again.
#ifndef KILN_FORMATS_KMOD_MODULE_H_
#define KILN_FORMATS_KMOD_MODULE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/common.h"
#include "kiln/kernel_abi.h"

namespace kiln {

// Bumped whenever an older reader would misread a module; the reader refuses newer ones.
constexpr uint32_t kKernelModuleFormatVersion = 1;
constexpr char kKernelModuleIdentifier[] = "KMOD";
// The payload holding LLVM bitcode for the CPU driver (see kiln/kernel_abi.h for its symbols).
constexpr char kPayloadTargetLlvmBitcode[] = "llvm-bc";

struct HalLevel {
  uint16_t major = 1;
  uint16_t minor = 0;

  bool operator<(const HalLevel& other) const {
    return major != other.major ? major < other.major : minor < other.minor;
  }
  bool operator==(const HalLevel& other) const { return major == other.major && minor == other.minor; }
  bool operator!=(const HalLevel& other) const { return !(*this == other); }
  std::string ToString() const { return std::to_string(major) + "." + std::to_string(minor); }
};

// The newest HAL level of kernel runtime services this runtime provides.
constexpr HalLevel kMaxSupportedHalLevel{KILN_KERNEL_HAL_LEVEL_MAJOR, KILN_KERNEL_HAL_LEVEL_MINOR};

// RenderScript's forEach signature bits (the same values as its bitcode metadata used).
enum KernelSignatureBits : uint32_t {
  kKernelSigIn = 0x01,
  kKernelSigOut = 0x02,
  kKernelSigUsr = 0x04,
  kKernelSigX = 0x08,
  kKernelSigY = 0x10,
  kKernelSigKernel = 0x20,  // an RS_KERNEL (inputs by value) rather than an old-style root()
  kKernelSigZ = 0x40,
  kKernelSigCtxt = 0x80,
};

enum class KernelTypeKind : uint8_t {
  kVoid = 0,
  kScalar = 1,      // element_type x vector_size (vector_size 1 for a scalar)
  kStruct = 2,      // see fields
  kPointer = 3,     // a pointer global bound to an allocation; the other members describe the pointee
  kAllocation = 4,  // rs_allocation
  kObject = 5,      // another runtime object handle (rs_element, rs_type, rs_script, ...)
};

enum class KernelPrecision : uint8_t { kFull = 0, kRelaxed = 1, kImprecise = 2 };

struct KernelFieldDesc;

struct KernelTypeDesc {
  KernelTypeKind kind = KernelTypeKind::kVoid;
  KilnType element_type = kKilnNoType;  // one lane's type for kScalar (and a scalar pointee)
  uint32_t vector_size = 1;
  uint32_t size = 0;
  uint32_t alignment = 0;
  std::string name;                     // the source spelling
  std::vector<KernelFieldDesc> fields;  // kStruct only
  // 0, or the element count when the type is an array of what the members above describe; size and
  // alignment are then the whole array's.
  uint32_t array_size = 0;
};

struct KernelFieldDesc {
  std::string name;
  uint32_t offset = 0;
  KernelTypeDesc type;
};

struct KernelDesc {
  std::string name;
  std::string expand_symbol;  // __kiln_expand_<name>
  uint32_t signature = 0;     // KernelSignatureBits
  std::vector<KernelTypeDesc> inputs;
  KernelTypeDesc output;  // kVoid without an output
  bool root_style = false;
  HalLevel hal_level;
  std::vector<std::string> cpu_only_reasons;
  // The pointer globals (GlobalDesc::is_pointer) its code may read or write through, sorted: the runtime
  // refuses a launch while one of them has no tensor bound, since the generated code dereferences the raw
  // pointer unchecked. kilnc finds them in the IR; a module without the field lists none.
  std::vector<std::string> pointer_globals;

  bool has_output() const { return (signature & kKernelSigOut) != 0; }
};

struct GlobalDesc {
  std::string name;  // also its symbol in the payloads
  KernelTypeDesc type;
  uint32_t size = 0;
  uint32_t alignment = 0;
  std::vector<uint8_t> default_value;  // size bytes
  bool is_const = false;
  bool is_allocation = false;
  // For an rs_allocation: the lane types of the typed accessors the script uses on it (rsGetElementAt_float,
  // rsSetElementAt_int4, ...), sorted and unique; empty when it uses none. The runtime warns when a tensor of
  // another type is bound (its bytes would be read as the accessor's type).
  std::vector<KilnType> accessed_as;
  // A `static` global that the script's code writes (an invokable or init() computing a table, say): reflected
  // so that the runtime can carry its value from the CPU instance to a GPU one, but not visible to the API,
  // which can neither set nor read it, as in RenderScript.
  bool is_static = false;

  bool settable() const { return !is_const && !is_static; }
  // `float* gWeights;`: a pointer the host binds to a tensor, unlike an rs_allocation (both are allocations).
  bool is_pointer() const { return is_allocation && type.kind == KernelTypeKind::kPointer; }
};

struct ParamDesc {
  std::string name;
  KernelTypeDesc type;
  uint32_t offset = 0;  // in the packed argument block
};

struct InvokableDesc {
  std::string name;
  std::string symbol;  // __kiln_invoke_<name>
  std::vector<ParamDesc> params;
  uint32_t args_size = 0;
  uint32_t args_alignment = 1;
  HalLevel hal_level;
  std::vector<std::string> pointer_globals;  // as KernelDesc::pointer_globals
};

struct ReductionDesc {
  std::string name;
  // The functions the pragma names; empty when omitted.
  std::string initializer;
  std::string accumulator;
  std::string combiner;
  std::string outconverter;
  // The generated entry points (see kiln/kernel_abi.h).
  std::string init_symbol;
  std::string accum_symbol;
  std::string combine_symbol;
  std::string out_symbol;
  KernelTypeDesc accumulator_type;
  uint32_t accumulator_size = 0;
  uint32_t accumulator_alignment = 1;
  std::vector<KernelTypeDesc> inputs;
  KernelTypeDesc result;
  uint32_t signature = 0;  // the accumulator's special parameters (kKernelSigX/Y/Z/Ctxt)
  HalLevel hal_level;
  std::vector<std::string> cpu_only_reasons;  // why a payload has no form of it, e.g. "spirv: <reason>"
  std::vector<std::string> pointer_globals;   // as KernelDesc::pointer_globals, over its four entry points
};

struct PayloadDesc {
  std::string target;  // kPayloadTargetLlvmBitcode, ...
  std::vector<uint8_t> data;
};

struct KernelModuleDesc {
  uint32_t format_version = kKernelModuleFormatVersion;
  std::string compiler_version;
  std::string source_name;
  std::vector<uint8_t> source_checksum;  // SHA-256 of the source
  HalLevel hal_level;                    // the maximum over everything in the module
  uint32_t abi_version = KILN_KERNEL_ABI_VERSION;
  std::string package_name;
  KernelPrecision precision = KernelPrecision::kFull;
  bool has_init = false;
  std::vector<KernelDesc> kernels;
  std::vector<GlobalDesc> globals;
  std::vector<InvokableDesc> invokables;
  std::vector<ReductionDesc> reductions;
  std::vector<PayloadDesc> payloads;
  std::vector<std::string> imports;

  const KernelDesc* FindKernel(const std::string& name) const;
  const GlobalDesc* FindGlobal(const std::string& name) const;
  const InvokableDesc* FindInvokable(const std::string& name) const;
  const ReductionDesc* FindReduction(const std::string& name) const;
  const PayloadDesc* FindPayload(const std::string& target) const;
};

// Parses and validates a module: the FlatBuffers verifier, then structural checks (identifier, format
// version, HAL level against kMaxSupportedHalLevel, unique names, signature bits that agree with the
// inputs/output, sizes, offsets and default values that fit, pointer_globals lists that name reflected
// pointer globals). On failure returns false and sets *error to a message naming the problem and where it is;
// *out is then unspecified.
bool ReadKernelModule(const uint8_t* data, size_t size, KernelModuleDesc* out, std::string* error);

// Serializes `module` (size-prefixed FlatBuffer with identifier "KMOD"). Checks the same structure the reader
// checks, so that kilnc never writes a module the runtime refuses; returns false with *error otherwise.
bool WriteKernelModule(const KernelModuleDesc& module, std::vector<uint8_t>* out, std::string* error);

// A stable, human-readable dump of the reflection (everything but payload bytes), for kilnc
// --print-reflection and tests.
std::string DescribeKernelModule(const KernelModuleDesc& module);

// "float4", "int", "struct Point"...: the name a type is shown with.
std::string KernelTypeName(const KernelTypeDesc& type);

}  // namespace kiln

#endif  // KILN_FORMATS_KMOD_MODULE_H_
