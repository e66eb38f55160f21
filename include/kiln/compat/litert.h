/* Kiln: LiteRT source compatibility.
 *
 * Include this header instead of LiteRT's c_api.h / c_api_opaque.h / operator.h and a custom op written against
 * LiteRT's opaque API compiles unchanged against Kiln: every LiteRT name below is an alias of the Kiln name
 * with the same meaning. The names are macros, so they cost nothing and a debugger shows the Kiln names.
 * Only the opaque API is covered (ops that use LiteRT's non-opaque TfLiteContext/TfLiteNode structs are
 * not portable to any runtime but LiteRT's own). This header is C99. */
#ifndef KILN_COMPAT_LITERT_H_
#define KILN_COMPAT_LITERT_H_

#include "kiln/builtin_op_data.h"
#include "kiln/c_api.h"
#include "kiln/c_api_opaque.h"
#include "kiln/flex.h"
#include "kiln/operator.h"

#define TfLiteStatus                                   KilnStatus
#define TfLiteType                                     KilnType
#define TfLiteQuantizationParams                       KilnQuantizationParams
#define TfLiteIntArray                                 KilnIntArray
#define TfLiteAllocationType                           KilnAllocationType
#define TfLiteModel                                    KilnModel
#define TfLiteInterpreterOptions                       KilnInterpreterOptions
#define TfLiteInterpreter                              KilnInterpreter
#define TfLiteTensor                                   KilnTensor
#define TfLiteOperator                                 KilnOperator
#define TfLiteOpaqueContext                            KilnOpaqueContext
#define TfLiteOpaqueNode                               KilnOpaqueNode
#define TfLiteOpaqueTensor                             KilnOpaqueTensor
#define TfLiteOpaqueTensorBuilder                      KilnOpaqueTensorBuilder
#define kTfLiteOk                                      kKilnOk
#define kTfLiteError                                   kKilnError
#define kTfLiteDelegateError                           kKilnDelegateError
#define kTfLiteUnresolvedOps                           kKilnUnresolvedOps
#define kTfLiteNoType                                  kKilnNoType
#define kTfLiteFloat32                                 kKilnFloat32
#define kTfLiteInt32                                   kKilnInt32
#define kTfLiteUInt8                                   kKilnUInt8
#define kTfLiteInt64                                   kKilnInt64
#define kTfLiteString                                  kKilnString
#define kTfLiteBool                                    kKilnBool
#define kTfLiteInt16                                   kKilnInt16
#define kTfLiteComplex64                               kKilnComplex64
#define kTfLiteInt8                                    kKilnInt8
#define kTfLiteFloat16                                 kKilnFloat16
#define kTfLiteFloat64                                 kKilnFloat64
#define kTfLiteComplex128                              kKilnComplex128
#define kTfLiteUInt64                                  kKilnUInt64
#define kTfLiteResource                                kKilnResource
#define kTfLiteVariant                                 kKilnVariant
#define kTfLiteUInt32                                  kKilnUInt32
#define kTfLiteUInt16                                  kKilnUInt16
#define kTfLiteInt4                                    kKilnInt4
#define kTfLiteMemNone                                 kKilnMemNone
#define kTfLiteMmapRo                                  kKilnMmapRo
#define kTfLiteArenaRw                                 kKilnArenaRw
#define kTfLiteArenaRwPersistent                       kKilnArenaRwPersistent
#define kTfLiteDynamic                                 kKilnDynamic
#define kTfLiteCustom                                  kKilnCustom
#define kTfLiteBuiltinCustom                           kKilnBuiltinCustom
#define TfLiteBuiltinOperator                          KilnBuiltinOperator
#define TfLiteModelCreate                              KilnModelCreate
#define TfLiteModelCreateFromFile                      KilnModelCreateFromFile
#define TfLiteModelDelete                              KilnModelDelete
#define TfLiteInterpreterOptionsCreate                 KilnInterpreterOptionsCreate
#define TfLiteInterpreterOptionsDelete                 KilnInterpreterOptionsDelete
#define TfLiteInterpreterOptionsSetNumThreads          KilnInterpreterOptionsSetNumThreads
#define TfLiteInterpreterOptionsAddOperator            KilnInterpreterOptionsAddOperator
#define TfLiteInterpreterOptionsSetErrorReporter       KilnInterpreterOptionsSetErrorReporter
#define TfLiteInterpreterCreate                        KilnInterpreterCreate
#define TfLiteInterpreterDelete                        KilnInterpreterDelete
#define TfLiteInterpreterGetInputTensorCount           KilnInterpreterGetInputTensorCount
#define TfLiteInterpreterGetInputTensor                KilnInterpreterGetInputTensor
#define TfLiteInterpreterResizeInputTensor             KilnInterpreterResizeInputTensor
#define TfLiteInterpreterAllocateTensors               KilnInterpreterAllocateTensors
#define TfLiteInterpreterInvoke                        KilnInterpreterInvoke
#define TfLiteInterpreterResetVariableTensors          KilnInterpreterResetVariableTensors
#define TfLiteInterpreterGetOutputTensorCount          KilnInterpreterGetOutputTensorCount
#define TfLiteInterpreterGetOutputTensor               KilnInterpreterGetOutputTensor
#define TfLiteSignatureRunner                          KilnSignatureRunner
#define TfLiteInterpreterGetSignatureCount             KilnInterpreterGetSignatureCount
#define TfLiteInterpreterGetSignatureKey               KilnInterpreterGetSignatureKey
#define TfLiteInterpreterGetSignatureRunner            KilnInterpreterGetSignatureRunner
#define TfLiteSignatureRunnerGetInputCount             KilnSignatureRunnerGetInputCount
#define TfLiteSignatureRunnerGetInputName              KilnSignatureRunnerGetInputName
#define TfLiteSignatureRunnerResizeInputTensor         KilnSignatureRunnerResizeInputTensor
#define TfLiteSignatureRunnerAllocateTensors           KilnSignatureRunnerAllocateTensors
#define TfLiteSignatureRunnerGetInputTensor            KilnSignatureRunnerGetInputTensor
#define TfLiteSignatureRunnerInvoke                    KilnSignatureRunnerInvoke
#define TfLiteSignatureRunnerGetOutputCount            KilnSignatureRunnerGetOutputCount
#define TfLiteSignatureRunnerGetOutputName             KilnSignatureRunnerGetOutputName
#define TfLiteSignatureRunnerGetOutputTensor           KilnSignatureRunnerGetOutputTensor
#define TfLiteSignatureRunnerDelete                    KilnSignatureRunnerDelete
#define TfLiteTensorType                               KilnTensorType
#define TfLiteTensorNumDims                            KilnTensorNumDims
#define TfLiteTensorDim                                KilnTensorDim
#define TfLiteTensorByteSize                           KilnTensorByteSize
#define TfLiteTensorData                               KilnTensorData
#define TfLiteTensorName                               KilnTensorName
#define TfLiteTensorQuantizationParams                 KilnTensorQuantizationParams
#define TfLiteTensorCopyFromBuffer                     KilnTensorCopyFromBuffer
#define TfLiteTensorCopyToBuffer                       KilnTensorCopyToBuffer
#define TfLiteTypeGetName                              KilnTypeGetName
#define TfLiteIntArrayCreate                           KilnIntArrayCreate
#define TfLiteIntArrayFree                             KilnIntArrayFree
/* LiteRT's TfLiteOperatorCreate took (code, name, version) and now takes (code, name, version, user_data); both
 * forms compile here, chosen by the number of arguments. */
#define KILN_COMPAT_PICK_5TH_(a, b, c, d, e, ...)      e
#define TfLiteOperatorCreate(...)                                                                          \
  KILN_COMPAT_PICK_5TH_(__VA_ARGS__, KilnOperatorCreateWithData, KilnOperatorCreate, unused_, unused_)     \
  (__VA_ARGS__)
#define TfLiteOperatorCreateWithData                   KilnOperatorCreateWithData
#define TfLiteOperatorDelete                           KilnOperatorDelete
#define TfLiteOperatorGetBuiltInCode                   KilnOperatorGetBuiltInCode
#define TfLiteOperatorGetCustomName                    KilnOperatorGetCustomName
#define TfLiteOperatorGetVersion                       KilnOperatorGetVersion
#define TfLiteOperatorGetUserData                      KilnOperatorGetUserData
#define TfLiteOperatorSetInit                          KilnOperatorSetInit
#define TfLiteOperatorSetFree                          KilnOperatorSetFree
#define TfLiteOperatorSetPrepare                       KilnOperatorSetPrepare
#define TfLiteOperatorSetInvoke                        KilnOperatorSetInvoke
#define TfLiteOperatorSetInitWithData                  KilnOperatorSetInitWithData
#define TfLiteOperatorSetFreeWithData                  KilnOperatorSetFreeWithData
#define TfLiteOperatorSetPrepareWithData               KilnOperatorSetPrepareWithData
#define TfLiteOperatorSetInvokeWithData                KilnOperatorSetInvokeWithData
#define TfLiteOperatorSetInplaceOperator               KilnOperatorSetInplaceOperator
#define TfLiteOperatorGetInplaceOperator               KilnOperatorGetInplaceOperator
#define kTfLiteInplaceOpNone                           kKilnInplaceOpNone
#define kTfLiteInplaceOpDataUnmodified                 kKilnInplaceOpDataUnmodified
#define kTfLiteInplaceInputCanBeSharedWithCorrespondingOutput kKilnInplaceInputCanBeSharedWithCorrespondingOutput
#define kTfLiteInplaceOpInput0Shared                   kKilnInplaceOpInput0Shared
#define kTfLiteInplaceOpInput1Shared                   kKilnInplaceOpInput1Shared
#define kTfLiteInplaceOpInput2Shared                   kKilnInplaceOpInput2Shared
#define TfLiteOpaqueNodeNumberOfInputs                 KilnOpaqueNodeNumberOfInputs
#define TfLiteOpaqueNodeNumberOfOutputs                KilnOpaqueNodeNumberOfOutputs
#define TfLiteOpaqueNodeGetInput                       KilnOpaqueNodeGetInput
#define TfLiteOpaqueNodeGetOutput                      KilnOpaqueNodeGetOutput
#define TfLiteOpaqueNodeInputs                         KilnOpaqueNodeInputs
#define TfLiteOpaqueNodeOutputs                        KilnOpaqueNodeOutputs
#define TfLiteOpaqueNodeGetUserData                    KilnOpaqueNodeGetUserData
#define TfLiteOpaqueNodeGetBuiltinData                 KilnOpaqueNodeGetBuiltinData
#define TfLiteOpaqueNodeGetCustomInitialData           KilnOpaqueNodeGetCustomInitialData
#define TfLiteOpaqueNodeSetTemporaries                 KilnOpaqueNodeSetTemporaries
#define TfLiteOpaqueNodeTemporaries                    KilnOpaqueNodeTemporaries
#define TfLiteOpaqueContextResizeTensor                KilnOpaqueContextResizeTensor
#define TfLiteOpaqueContextGetOpaqueTensor             KilnOpaqueContextGetOpaqueTensor
#define TfLiteOpaqueContextGetSizeOfType               KilnOpaqueContextGetSizeOfType
#define TfLiteOpaqueContextReportError                 KilnOpaqueContextReportError
#define TfLiteOpaqueContextReportErrorVa               KilnOpaqueContextReportErrorVa
#define TfLiteOpaqueTensorBuilderCreate                KilnOpaqueTensorBuilderCreate
#define TfLiteOpaqueTensorBuilderDelete                KilnOpaqueTensorBuilderDelete
#define TfLiteOpaqueTensorBuilderSetType               KilnOpaqueTensorBuilderSetType
#define TfLiteOpaqueTensorBuilderSetData               KilnOpaqueTensorBuilderSetData
#define TfLiteOpaqueTensorBuilderSetAllocationType     KilnOpaqueTensorBuilderSetAllocationType
#define TfLiteOpaqueTensorBuilderSetQuantizationParams KilnOpaqueTensorBuilderSetQuantizationParams
#define TfLiteOpaqueContextAddTensor                   KilnOpaqueContextAddTensor
#define TfLiteOpaqueTensorType                         KilnOpaqueTensorType
#define TfLiteOpaqueTensorNumDims                      KilnOpaqueTensorNumDims
#define TfLiteOpaqueTensorDim                          KilnOpaqueTensorDim
#define TfLiteOpaqueTensorByteSize                     KilnOpaqueTensorByteSize
#define TfLiteOpaqueTensorData                         KilnOpaqueTensorData
#define TfLiteOpaqueTensorGetAllocationType            KilnOpaqueTensorGetAllocationType
#define TfLiteOpaqueTensorSetAllocationTypeToDynamic   KilnOpaqueTensorSetAllocationTypeToDynamic
#define TfLiteOpaqueTensorName                         KilnOpaqueTensorName
#define TfLiteOpaqueTensorGetQuantizationParams        KilnOpaqueTensorGetQuantizationParams
#define TfLiteOpaqueTensorCopyFromBuffer               KilnOpaqueTensorCopyFromBuffer
#define TfLiteOpaqueTensorCopyToBuffer                 KilnOpaqueTensorCopyToBuffer
#define TF_LITE_OPAQUE_ENSURE                          KILN_OPAQUE_ENSURE
#define TF_LITE_OPAQUE_ENSURE_MSG                      KILN_OPAQUE_ENSURE_MSG
#define TF_LITE_OPAQUE_ENSURE_EQ                       KILN_OPAQUE_ENSURE_EQ
#define TF_LITE_OPAQUE_ENSURE_TYPES_EQ                 KILN_OPAQUE_ENSURE_TYPES_EQ
#define TF_LITE_OPAQUE_ENSURE_NEAR                     KILN_OPAQUE_ENSURE_NEAR
#define TF_LITE_ENSURE_STATUS                          KILN_OPAQUE_ENSURE_STATUS

#endif /* KILN_COMPAT_LITERT_H_ */
