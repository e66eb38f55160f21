/* Kiln: the application-facing C API.
 *
 * An application creates a KilnModel from a .tflite file or buffer, configures KilnInterpreterOptions
 * (threads, custom operators, error reporter), creates a KilnInterpreter, allocates tensors, fills the inputs,
 * invokes, and reads the outputs. The names and semantics follow LiteRT's c_api.h with the prefix Kiln.
 *
 * Ownership: every Create has a matching Delete, and objects are independent unless stated: a model may be
 * deleted after the interpreters built from it are created (they keep what they need alive). Tensor pointers
 * returned by an interpreter stay valid until it is deleted; their data pointers only until the next
 * ResizeInputTensor or AllocateTensors call.
 *
 * This header is C99 and contains no C++ types. */
#ifndef KILN_C_API_H_
#define KILN_C_API_H_

#include "kiln/builtin_ops.h"
#include "kiln/common.h"
#include "kiln/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The handles KilnModel, KilnInterpreterOptions, KilnInterpreter, KilnTensor and KilnOperator are declared in
 * kiln/common.h. */

/* The version of this library, "major.minor.patch". */
KILN_CAPI_EXPORT const char* KilnVersion(void);

/* ---------------------------------------------------------------------------------------------------------
 * Models
 * ------------------------------------------------------------------------------------------------------- */

/* Creates a model from a .tflite flatbuffer held in memory. The bytes are copied, so the caller may free
 * `model_data` when this returns. The model is verified (FlatBuffers verifier plus Kiln's structural checks:
 * indices, shapes, buffer sizes, graph order) before it is accepted. Returns NULL on failure and reports the
 * reason to stderr; use KilnModelCreateWithErrorReporter to receive it. */
KILN_CAPI_EXPORT KilnModel* KilnModelCreate(const void* model_data, size_t model_size);

/* As KilnModelCreate, reporting failures to `reporter` (may be NULL for stderr). */
KILN_CAPI_EXPORT KilnModel* KilnModelCreateWithErrorReporter(const void* model_data, size_t model_size,
                                                             KilnErrorReporter reporter, void* user_data);

/* Creates a model from a file, which is memory-mapped read-only for the model's lifetime. Buffers stored
 * after the flatbuffer (models over 2 GB) are read from the mapping. Returns NULL on failure. */
KILN_CAPI_EXPORT KilnModel* KilnModelCreateFromFile(const char* model_path);

/* As KilnModelCreateFromFile, reporting failures to `reporter` (may be NULL for stderr). */
KILN_CAPI_EXPORT KilnModel* KilnModelCreateFromFileWithErrorReporter(const char* model_path,
                                                                     KilnErrorReporter reporter,
                                                                     void* user_data);

/* Releases the caller's reference. Interpreters created from the model keep it alive. NULL is a no-op. */
KILN_CAPI_EXPORT void KilnModelDelete(KilnModel* model);

/* The number of operators in the model's main (first) subgraph; 0 for NULL. Needs no interpreter, so a tool
 * can learn which ops (and which versions of a custom op) to register before creating one. */
KILN_CAPI_EXPORT int32_t KilnModelGetOperatorCount(const KilnModel* model);

/* Operator `index` of the main subgraph: its builtin code (kKilnBuiltinCustom for a custom op), its custom
 * name (NULL for a builtin; the string lives as long as the model) and its version. Any out-parameter may be
 * NULL. kKilnInvalidArgument for a NULL model or an index out of range. */
KILN_CAPI_EXPORT KilnStatus KilnModelGetOperator(const KilnModel* model, int32_t index,
                                                 KilnBuiltinOperator* out_builtin_code,
                                                 const char** out_custom_name, int32_t* out_version);

/* Operator `index`'s custom options: the raw bytes the converter wrote (for a custom op, a FlexBuffers map that
 * kiln/flex.h reads). `*out_data` points into the model and lives as long as it; it is NULL with `*out_size` 0
 * when the operator has none. kKilnInvalidArgument for a NULL model or out-parameter, or an index out of range. */
KILN_CAPI_EXPORT KilnStatus KilnModelGetOperatorCustomOptions(const KilnModel* model, int32_t index,
                                                              const void** out_data, size_t* out_size);

/* The model's description string (what the converter wrote, e.g. "MLIR Converted."); "" when it has none,
 * and for NULL. Lives as long as the model. */
KILN_CAPI_EXPORT const char* KilnModelGetDescription(const KilnModel* model);

/* The number of subgraphs (the first is the main one, which the calls below describe); 0 for NULL. */
KILN_CAPI_EXPORT int32_t KilnModelGetSubgraphCount(const KilnModel* model);

/* The number of tensors of the main subgraph; 0 for NULL. */
KILN_CAPI_EXPORT int32_t KilnModelGetTensorCount(const KilnModel* model);

/* The main subgraph's inputs and outputs, as tensor indices: the number of each (0 for NULL), and input or
 * output `index` (-1 for NULL or an index out of range). */
KILN_CAPI_EXPORT int32_t KilnModelGetInputCount(const KilnModel* model);
KILN_CAPI_EXPORT int32_t KilnModelGetOutputCount(const KilnModel* model);
KILN_CAPI_EXPORT int32_t KilnModelGetInputTensorIndex(const KilnModel* model, int32_t index);
KILN_CAPI_EXPORT int32_t KilnModelGetOutputTensorIndex(const KilnModel* model, int32_t index);

/* Tensor `tensor_index` of the main subgraph as the model declares it: its name, element type and shape
 * (`*out_dims` points at `*out_num_dims` dimensions; both live as long as the model). Any out-parameter may be
 * NULL. kKilnInvalidArgument for a NULL model or an index out of range. */
KILN_CAPI_EXPORT KilnStatus KilnModelGetTensor(const KilnModel* model, int32_t tensor_index,
                                               const char** out_name, KilnType* out_type,
                                               int32_t* out_num_dims, const int32_t** out_dims);

/* The model's signatures (SignatureDefs): named entry points such as "serving_default", whose inputs and outputs
 * carry the names the converter took from the saved model (LiteRT's signature runner). Signature
 * `signature_index`: its key, the subgraph it runs and its input and output counts (any out-parameter may be
 * NULL; the key lives as long as the model). kKilnInvalidArgument for a NULL model or an index out of range.
 * The reader has checked that each names a subgraph of the model and tensors of that subgraph. */
KILN_CAPI_EXPORT int32_t KilnModelGetSignatureCount(const KilnModel* model);
KILN_CAPI_EXPORT KilnStatus KilnModelGetSignature(const KilnModel* model, int32_t signature_index,
                                                  const char** out_key, int32_t* out_subgraph_index,
                                                  int32_t* out_input_count, int32_t* out_output_count);
/* Input (or output) `index` of signature `signature_index`: its name and the tensor (an index into the
 * signature's subgraph) it maps to. kKilnInvalidArgument for a NULL model or an index out of range. */
KILN_CAPI_EXPORT KilnStatus KilnModelGetSignatureInput(const KilnModel* model, int32_t signature_index,
                                                       int32_t index, const char** out_name,
                                                       int32_t* out_tensor_index);
KILN_CAPI_EXPORT KilnStatus KilnModelGetSignatureOutput(const KilnModel* model, int32_t signature_index,
                                                        int32_t index, const char** out_name,
                                                        int32_t* out_tensor_index);

/* The name of builtin op `builtin_code` as the .tflite schema spells it ("CONV_2D", "CUSTOM"); "UNKNOWN" for a
 * code the schema does not name. The string is static. */
KILN_CAPI_EXPORT const char* KilnBuiltinOperatorGetName(KilnBuiltinOperator builtin_code);

/* Whether Kiln's builtin op table serves version `version` of builtin op `builtin_code`; `version` 0 asks
 * whether it serves any version. */
KILN_CAPI_EXPORT bool KilnBuiltinOpIsSupported(KilnBuiltinOperator builtin_code, int32_t version);
/* Whether Kiln serves custom op `custom_name` itself, without the application registering it, as LiteRT's builtin
 * resolver does (TFLite_Detection_PostProcess); `version` 0 asks whether it serves any version. */
KILN_CAPI_EXPORT bool KilnCustomOpIsSupported(const char* custom_name, int32_t version);

/* ---------------------------------------------------------------------------------------------------------
 * Interpreter options
 * ------------------------------------------------------------------------------------------------------- */

KILN_CAPI_EXPORT KilnInterpreterOptions* KilnInterpreterOptionsCreate(void);
/* NULL is a no-op. */
KILN_CAPI_EXPORT void KilnInterpreterOptionsDelete(KilnInterpreterOptions* options);

/* Threads the interpreter may use, in all, for its builtin ops (the host engine's pool) and its kernels; -1
 * (the default) means one per core. 1 runs everything on the calling thread. */
KILN_CAPI_EXPORT void KilnInterpreterOptionsSetNumThreads(KilnInterpreterOptions* options,
                                                          int32_t num_threads);

/* Builtin ops run on Kiln's fast host engine (XNNPACK) where it supports the node, and on the reference
 * kernels elsewhere; the decision log says which runs each node and why. `use` true runs every builtin op on
 * its reference kernel: the oracle the fast path is tested against. Default false. */
KILN_CAPI_EXPORT void KilnInterpreterOptionsSetUseReferenceKernels(KilnInterpreterOptions* options, bool use);

/* Registers an operator: a custom op (builtin code kKilnBuiltinCustom plus its name) or an override of a
 * builtin (its code and version). Operators added later win over earlier ones, and every added operator wins
 * over Kiln's builtins. The caller keeps ownership; `op` must outlive every interpreter created with these
 * options. */
KILN_CAPI_EXPORT void KilnInterpreterOptionsAddOperator(KilnInterpreterOptions* options, KilnOperator* op);

/* Installs the function that receives every error message of interpreters created with these options.
 * The default writes to stderr. */
KILN_CAPI_EXPORT void KilnInterpreterOptionsSetErrorReporter(KilnInterpreterOptions* options,
                                                             KilnErrorReporter reporter, void* user_data);

/* Which devices kernel-backed ops (KilnOperatorSetKernel) may run on (kiln/device.h); default
 * kKilnDeviceAuto. Builtin ops always run on the host. */
KILN_CAPI_EXPORT void KilnInterpreterOptionsSetDevicePolicy(KilnInterpreterOptions* options,
                                                            KilnDevicePolicy policy);
/* A driver library or a directory of them to load instead of KILN_DRIVER and the default directory. `path` is
 * copied; NULL or "" clears it. */
KILN_CAPI_EXPORT void KilnInterpreterOptionsSetDriverPath(KilnInterpreterOptions* options, const char* path);
/* Loads drivers whose DT_NEEDED libraries are not on the allow-list (docs/hal.md), as the environment variable
 * KILN_DRIVER_ALLOW_ANY_DEPENDENCY=1 does. Each such driver is noted in the decision log. Default false. */
KILN_CAPI_EXPORT void KilnInterpreterOptionsSetAllowAnyDriverDependency(KilnInterpreterOptions* options, bool allow);
/* How long Kiln waits for a driver device to finish a batch of work (consecutive kernel ops run as one
 * partition) before it gives the batch up: the wait then fails with a message naming the device and the deadline,
 * the partition is redone on the CPU, all later work of the interpreter runs there (a hung device is given up;
 * docs/hal.md says which other faults quarantine what), and the decision log records it; the batch and its
 * device memory are left to the driver, never freed while it may still use them. 0 waits forever. Default
 * KILN_DEFAULT_DEVICE_TIMEOUT_MS. */
#define KILN_DEFAULT_DEVICE_TIMEOUT_MS 60000u
KILN_CAPI_EXPORT void KilnInterpreterOptionsSetDeviceTimeout(KilnInterpreterOptions* options, uint32_t milliseconds);

/* ---------------------------------------------------------------------------------------------------------
 * Interpreter
 * ------------------------------------------------------------------------------------------------------- */

/* Creates an interpreter for the model's main subgraph. `options` may be NULL and may be deleted afterwards
 * (it is copied). Fails (NULL, with a message to the error reporter) if the model uses a builtin op or op
 * version that neither Kiln nor an added operator provides; the message names the op, its version and the node
 * index. Custom ops are resolved later, by KilnInterpreterAllocateTensors. */
KILN_CAPI_EXPORT KilnInterpreter* KilnInterpreterCreate(const KilnModel* model,
                                                        const KilnInterpreterOptions* options);

/* As KilnInterpreterCreate, also returning why creation failed through `out_status` (may be NULL). */
KILN_CAPI_EXPORT KilnInterpreter* KilnInterpreterCreateWithStatus(const KilnModel* model,
                                                                  const KilnInterpreterOptions* options,
                                                                  KilnStatus* out_status);

/* NULL is a no-op. Calls every op's Free. */
KILN_CAPI_EXPORT void KilnInterpreterDelete(KilnInterpreter* interpreter);

KILN_CAPI_EXPORT int32_t KilnInterpreterGetInputTensorCount(const KilnInterpreter* interpreter);
/* Returns NULL if `input_index` is out of range. */
KILN_CAPI_EXPORT KilnTensor* KilnInterpreterGetInputTensor(const KilnInterpreter* interpreter,
                                                           int32_t input_index);

/* Changes an input's shape. Takes effect at the next KilnInterpreterAllocateTensors, which re-runs every op's
 * Prepare; until then Invoke fails. `input_dims` is copied. */
KILN_CAPI_EXPORT KilnStatus KilnInterpreterResizeInputTensor(KilnInterpreter* interpreter,
                                                             int32_t input_index, const int* input_dims,
                                                             int32_t input_dims_size);

/* Resolves custom ops, runs Init and Prepare of every op in order, plans the memory arena and allocates it.
 * Returns kKilnUnresolvedOps (and reports "Encountered unresolved custom op: NAME.") when a custom op has no
 * registered operator. */
KILN_CAPI_EXPORT KilnStatus KilnInterpreterAllocateTensors(KilnInterpreter* interpreter);

/* Runs every op's Invoke in order. Tensors must have been allocated since the last resize. */
KILN_CAPI_EXPORT KilnStatus KilnInterpreterInvoke(KilnInterpreter* interpreter);

/* Resets the model's variable tensors (is_variable: the state that ops such as UNIDIRECTIONAL_SEQUENCE_LSTM, SVDF
 * and RNN keep from one Invoke to the next) to zero, or an int8 one to its zero point, as LiteRT's
 * Interpreter::ResetVariableTensors. KilnInterpreterAllocateTensors does the same. */
KILN_CAPI_EXPORT KilnStatus KilnInterpreterResetVariableTensors(KilnInterpreter* interpreter);

KILN_CAPI_EXPORT int32_t KilnInterpreterGetOutputTensorCount(const KilnInterpreter* interpreter);
/* Returns NULL if `output_index` is out of range. */
KILN_CAPI_EXPORT const KilnTensor* KilnInterpreterGetOutputTensor(const KilnInterpreter* interpreter,
                                                                  int32_t output_index);

/* --- Signature runners (LiteRT's TfLiteSignatureRunner, with Kiln for TfLite) ---
 * A signature (SignatureDef, see KilnModelGetSignature) is a named entry point over one subgraph, whose inputs
 * and outputs are reached by name. A runner over a signature of subgraph k runs subgraph k, planned in its own
 * arena: that is how models with several entry points (a model's "encode" and "decode", a trainable model's
 * "train" and "infer") are used. Every runner of an interpreter shares its resource variables.
 *
 * The number of signatures the interpreter's model has (0 for a NULL interpreter). */
KILN_CAPI_EXPORT int32_t KilnInterpreterGetSignatureCount(const KilnInterpreter* interpreter);
/* The key of signature `signature_index` ("serving_default"), or NULL when out of range. Lives as long as the
 * interpreter. */
KILN_CAPI_EXPORT const char* KilnInterpreterGetSignatureKey(const KilnInterpreter* interpreter,
                                                            int32_t signature_index);
/* A runner for the signature with key `signature_key` (NULL: the model's first signature). NULL when there is
 * no such signature or its subgraph's ops do not resolve (reported to the interpreter's error reporter). The
 * caller deletes it with KilnSignatureRunnerDelete, before deleting the interpreter. Call
 * KilnSignatureRunnerAllocateTensors before the first Invoke. */
KILN_CAPI_EXPORT KilnSignatureRunner* KilnInterpreterGetSignatureRunner(const KilnInterpreter* interpreter,
                                                                        const char* signature_key);
/* The signature's inputs: their count, and input `input_index`'s name (NULL when out of range; lives as long as
 * the interpreter). */
KILN_CAPI_EXPORT size_t KilnSignatureRunnerGetInputCount(const KilnSignatureRunner* signature_runner);
KILN_CAPI_EXPORT const char* KilnSignatureRunnerGetInputName(const KilnSignatureRunner* signature_runner,
                                                             int32_t input_index);
/* Changes the shape of the input named `input_name`, as KilnInterpreterResizeInputTensor does. kKilnError for a
 * name the signature does not have (reported), kKilnInvalidArgument for NULL arguments. */
KILN_CAPI_EXPORT KilnStatus KilnSignatureRunnerResizeInputTensor(KilnSignatureRunner* signature_runner,
                                                                 const char* input_name, const int* input_dims,
                                                                 int32_t input_dims_size);
/* Prepares the signature's subgraph, as KilnInterpreterAllocateTensors does for subgraph 0. */
KILN_CAPI_EXPORT KilnStatus KilnSignatureRunnerAllocateTensors(KilnSignatureRunner* signature_runner);
/* The input named `input_name`, or NULL when the signature has none of that name. */
KILN_CAPI_EXPORT KilnTensor* KilnSignatureRunnerGetInputTensor(KilnSignatureRunner* signature_runner,
                                                               const char* input_name);
/* Runs the signature's subgraph. Tensors must have been allocated since the last resize. */
KILN_CAPI_EXPORT KilnStatus KilnSignatureRunnerInvoke(KilnSignatureRunner* signature_runner);
/* The signature's outputs: their count, output `output_index`'s name (NULL when out of range), and the output
 * named `output_name` (NULL when there is none). */
KILN_CAPI_EXPORT size_t KilnSignatureRunnerGetOutputCount(const KilnSignatureRunner* signature_runner);
KILN_CAPI_EXPORT const char* KilnSignatureRunnerGetOutputName(const KilnSignatureRunner* signature_runner,
                                                              int32_t output_index);
KILN_CAPI_EXPORT const KilnTensor* KilnSignatureRunnerGetOutputTensor(const KilnSignatureRunner* signature_runner,
                                                                      const char* output_name);
/* NULL is a no-op. The subgraph it ran stays prepared in the interpreter. */
KILN_CAPI_EXPORT void KilnSignatureRunnerDelete(KilnSignatureRunner* signature_runner);

/* Memory used for intermediate tensors: the planned arena (with the memory the fast path plans for tensors that
 * pass between its own kernels; what XNNPACK plans inside one of its runtimes is not counted), and what one
 * buffer per tensor would take. Valid after a successful KilnInterpreterAllocateTensors. Either out pointer may
 * be NULL. */
KILN_CAPI_EXPORT KilnStatus KilnInterpreterGetArenaStats(const KilnInterpreter* interpreter,
                                                         size_t* out_arena_bytes, size_t* out_naive_bytes);

/* ---- Profiling ----
 * With profiling on, every KilnInterpreterInvoke records one event per unit of work it runs: a node on its own
 * (its reference kernel, a custom op, a kernel op on the CPU), or a group of nodes run as one (a host run on
 * XNNPACK, a kernel partition on a driver's device). The events describe the last Invoke only. */
KILN_CAPI_EXPORT void KilnInterpreterOptionsSetProfiling(KilnInterpreterOptions* options, bool enable);

typedef struct KilnProfileEvent {
  uint32_t struct_size; /* the caller sets sizeof(KilnProfileEvent): newer fields are filled only if it has them */
  int32_t first_node;   /* the nodes the event covers, [first_node, last_node] */
  int32_t last_node;
  const char* op;       /* "CONV_2D" for one node; a group names its size and ops: "31 nodes: CONV_2D x14, ..." */
  const char* engine;   /* where it ran: "xnnpack", "reference", "custom", "kernel", "partition" */
  uint64_t start_ns;    /* since the start of the Invoke */
  uint64_t duration_ns;
} KilnProfileEvent;

/* The number of events of the last Invoke (0 with profiling off, or before any Invoke). */
KILN_CAPI_EXPORT int32_t KilnInterpreterGetProfileEventCount(const KilnInterpreter* interpreter);
/* Event `index` of the last Invoke. Its strings stay valid until the next Invoke. kKilnInvalidArgument for a
 * NULL argument, an index out of range or an `out->struct_size` smaller than the first fields. */
KILN_CAPI_EXPORT KilnStatus KilnInterpreterGetProfileEvent(const KilnInterpreter* interpreter, int32_t index,
                                                           KilnProfileEvent* out);

/* Node count of the main subgraph, and for node `node_index` its operator's builtin code, custom name (NULL
 * for builtins) and version. Lets tools list ops without parsing the model again. */
KILN_CAPI_EXPORT int32_t KilnInterpreterGetNodeCount(const KilnInterpreter* interpreter);
KILN_CAPI_EXPORT KilnStatus KilnInterpreterGetNodeInfo(const KilnInterpreter* interpreter, int32_t node_index,
                                                       int32_t* out_builtin_code,
                                                       const char** out_custom_name,
                                                       int32_t* out_version);

/* The decision log (kiln/device.h): drivers found, loaded or refused, devices, where each kernel and node runs,
 * the partitions that run as one batch, and run-time fallbacks, each with its reason, in the order decided.
 * Drivers are loaded when the first kernel-backed op is initialised (KilnInterpreterAllocateTensors), or at
 * creation under kKilnDeviceGpuOnly; node and partition decisions are added by AllocateTensors whenever the
 * plan changes, fallbacks by Invoke. KilnInterpreterGetDecision returns kKilnInvalidArgument when `index` is out
 * of range; the strings stay valid until the interpreter is deleted. Any out pointer may be NULL. */
KILN_CAPI_EXPORT int32_t KilnInterpreterGetDecisionCount(const KilnInterpreter* interpreter);
KILN_CAPI_EXPORT KilnStatus KilnInterpreterGetDecision(const KilnInterpreter* interpreter, int32_t index,
                                                       KilnDecisionKind* out_kind, const char** out_subject,
                                                       const char** out_message);

/* ---------------------------------------------------------------------------------------------------------
 * Tensors
 * ------------------------------------------------------------------------------------------------------- */

KILN_CAPI_EXPORT KilnType KilnTensorType(const KilnTensor* tensor);
KILN_CAPI_EXPORT int32_t KilnTensorNumDims(const KilnTensor* tensor);
/* Returns -1 if `dim_index` is out of range. */
KILN_CAPI_EXPORT int32_t KilnTensorDim(const KilnTensor* tensor, int32_t dim_index);
KILN_CAPI_EXPORT size_t KilnTensorByteSize(const KilnTensor* tensor);
/* The tensor's memory, or NULL before allocation. Also NULL after allocation for a tensor whose values never
 * leave the fast path (produced and read inside one host run) and for a folded constant (a DEQUANTIZE of constant
 * float16 weights) that only packed copies read: neither holds memory of its own. */
KILN_CAPI_EXPORT void* KilnTensorData(const KilnTensor* tensor);
/* The name stored in the model ("" if none). Valid for the tensor's lifetime. */
KILN_CAPI_EXPORT const char* KilnTensorName(const KilnTensor* tensor);
/* The first (or only) scale and zero point; {0, 0} for a tensor that is not quantized. */
KILN_CAPI_EXPORT KilnQuantizationParams KilnTensorQuantizationParams(const KilnTensor* tensor);
/* All of the tensor's quantization: `*out_count` scales and zero points, one per index of dimension
 * `*out_quantized_dimension` (count 1: one scale for the whole tensor, and the dimension means nothing;
 * count 0: not quantized). real = scale[c] * (q - zero_point[c]). The arrays belong to the tensor and stay
 * valid for its lifetime. kKilnInvalidArgument if any pointer is NULL. */
KILN_CAPI_EXPORT KilnStatus KilnTensorGetPerChannelQuantization(const KilnTensor* tensor,
                                                                const float** out_scales,
                                                                const int32_t** out_zero_points,
                                                                int* out_count, int* out_quantized_dimension);
/* Copies exactly KilnTensorByteSize bytes; any other `input_data_size` is kKilnInvalidArgument. An empty tensor
 * (0 bytes) takes a size of 0 with any pointer, null included, and copies nothing. */
KILN_CAPI_EXPORT KilnStatus KilnTensorCopyFromBuffer(KilnTensor* tensor, const void* input_data,
                                                     size_t input_data_size);
KILN_CAPI_EXPORT KilnStatus KilnTensorCopyToBuffer(const KilnTensor* output_tensor, void* output_data,
                                                   size_t output_data_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_C_API_H_ */
