// The concrete types behind Kiln's opaque C handles, shared by the runtime's translation units.
//
// The public headers only ever see `typedef struct X X;`. These definitions are internal: ops and applications
// reach them through the accessors of kiln/c_api.h and kiln/c_api_opaque.h.
#ifndef KILN_RUNTIME_CORE_H_
#define KILN_RUNTIME_CORE_H_

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/c_api_opaque.h"
#include "kiln/operator.h"
#include "runtime/model/model.h"

namespace kiln {

// Sends a printf-style message to `reporter`, or to stderr when it is null.
void Report(KilnErrorReporter reporter, void* user_data, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
void ReportV(KilnErrorReporter reporter, void* user_data, const char* format, va_list args);

// `text` safe to print on a terminal: control characters (below 0x20, DEL, and the C1 controls U+0080-U+009F,
// which UTF-8 writes as 0xC2 0x80-0x9F and a terminal may take as ESC sequences: U+009B is CSI) become \xNN per
// byte, so a name read from a crafted file cannot send escape sequences. Other bytes from 0x80 up (UTF-8) are
// kept.
std::string Printable(const std::string& text);

// Number of elements of `dims`, or -1 if a dimension is negative or the product overflows int64.
int64_t ElementCount(const std::vector<int>& dims);

// Memory aligned to kTensorAlignment, freed with std::free. A block of a page or more is page-aligned and
// whole pages long, so a device that shares host memory (KILN_HAL_BUFFER_HOST_WRAP: integrated GPUs,
// lavapipe, whose import needs 4096-byte alignment) can wrap it instead of copying it.
constexpr size_t kTensorAlignment = 64;
constexpr size_t kPageAlignment = 4096;
void* AlignedAlloc(size_t bytes);

// Bytes a model file or buffer keeps alive for as long as any model or interpreter uses it.
struct ModelBytes {
  virtual ~ModelBytes() = default;
  // Tells the system that [data, data + bytes), a range inside these bytes, is not needed for now, so that
  // its whole pages need not stay resident. Only a read-only file mapping does anything (the pages are read
  // from the file again if anything touches them): a buffer the caller owns, or a heap copy, keeps its bytes.
  // Returns the bytes released.
  virtual size_t ReleasePages(const void* range, size_t bytes) const {
    (void)range;
    (void)bytes;
    return 0;
  }
  const uint8_t* data = nullptr;
  size_t size = 0;
};

struct ModelData {
  std::unique_ptr<ModelBytes> bytes;
  ModelDesc desc;
};

class KernelModule;

// Callbacks the runtime calls in place of an operator author's own: what KilnOperatorSetKernel installs
// (kernel_op.cc). Each receives the operator, whose `hooks_state` holds what they need.
struct OperatorHooks {
  void* (*init)(const KilnOperator* op, KilnOpaqueContext* context, const char* buffer, size_t length);
  void (*free)(const KilnOperator* op, KilnOpaqueContext* context, void* data);
  KilnStatus (*prepare)(const KilnOperator* op, KilnOpaqueContext* context, KilnOpaqueNode* node);
  KilnStatus (*invoke)(const KilnOperator* op, KilnOpaqueContext* context, KilnOpaqueNode* node);
};

}  // namespace kiln

struct KilnModel {
  std::shared_ptr<const kiln::ModelData> data;
};

struct KilnOperator {
  KilnBuiltinOperator builtin_code = kKilnBuiltinCustom;
  std::string custom_name;
  int version = 1;
  void* user_data = nullptr;

  void* (*init)(KilnOpaqueContext*, const char*, size_t) = nullptr;
  void (*free)(KilnOpaqueContext*, void*) = nullptr;
  KilnStatus (*prepare)(KilnOpaqueContext*, KilnOpaqueNode*) = nullptr;
  KilnStatus (*invoke)(KilnOpaqueContext*, KilnOpaqueNode*) = nullptr;
  void* (*init_with_data)(void*, KilnOpaqueContext*, const char*, size_t) = nullptr;
  void (*free_with_data)(void*, KilnOpaqueContext*, void*) = nullptr;
  KilnStatus (*prepare_with_data)(void*, KilnOpaqueContext*, KilnOpaqueNode*) = nullptr;
  KilnStatus (*invoke_with_data)(void*, KilnOpaqueContext*, KilnOpaqueNode*) = nullptr;
  uint64_t inplace_operator = 0;  // LiteRT's in-place hint, recorded (every output gets its own memory)

  // Installed by KilnOperatorSetKernel (kernel_op.cc): the kernel op's callbacks and their state. Null for an
  // op served by its author's callbacks alone.
  const kiln::OperatorHooks* hooks = nullptr;
  std::shared_ptr<const void> hooks_state;

  bool is_custom() const { return builtin_code == kKilnBuiltinCustom; }
  // What the interpreter calls, the same way for every op: the installed hooks, else the author's callbacks
  // (the *_with_data form when set). An op with no such callback does nothing and succeeds.
  void* Init(KilnOpaqueContext* context, const char* buffer, size_t length) const;
  void Free(KilnOpaqueContext* context, void* data) const;
  KilnStatus Prepare(KilnOpaqueContext* context, KilnOpaqueNode* node) const;
  KilnStatus Invoke(KilnOpaqueContext* context, KilnOpaqueNode* node) const;
  // The author's own prepare, whatever the hooks: a kernel op lets it size the output.
  bool has_author_prepare() const { return prepare != nullptr || prepare_with_data != nullptr; }
  KilnStatus AuthorPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) const;
  // "Atan" for custom ops, "CONV_2D" for builtins.
  std::string DisplayName() const;
};

struct KilnInterpreterOptions {
  int32_t num_threads = -1;
  std::vector<KilnOperator*> operators;  // later entries win
  KilnErrorReporter reporter = nullptr;
  void* reporter_user_data = nullptr;
  bool use_reference_kernels = false;
  bool profiling = false;  // builtin ops on their reference kernels only, no host engine
  int32_t device_policy = kKilnDeviceAuto;  // a KilnDevicePolicy, checked at creation
  std::string driver_path;
  bool allow_any_driver_dependency = false;
  uint32_t device_timeout_ms = KILN_DEFAULT_DEVICE_TIMEOUT_MS;  // 0: wait forever
};

// A tensor of an interpreter (or, later, of a compute context). KilnOpaqueTensor is the same object.
struct KilnTensor {
  KilnType type = kKilnNoType;
  std::vector<int> dims;
  std::string name;
  void* data = nullptr;
  size_t bytes = 0;
  KilnAllocationType allocation = kKilnArenaRw;
  bool is_variable = false;
  KilnQuantizationParams quant{0.0f, 0};
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int quantized_dimension = 0;
  // Memory this tensor owns (dynamic tensors, variables); arena tensors point into the interpreter's arena.
  std::unique_ptr<void, void (*)(void*)> owned{nullptr, std::free};
  size_t capacity = 0;  // a dynamic tensor's bytes of `owned`: grows to the largest shape seen, never shrinks
  // The compute context that made it (KilnTensorCreate), or null for an interpreter's tensor.
  struct KilnContext* context = nullptr;
};

namespace kiln {

inline KilnTensor* AsTensor(KilnOpaqueTensor* t) { return reinterpret_cast<KilnTensor*>(t); }
inline const KilnTensor* AsTensor(const KilnOpaqueTensor* t) { return reinterpret_cast<const KilnTensor*>(t); }
inline KilnOpaqueTensor* AsOpaque(KilnTensor* t) { return reinterpret_cast<KilnOpaqueTensor*>(t); }

// Sets `tensor`'s shape and byte size. Returns false (with `*error`) on negative dims or overflow.
bool SetTensorShape(KilnTensor* tensor, const int* dims, int num_dims, std::string* error);

}  // namespace kiln

#endif  // KILN_RUNTIME_CORE_H_
