/* Kiln: what an operator sees while it runs.
 *
 * Ops receive a KilnOpaqueContext (the interpreter, as far as an op may see it) and a KilnOpaqueNode (one
 * op instance in the graph), and reach tensors through accessors only. Names and semantics follow LiteRT's
 * c_api_opaque.h with the prefix Kiln, so that a LiteRT custom op ports by renaming (or unchanged through
 * kiln/compat/litert.h).
 *
 * Pointer lifetimes: a tensor pointer obtained from a context or node stays valid for the interpreter's
 * lifetime, except across KilnOpaqueContextAddTensor, which may move tensors: fetch pointers again after
 * adding one. Data pointers are valid during Invoke (and during Prepare for constant tensors).
 * This header is C99. */
#ifndef KILN_C_API_OPAQUE_H_
#define KILN_C_API_OPAQUE_H_

#include "kiln/common.h"
#include "kiln/operator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------------
 * Nodes
 * ------------------------------------------------------------------------------------------------------- */

KILN_CAPI_EXPORT int KilnOpaqueNodeNumberOfInputs(const KilnOpaqueNode* node);
KILN_CAPI_EXPORT int KilnOpaqueNodeNumberOfOutputs(const KilnOpaqueNode* node);
/* The node's `index`-th input. NULL if `index` is out of range or the input is optional and absent (-1). */
KILN_CAPI_EXPORT const KilnOpaqueTensor* KilnOpaqueNodeGetInput(const KilnOpaqueContext* context,
                                                                const KilnOpaqueNode* node, int index);
/* The node's `index`-th output, or NULL if out of range. */
KILN_CAPI_EXPORT KilnOpaqueTensor* KilnOpaqueNodeGetOutput(KilnOpaqueContext* context,
                                                           const KilnOpaqueNode* node, int index);
/* The tensor indices of the node's inputs/outputs (-1 marks an absent optional input). The array belongs to
 * the node. */
KILN_CAPI_EXPORT KilnStatus KilnOpaqueNodeInputs(const KilnOpaqueNode* node, const int** inputs,
                                                 int* num_inputs);
KILN_CAPI_EXPORT KilnStatus KilnOpaqueNodeOutputs(const KilnOpaqueNode* node, const int** outputs,
                                                  int* num_outputs);
/* What the operator's init returned for this node. */
KILN_CAPI_EXPORT void* KilnOpaqueNodeGetUserData(const KilnOpaqueNode* node);
/* The parsed builtin options (a struct from kiln/builtin_op_data.h), or NULL for custom ops and options-less
 * builtins. Owned by the interpreter. */
KILN_CAPI_EXPORT void* KilnOpaqueNodeGetBuiltinData(const KilnOpaqueNode* node);
/* The custom op's options bytes (a flexbuffer map, see kiln/flex.h) as stored in the model. */
KILN_CAPI_EXPORT KilnStatus KilnOpaqueNodeGetCustomInitialData(const KilnOpaqueNode* node,
                                                               const void** init_data, int* size);
/* For a node served by a kernel (KilnOperatorSetKernel): sets script global `name` of the node's own script
 * instance (each node has one) to the `size` bytes at `data`, as KilnScriptSetGlobal does (kiln/compute.h).
 * Call it from the operator's prepare, typically with values read from the custom options
 * (KilnOperatorSetKernelOptionsAsGlobals) or from the input shapes; it reaches every device before the next
 * launch. Returns kKilnInvalidArgument, reported through the context's error reporter naming the node, when
 * the node has no kernel, the global does not exist, is const or an allocation, or `size` is not its size. */
KILN_CAPI_EXPORT KilnStatus KilnOpaqueNodeSetKernelGlobal(KilnOpaqueContext* context, KilnOpaqueNode* node,
                                                          const char* name, const void* data, size_t size);
/* Sets the node's temporaries: tensors created with KilnOpaqueContextAddTensor, planned in the arena with the
 * lifetime of this node. Call from Prepare. The indices are copied. */
KILN_CAPI_EXPORT KilnStatus KilnOpaqueNodeSetTemporaries(KilnOpaqueNode* node, const int* temporaries,
                                                         int num_temporaries);
KILN_CAPI_EXPORT KilnStatus KilnOpaqueNodeTemporaries(const KilnOpaqueNode* node, const int** temporaries,
                                                      int* num_temporaries);

/* ---------------------------------------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------------------------------------- */

/* Sets a tensor's shape. Takes ownership of `new_size`, even on failure. Resizing a constant (model-owned)
 * tensor to another shape is an error. During Invoke only a dynamic tensor (see
 * KilnOpaqueTensorSetAllocationTypeToDynamic) may change shape: it gets memory of its own for the new size;
 * resizing a tensor planned in the arena to another shape then fails, naming the tensor. */
KILN_CAPI_EXPORT KilnStatus KilnOpaqueContextResizeTensor(KilnOpaqueContext* context,
                                                          KilnOpaqueTensor* tensor, KilnIntArray* new_size);
/* The tensor with index `index` in the graph, or NULL if out of range. */
KILN_CAPI_EXPORT KilnOpaqueTensor* KilnOpaqueContextGetOpaqueTensor(const KilnOpaqueContext* context,
                                                                    int index);
/* The byte size of one element of `type`; kKilnInvalidArgument for types without one (strings). */
KILN_CAPI_EXPORT KilnStatus KilnOpaqueContextGetSizeOfType(KilnOpaqueContext* context, KilnType type,
                                                           size_t* bytes);
/* Reports an error through the interpreter's error reporter, prefixed with the current node. */
KILN_CAPI_EXPORT void KilnOpaqueContextReportError(KilnOpaqueContext* context, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
KILN_CAPI_EXPORT void KilnOpaqueContextReportErrorVa(KilnOpaqueContext* context, const char* format,
                                                     va_list vlist);

/* Builds the description of a tensor that an op adds to the graph (a temporary, usually). */
KILN_CAPI_EXPORT KilnOpaqueTensorBuilder* KilnOpaqueTensorBuilderCreate(void);
KILN_CAPI_EXPORT void KilnOpaqueTensorBuilderDelete(KilnOpaqueTensorBuilder* builder);
/* Each setter returns `builder`, so calls can be chained. */
KILN_CAPI_EXPORT KilnOpaqueTensorBuilder* KilnOpaqueTensorBuilderSetType(KilnOpaqueTensorBuilder* builder,
                                                                         KilnType type);
/* Memory the caller owns (allocation type kKilnCustom). */
KILN_CAPI_EXPORT KilnOpaqueTensorBuilder* KilnOpaqueTensorBuilderSetData(KilnOpaqueTensorBuilder* builder,
                                                                         void* data);
/* kKilnArenaRw (the default: planned in the arena) or kKilnDynamic or kKilnCustom. */
KILN_CAPI_EXPORT KilnOpaqueTensorBuilder* KilnOpaqueTensorBuilderSetAllocationType(
    KilnOpaqueTensorBuilder* builder, KilnAllocationType allocation_type);
KILN_CAPI_EXPORT KilnOpaqueTensorBuilder* KilnOpaqueTensorBuilderSetQuantizationParams(
    KilnOpaqueTensorBuilder* builder, KilnQuantizationParams params);

/* Adds a tensor (shapeless until resized) and returns its index through `new_tensor_index`. May move
 * existing tensors in memory: fetch tensor pointers again afterwards. */
KILN_CAPI_EXPORT KilnStatus KilnOpaqueContextAddTensor(KilnOpaqueContext* context,
                                                       KilnOpaqueTensorBuilder* builder,
                                                       int* new_tensor_index);

/* ---------------------------------------------------------------------------------------------------------
 * Tensors
 * ------------------------------------------------------------------------------------------------------- */

KILN_CAPI_EXPORT KilnType KilnOpaqueTensorType(const KilnOpaqueTensor* tensor);
KILN_CAPI_EXPORT int32_t KilnOpaqueTensorNumDims(const KilnOpaqueTensor* tensor);
/* Returns -1 if `dim_index` is out of range. */
KILN_CAPI_EXPORT int32_t KilnOpaqueTensorDim(const KilnOpaqueTensor* tensor, int32_t dim_index);
KILN_CAPI_EXPORT size_t KilnOpaqueTensorByteSize(const KilnOpaqueTensor* tensor);
KILN_CAPI_EXPORT void* KilnOpaqueTensorData(const KilnOpaqueTensor* tensor);
KILN_CAPI_EXPORT KilnAllocationType KilnOpaqueTensorGetAllocationType(const KilnOpaqueTensor* tensor);
/* Makes an op's output (or temporary) dynamic, as LiteRT's TfLiteOpaqueTensorSetAllocationTypeToDynamic: called in
 * Prepare when the output's shape depends on values known only at Invoke. The tensor is then not planned in the
 * arena; the op resizes it in Invoke (KilnOpaqueContextResizeTensor), which gives it memory of its own, and every
 * later node that reads it is prepared again before it runs. Only a tensor planned in the arena (or one already
 * dynamic) may become dynamic: kKilnError for constants, variables and custom memory. */
KILN_CAPI_EXPORT KilnStatus KilnOpaqueTensorSetAllocationTypeToDynamic(KilnOpaqueTensor* tensor);
KILN_CAPI_EXPORT const char* KilnOpaqueTensorName(const KilnOpaqueTensor* tensor);
KILN_CAPI_EXPORT KilnQuantizationParams KilnOpaqueTensorGetQuantizationParams(const KilnOpaqueTensor* tensor);
/* Per-channel quantization: `*out_count` scales and zero points along `*out_quantized_dimension`. For a
 * per-tensor quantized tensor count is 1; for a float tensor 0. The arrays belong to the tensor. */
KILN_CAPI_EXPORT KilnStatus KilnOpaqueTensorGetPerChannelQuantization(const KilnOpaqueTensor* tensor,
                                                                      const float** out_scales,
                                                                      const int32_t** out_zero_points,
                                                                      int* out_count,
                                                                      int* out_quantized_dimension);
/* Copies exactly KilnOpaqueTensorByteSize bytes; any other size is kKilnInvalidArgument. */
KILN_CAPI_EXPORT KilnStatus KilnOpaqueTensorCopyFromBuffer(KilnOpaqueTensor* tensor, const void* input_data,
                                                           size_t input_data_size);
KILN_CAPI_EXPORT KilnStatus KilnOpaqueTensorCopyToBuffer(const KilnOpaqueTensor* tensor, void* output_data,
                                                         size_t output_data_size);

/* ---------------------------------------------------------------------------------------------------------
 * Checks for Prepare and Invoke. On failure they report "<file>:<line> <expr> was not true." (or the two
 * values) through the context and return kKilnError from the enclosing function.
 * ------------------------------------------------------------------------------------------------------- */

#define KILN_OPAQUE_ENSURE(context, a)                                                          \
  do {                                                                                          \
    if (!(a)) {                                                                                 \
      KilnOpaqueContextReportError((context), "%s:%d: %s was not true.", __FILE__, __LINE__, #a); \
      return kKilnError;                                                                        \
    }                                                                                           \
  } while (0)

#define KILN_OPAQUE_ENSURE_MSG(context, a, msg)                                                     \
  do {                                                                                              \
    if (!(a)) {                                                                                     \
      KilnOpaqueContextReportError((context), "%s:%d: %s (%s)", __FILE__, __LINE__, (msg), #a);     \
      return kKilnError;                                                                            \
    }                                                                                               \
  } while (0)

#define KILN_OPAQUE_ENSURE_EQ(context, a, b)                                                          \
  do {                                                                                                \
    if ((a) != (b)) {                                                                                 \
      KilnOpaqueContextReportError((context), "%s:%d: %s != %s (%ld != %ld)", __FILE__, __LINE__, #a, \
                                   #b, (long)(a), (long)(b));                                         \
      return kKilnError;                                                                              \
    }                                                                                                 \
  } while (0)

#define KILN_OPAQUE_ENSURE_TYPES_EQ(context, a, b)                                                  \
  do {                                                                                              \
    if ((a) != (b)) {                                                                               \
      KilnOpaqueContextReportError((context), "%s:%d: %s != %s (%s != %s)", __FILE__, __LINE__, #a, \
                                   #b, KilnTypeGetName(a), KilnTypeGetName(b));                     \
      return kKilnError;                                                                            \
    }                                                                                               \
  } while (0)

#define KILN_OPAQUE_ENSURE_NEAR(context, a, b, epsilon)                                              \
  do {                                                                                               \
    double kiln_delta_ = ((a) > (b)) ? ((a) - (b)) : ((b) - (a));                                    \
    if (kiln_delta_ > (epsilon)) {                                                                   \
      KilnOpaqueContextReportError((context), "%s:%d: %s not near %s (%f != %f)", __FILE__, __LINE__, \
                                   #a, #b, (double)(a), (double)(b));                                \
      return kKilnError;                                                                             \
    }                                                                                                \
  } while (0)

#define KILN_OPAQUE_ENSURE_STATUS(a)   \
  do {                                 \
    const KilnStatus kiln_s_ = (a);    \
    if (kiln_s_ != kKilnOk) {          \
      return kiln_s_;                  \
    }                                  \
  } while (0)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_C_API_OPAQUE_H_ */
