/* Kiln: reading a custom op's options from C.
 *
 * Custom ops receive their options as a FlexBuffers map (what the TFLite converter writes). These accessors
 * read one value by key without any C++. Each returns kKilnOk and writes `*out` when the key exists and its
 * value converts; kKilnInvalidArgument when the key is missing, the value has another type, or the bytes are
 * not a well-formed map. `data` may be NULL only with `size` 0. This header is C99. */
#ifndef KILN_FLEX_H_
#define KILN_FLEX_H_

#include "kiln/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Accepts float and integer values. */
KILN_CAPI_EXPORT KilnStatus KilnFlexMapGetFloat(const void* data, size_t size, const char* key, float* out);
/* Accepts integer values (and bools). */
KILN_CAPI_EXPORT KilnStatus KilnFlexMapGetInt(const void* data, size_t size, const char* key, int64_t* out);
KILN_CAPI_EXPORT KilnStatus KilnFlexMapGetBool(const void* data, size_t size, const char* key, bool* out);
/* `*out` points into `data`, NUL-terminated. */
KILN_CAPI_EXPORT KilnStatus KilnFlexMapGetString(const void* data, size_t size, const char* key,
                                                 const char** out);

/* The kinds of value a map entry may hold. */
typedef enum KilnFlexValueKind {
  kKilnFlexNull = 0,
  kKilnFlexInt = 1,
  kKilnFlexFloat = 2,
  kKilnFlexBool = 3,
  kKilnFlexString = 4,
  kKilnFlexVector = 5, /* a typed or untyped vector; read with KilnFlexMapGetFloatVector */
  kKilnFlexOther = 6,
} KilnFlexValueKind;

/* The number of keys in the map, via `*out_count`. */
KILN_CAPI_EXPORT KilnStatus KilnFlexMapSize(const void* data, size_t size, int* out_count);
/* The `index`-th key (sorted order) and the kind of its value. `*out_key` points into `data`. */
KILN_CAPI_EXPORT KilnStatus KilnFlexMapEntry(const void* data, size_t size, int index, const char** out_key,
                                             KilnFlexValueKind* out_kind);
/* Copies up to `capacity` numbers of a vector value into `out` and its length into `*out_length`. */
KILN_CAPI_EXPORT KilnStatus KilnFlexMapGetFloatVector(const void* data, size_t size, const char* key,
                                                      float* out, int capacity, int* out_length);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_FLEX_H_ */
