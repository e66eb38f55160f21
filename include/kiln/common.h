/* Kiln: types shared by every public header.
 *
 * The numbering of KilnType and KilnBuiltinOperator follows LiteRT's TfLiteType and the .tflite
 * BuiltinOperator enum, so that values read from a model or written by LiteRT code mean the same here.
 * This header is C99 and contains no C++ types.
 *
 * Threads. Objects that do not change once made may be shared by any number of threads at once:
 *   - a KilnModel (create any number of interpreters from it, in any threads);
 *   - a KilnModule (serve ops and scripts of any number of interpreters and contexts);
 *   - a KilnOperator, once configured (its Set... calls made before the first interpreter uses it); the
 *     callbacks its author gives it are then called from several threads at once, on different nodes;
 *   - driver libraries: interpreters and contexts in several threads may load the same driver at once (each
 *     gets its own instance of it).
 * Objects with state belong to one thread at a time (use them from any thread, but not from two at once),
 * as LiteRT's interpreter does:
 *   - a KilnInterpreter, its options and its tensors;
 *   - a KilnContext with its scripts and tensors.
 * Different interpreters and contexts run in parallel without locks between them, each with its own threads.
 * The on-disk caches (KILN_CACHE_DIR) may be shared by any number of processes. tests/concurrency holds Kiln to
 * this, and the `tsan` preset runs it under ThreadSanitizer. */
#ifndef KILN_COMMON_H_
#define KILN_COMMON_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define KILN_CAPI_EXPORT __declspec(dllexport)
#else
#define KILN_CAPI_EXPORT __attribute__((visibility("default")))
#endif

/* The opaque handles of the API, declared once here so that every header can name them (C99 allows a typedef
 * only once). Each is documented in the header that creates it. */
typedef struct KilnModel KilnModel;                             /* kiln/c_api.h */
typedef struct KilnInterpreterOptions KilnInterpreterOptions;   /* kiln/c_api.h */
typedef struct KilnInterpreter KilnInterpreter;                 /* kiln/c_api.h */
typedef struct KilnSignatureRunner KilnSignatureRunner;         /* kiln/c_api.h */
typedef struct KilnTensor KilnTensor;                           /* kiln/c_api.h, kiln/compute.h */
typedef struct KilnOperator KilnOperator;                       /* kiln/operator.h */
typedef struct KilnOpaqueContext KilnOpaqueContext;             /* kiln/c_api_opaque.h */
typedef struct KilnOpaqueNode KilnOpaqueNode;                   /* kiln/c_api_opaque.h */
typedef struct KilnOpaqueTensor KilnOpaqueTensor;               /* kiln/c_api_opaque.h */
typedef struct KilnOpaqueTensorBuilder KilnOpaqueTensorBuilder; /* kiln/c_api_opaque.h */
typedef struct KilnModule KilnModule;                           /* kiln/compute.h: a compiled kernel module */
typedef struct KilnContext KilnContext;                         /* kiln/compute.h: drivers and devices */
typedef struct KilnContextOptions KilnContextOptions;           /* kiln/compute.h */
typedef struct KilnScript KilnScript;                           /* kiln/compute.h: one instance of a module */

/* The result of every call that can fail. */
typedef enum KilnStatus {
  kKilnOk = 0,
  /* A generic failure; the error reporter received the details. */
  kKilnError = 1,
  /* A failure inside a delegate or driver; the work may be retried elsewhere. */
  kKilnDelegateError = 2,
  /* The model holds a custom op (or builtin) that no registered operator resolves. */
  kKilnUnresolvedOps = 3,
  /* An argument was out of range, NULL where it may not be, or inconsistent with others. */
  kKilnInvalidArgument = 4,
  /* A file, model or module could not be read or failed verification. */
  kKilnInvalidModel = 5,
  /* The request needs a feature, version or type that this build or driver does not support. */
  kKilnUnsupported = 6,
  /* The runtime could not allocate memory. */
  kKilnOutOfMemory = 7,
} KilnStatus;

/* Element types. Same values as LiteRT's TfLiteType. */
typedef enum KilnType {
  kKilnNoType = 0,
  kKilnFloat32 = 1,
  kKilnInt32 = 2,
  kKilnUInt8 = 3,
  kKilnInt64 = 4,
  kKilnString = 5,
  kKilnBool = 6,
  kKilnInt16 = 7,
  kKilnComplex64 = 8,
  kKilnInt8 = 9,
  kKilnFloat16 = 10,
  kKilnFloat64 = 11,
  kKilnComplex128 = 12,
  kKilnUInt64 = 13,
  kKilnResource = 14,
  kKilnVariant = 15,
  kKilnUInt32 = 16,
  kKilnUInt16 = 17,
  kKilnInt4 = 18,
} KilnType;

/* Returns a static, human-readable name for `type` ("float32", "int8", ...), or "unknown". */
KILN_CAPI_EXPORT const char* KilnTypeGetName(KilnType type);

/* The byte size of one element of `type`; 0 for types without a fixed size (string, resource, variant) and
 * for unknown values. */
KILN_CAPI_EXPORT size_t KilnTypeGetSize(KilnType type);

/* Affine quantization of a whole tensor: real = scale * (quantized - zero_point).
 * A tensor quantized per channel reports the parameters of channel 0 here. */
typedef struct KilnQuantizationParams {
  float scale;
  int32_t zero_point;
} KilnQuantizationParams;

/* A counted array of ints, laid out as LiteRT's TfLiteIntArray so that ported code indexes it the same
 * way. Create it with KilnIntArrayCreate and free it with KilnIntArrayFree unless a call takes ownership. */
typedef struct KilnIntArray {
  int size;
#if defined(__cplusplus)
  int data[1]; /* really `size` entries; C++ has no flexible array members */
#else
  int data[];
#endif
} KilnIntArray;

/* Allocates an array of `size` ints (contents uninitialised). Returns NULL if size < 0 or on OOM. */
KILN_CAPI_EXPORT KilnIntArray* KilnIntArrayCreate(int size);
/* Frees an array from KilnIntArrayCreate. NULL is a no-op. */
KILN_CAPI_EXPORT void KilnIntArrayFree(KilnIntArray* array);

/* Where a tensor's memory lives. Same values as LiteRT's TfLiteAllocationType. */
typedef enum KilnAllocationType {
  kKilnMemNone = 0,
  /* Read-only data inside the model file (constant weights). */
  kKilnMmapRo = 1,
  /* Planned by the interpreter inside its arena; valid after KilnInterpreterAllocateTensors. */
  kKilnArenaRw = 2,
  /* Like kKilnArenaRw, but kept alive for the interpreter's lifetime (variables). */
  kKilnArenaRwPersistent = 3,
  /* Allocated on its own and resizable while ops run. */
  kKilnDynamic = 4,
  /* Memory owned by the user or a custom op. */
  kKilnCustom = 6,
} KilnAllocationType;

/* Receives every error message the runtime produces, already formatted by the caller's vsnprintf
 * semantics. `user_data` is what was passed when the reporter was installed. */
typedef void (*KilnErrorReporter)(void* user_data, const char* format, va_list args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_COMMON_H_ */
