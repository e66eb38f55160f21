/* Kiln: operators, the unit of op registration.
 *
 * A KilnOperator describes one op kernel: which model op it serves (a builtin code and version, or
 * kKilnBuiltinCustom plus a custom name) and its four callbacks. It mirrors LiteRT's TfLiteOperator:
 *
 *   init    once per node, with the node's custom options (a flexbuffer map for custom ops; for builtins the
 *           parsed options are available through KilnOpaqueNodeGetBuiltinData instead). Its result becomes
 *           the node's user data.
 *   free    once per node, with what init returned.
 *   prepare whenever input shapes may have changed: validate inputs, resize outputs, request temporaries.
 *   invoke  for every inference: compute only.
 *
 * Any callback may be left unset. The `...WithData` forms pass the operator's own user data (from
 * KilnOperatorCreateWithData) as the first argument; when both forms are set, the `WithData` form is used.
 * This header is C99. */
#ifndef KILN_OPERATOR_H_
#define KILN_OPERATOR_H_

#include "kiln/builtin_ops.h"
#include "kiln/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* KilnOperator, and KilnOpaqueContext / KilnOpaqueNode / KilnOpaqueTensor (what an op sees of the interpreter,
 * a node and a tensor; see kiln/c_api_opaque.h), are declared in kiln/common.h. */

/* Creates an operator. `custom_name` is copied and must be non-NULL exactly when `builtin_code` is
 * kKilnBuiltinCustom. Returns NULL on invalid arguments. */
KILN_CAPI_EXPORT KilnOperator* KilnOperatorCreate(KilnBuiltinOperator builtin_code, const char* custom_name,
                                                  int version);
/* As KilnOperatorCreate, with `user_data` passed to the `...WithData` callbacks. */
KILN_CAPI_EXPORT KilnOperator* KilnOperatorCreateWithData(KilnBuiltinOperator builtin_code,
                                                          const char* custom_name, int version,
                                                          void* user_data);
/* NULL is a no-op. Must not be deleted while an interpreter that uses it exists. */
KILN_CAPI_EXPORT void KilnOperatorDelete(KilnOperator* op);

KILN_CAPI_EXPORT KilnBuiltinOperator KilnOperatorGetBuiltInCode(const KilnOperator* op);
/* NULL for builtins. Valid for the operator's lifetime. */
KILN_CAPI_EXPORT const char* KilnOperatorGetCustomName(const KilnOperator* op);
KILN_CAPI_EXPORT int KilnOperatorGetVersion(const KilnOperator* op);
KILN_CAPI_EXPORT void* KilnOperatorGetUserData(const KilnOperator* op);

KILN_CAPI_EXPORT void KilnOperatorSetInit(KilnOperator* op,
                                          void* (*init)(KilnOpaqueContext* context, const char* buffer,
                                                        size_t length));
KILN_CAPI_EXPORT void KilnOperatorSetFree(KilnOperator* op,
                                          void (*free)(KilnOpaqueContext* context, void* data));
KILN_CAPI_EXPORT void KilnOperatorSetPrepare(KilnOperator* op,
                                             KilnStatus (*prepare)(KilnOpaqueContext* context,
                                                                   KilnOpaqueNode* node));
KILN_CAPI_EXPORT void KilnOperatorSetInvoke(KilnOperator* op,
                                            KilnStatus (*invoke)(KilnOpaqueContext* context,
                                                                 KilnOpaqueNode* node));

/* The `...WithData` setters return kKilnError for a NULL `op`, else kKilnOk (LiteRT's setters return a status). */
KILN_CAPI_EXPORT KilnStatus KilnOperatorSetInitWithData(KilnOperator* op,
                                                  void* (*init)(void* user_data, KilnOpaqueContext* context,
                                                                const char* buffer, size_t length));
KILN_CAPI_EXPORT KilnStatus KilnOperatorSetFreeWithData(KilnOperator* op,
                                                  void (*free)(void* user_data, KilnOpaqueContext* context,
                                                               void* data));
KILN_CAPI_EXPORT KilnStatus KilnOperatorSetPrepareWithData(KilnOperator* op,
                                                     KilnStatus (*prepare)(void* user_data,
                                                                           KilnOpaqueContext* context,
                                                                           KilnOpaqueNode* node));
KILN_CAPI_EXPORT KilnStatus KilnOperatorSetInvokeWithData(KilnOperator* op,
                                                    KilnStatus (*invoke)(void* user_data,
                                                                         KilnOpaqueContext* context,
                                                                         KilnOpaqueNode* node));

/* The flags of that hint, LiteRT's TfLiteInPlaceOp values. */
enum {
  kKilnInplaceOpNone = 0,
  kKilnInplaceOpDataUnmodified = 1,
  kKilnInplaceInputCanBeSharedWithCorrespondingOutput = 2,
  kKilnInplaceOpInput0Shared = 4,
  kKilnInplaceOpInput1Shared = 8,
  kKilnInplaceOpInput2Shared = 16
};
/* LiteRT's hint that an output may share an input's memory (a bitmask of the flags above). Kiln
 * records it and gives every output its own memory, which the hint allows; KilnOperatorGetInplaceOperator
 * returns it. */
KILN_CAPI_EXPORT void KilnOperatorSetInplaceOperator(KilnOperator* op, uint64_t inplace_operator);
KILN_CAPI_EXPORT uint64_t KilnOperatorGetInplaceOperator(const KilnOperator* op);

/* Makes `op` run kernel `kernel_name` of `module` (see kiln/compute.h): Invoke launches the kernel over the
 * node's output, with the node's inputs as the kernel's inputs, on a device the runtime chooses. The custom
 * options (a FlexBuffers map) set the script globals of the same names; a key without a matching global, or a
 * value of the wrong type, fails Prepare with a message naming both, except the attributes TensorFlow's converter
 * adds to every custom op ("T" and keys beginning with "_"), which are ignored with a note. By default the output takes the broadcast
 * shape of the inputs; a prepare set with KilnOperatorSetPrepare replaces that rule (it must size the output).
 * The operator keeps `module` alive. Fails (kKilnInvalidArgument, reported to stderr) when the module has no
 * such kernel. */
KILN_CAPI_EXPORT KilnStatus KilnOperatorSetKernel(KilnOperator* op, const KilnModule* module,
                                                  const char* kernel_name);

/* For an operator served by a kernel (call after KilnOperatorSetKernel, before creating interpreters that use
 * it): node input `input_index` is not one of the kernel's inputs but is bound to the script global
 * `global_name` (an rs_allocation or pointer global, such as `float* gWeights;`), so that the kernel can read
 * any element of it (weights, or an activation a kernel cell reads around its own position). The node's other
 * inputs, in order, are the kernel's inputs; a kernel with no inputs left runs over the output's cells. The
 * tensor is bound before every launch (on the CPU driver and on a driver device alike) with its elements as
 * scalars; dimensions past 3 fold into z (kiln/compute.h). Calling it again for the same `input_index`
 * replaces the global. Returns kKilnInvalidArgument (reported to stderr) when `op` has no kernel,
 * `input_index` is negative, or the module has no such rs_allocation or pointer global. */
KILN_CAPI_EXPORT KilnStatus KilnOperatorSetKernelInputGlobal(KilnOperator* op, int input_index,
                                                             const char* global_name);

/* For an operator served by a kernel: whether the custom options set the script globals of the same names
 * (`true`, the default: they must then be a FlexBuffers map, see KilnOperatorSetKernel). Pass `false` for
 * options in another format, such as MediaPipe's raw structs: the options are then left to the operator's own
 * prepare (KilnOperatorSetPrepare), which reads them with KilnOpaqueNodeGetCustomInitialData and sets globals
 * with KilnOpaqueNodeSetKernelGlobal (kiln/c_api_opaque.h). Returns kKilnInvalidArgument (reported to stderr)
 * when `op` is NULL or has no kernel. */
KILN_CAPI_EXPORT KilnStatus KilnOperatorSetKernelOptionsAsGlobals(KilnOperator* op, bool enable);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_OPERATOR_H_ */
