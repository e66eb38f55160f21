// Writes .tflite files: for tests, for the repo's demo model, and for anything that needs a small model
// built in code.
//
//   kiln::ModelWriter w;
//   int x = w.AddTensor(kKilnFloat32, {1, 4}, "x");
//   int k = w.AddConstTensor<float>(kKilnFloat32, {1, 4}, "k", {1, 2, 3, 4});
//   int y = w.AddTensor(kKilnFloat32, {1, 4}, "y");
//   KilnAddParams add = {kKilnActNone, false};
//   w.AddOp(kKilnBuiltinAdd, {x, k}, {y}, add);
//   w.SetInputs({x});
//   w.SetOutputs({y});
//   std::vector<uint8_t> bytes = w.Finish();   // empty on error; see error()
//
// The writer checks its arguments (indices in range, data sizes matching shapes) and records the first
// mistake in error(); Finish() then returns no bytes. Tests that need malformed files call
// set_unchecked(true), which writes whatever they give it, plus the Override* calls below.
#ifndef KILN_RUNTIME_MODEL_MODEL_WRITER_H_
#define KILN_RUNTIME_MODEL_MODEL_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/builtin_ops.h"
#include "kiln/common.h"

namespace kiln {

// Builds a FlexBuffers map, the format of custom op options:
//   std::vector<uint8_t> options = FlexMap().Float("offset", 0.5f).Int("n", 3).Finish();
// Setting a key twice keeps the last value.
class FlexMap {
 public:
  FlexMap& Int(const std::string& key, int64_t value);
  FlexMap& Float(const std::string& key, float value);
  FlexMap& Bool(const std::string& key, bool value);
  FlexMap& String(const std::string& key, const std::string& value);
  FlexMap& FloatVector(const std::string& key, const std::vector<float>& values);
  FlexMap& IntVector(const std::string& key, const std::vector<int64_t>& values);
  std::vector<uint8_t> Finish() const;

 private:
  struct Value {
    enum Kind { kInt, kFloat, kBool, kString, kFloatVector, kIntVector } kind = kInt;
    int64_t int_value = 0;
    float float_value = 0;
    std::string string_value;
    std::vector<float> floats;
    std::vector<int64_t> ints;
  };
  std::map<std::string, Value> entries_;
};

class ModelWriter {
 public:
  ModelWriter();

  // --- Tensors (of the current subgraph). Each returns the tensor's index, or -1 after an error. ---
  int AddTensor(KilnType type, const std::vector<int>& shape, const std::string& name);
  // A constant: `size` bytes of `data` (little-endian elements) become the tensor's buffer.
  int AddConstTensor(KilnType type, const std::vector<int>& shape, const std::string& name, const void* data,
                     size_t size);
  template <typename T>
  int AddConstTensor(KilnType type, const std::vector<int>& shape, const std::string& name,
                     const std::vector<T>& values) {
    return AddConstTensor(type, shape, name, values.data(), values.size() * sizeof(T));
  }
  // Per-tensor (one scale) or per-channel (one scale per entry of shape[quantized_dimension]) quantization.
  void SetQuantization(int tensor, const std::vector<float>& scale, const std::vector<int64_t>& zero_point,
                       int quantized_dimension = 0);
  void SetVariable(int tensor, bool is_variable = true);
  // Makes a constant sparse (the schema's SparsityParameters; runtime/model/sparsity.h): its data are then the
  // stored values only. `dims` describes the dimensions in traversal order; the index vectors are written as
  // `index_type` (kKilnInt32, kKilnUInt16 or kKilnUInt8; the values are not checked, so that tests can write bad
  // ones).
  struct SparseDimension {
    bool csr = false;
    int dense_size = 0;
    std::vector<int32_t> segments, indices;
    KilnType index_type = kKilnInt32;
  };
  void SetSparsity(int tensor, const std::vector<int>& traversal_order, const std::vector<int>& block_map,
                   const std::vector<SparseDimension>& dims);
  // A sparse constant: `values` are the stored values (fewer than the shape holds), then SetSparsity.
  template <typename T>
  int AddSparseConstTensor(KilnType type, const std::vector<int>& shape, const std::string& name,
                           const std::vector<T>& values, const std::vector<int>& traversal_order,
                           const std::vector<int>& block_map, const std::vector<SparseDimension>& dims) {
    const bool unchecked = unchecked_;
    unchecked_ = true;  // the data size is that of the stored values
    const int tensor = AddConstTensor(type, shape, name, values);
    unchecked_ = unchecked;
    SetSparsity(tensor, traversal_order, block_map, dims);
    return tensor;
  }
  void SetShapeSignature(int tensor, const std::vector<int>& shape_signature);

  // --- Operators (of the current subgraph), appended in execution order. Each returns the operator's
  // index, or -1 after an error. The options struct must be the one builtin_op_data.h names for `code`. ---
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs);
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnAddParams& params);  // ADD, SUB
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnMulParams& params);  // MUL, DIV
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnConvParams& params);  // CONV_2D
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnDepthwiseConvParams& params);  // DEPTHWISE_CONV_2D
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnPoolParams& params);  // AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnFullyConnectedParams& params);  // FULLY_CONNECTED
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnSoftmaxParams& params);  // SOFTMAX
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnConcatenationParams& params);  // CONCATENATION
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnReshapeParams& params);  // RESHAPE
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnSqueezeParams& params);  // SQUEEZE
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnDepthToSpaceParams& params);  // DEPTH_TO_SPACE
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnSpaceToDepthParams& params);  // SPACE_TO_DEPTH
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnMirrorPadParams& params);  // MIRROR_PAD
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnReducerParams& params);  // MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, ...
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnL2NormParams& params);  // L2_NORMALIZATION
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnLocalResponseNormParams& params);  // LOCAL_RESPONSE_NORMALIZATION
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnCumsumParams& params);  // CUMSUM
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnGeluParams& params);  // GELU
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnBatchMatMulParams& params);  // BATCH_MATMUL
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnLeakyReluParams& params);  // LEAKY_RELU
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnResizeBilinearParams& params);  // RESIZE_BILINEAR
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnResizeNearestNeighborParams& params);  // RESIZE_NEAREST_NEIGHBOR
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnTransposeConvParams& params);  // TRANSPOSE_CONV
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnStridedSliceParams& params);  // STRIDED_SLICE
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnGatherParams& params);  // GATHER
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnOneHotParams& params);  // ONE_HOT
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnReverseSequenceParams& params);  // REVERSE_SEQUENCE
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnBucketizeParams& params);  // BUCKETIZE (the boundaries must outlive Finish)
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnFakeQuantParams& params);  // FAKE_QUANT
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnEmbeddingLookupSparseParams& params);  // EMBEDDING_LOOKUP_SPARSE
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnRandomParams& params);  // RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnSplitParams& params);  // SPLIT
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnSplitVParams& params);  // SPLIT_V
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnPackParams& params);  // PACK
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnUnpackParams& params);  // UNPACK
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnLSTMParams& params);  // LSTM
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnUnidirectionalSequenceLSTMParams& params);  // UNIDIRECTIONAL_SEQUENCE_LSTM
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnSVDFParams& params);  // SVDF
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnRNNParams& params);  // RNN
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnSequenceRNNParams& params);  // UNIDIRECTIONAL_SEQUENCE_RNN
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnBidirectionalSequenceLSTMParams& params);  // BIDIRECTIONAL_SEQUENCE_LSTM
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnBidirectionalSequenceRNNParams& params);  // BIDIRECTIONAL_SEQUENCE_RNN
  // SHAPE, ARG_MAX, ARG_MIN: a type of kKilnNoType writes the op without an options table.
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnShapeParams& params);  // SHAPE
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnConv3DParams& params);  // CONV_3D, CONV_3D_TRANSPOSE
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnArgMaxParams& params);  // ARG_MAX
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnArgMinParams& params);  // ARG_MIN
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnIfParams& params);  // IF
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnWhileParams& params);  // WHILE
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnCallOnceParams& params);  // CALL_ONCE
  // VAR_HANDLE: the strings are copied now (null reads as empty).
  int AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
            const KilnVarHandleParams& params);  // VAR_HANDLE
  // A custom op named `name`; `options` is usually FlexMap(...).Finish().
  int AddCustomOp(const std::string& name, const std::vector<int>& inputs, const std::vector<int>& outputs,
                  const std::vector<uint8_t>& options = {});
  // The operator version written into the op's operator code (default 1).
  void SetOpVersion(int op, int version);

  // --- Subgraphs. Subgraph 0 ("main") exists from the start; AddSubgraph makes a new one current. ---
  int AddSubgraph(const std::string& name);
  void SetCurrentSubgraph(int subgraph);
  void SetInputs(const std::vector<int>& tensors);
  void SetOutputs(const std::vector<int>& tensors);

  void SetDescription(const std::string& description);
  // A SignatureDef `key` over `subgraph`: (name, tensor index) pairs for its inputs and outputs, written as given
  // (the reader checks them).
  void AddSignature(const std::string& key, int subgraph, const std::vector<std::pair<std::string, int>>& inputs,
                    const std::vector<std::pair<std::string, int>>& outputs);
  // Stores constant data and custom options after the flatbuffer, addressed by Buffer.offset/size and
  // Operator.large_custom_options_offset/size, as the converter does for models over 2 GB.
  void set_external_data(bool external) { external_data_ = external; }

  // The finished file, or an empty vector if a call above failed (see error()).
  std::vector<uint8_t> Finish();
  const std::string& error() const { return error_; }

  // --- Malformed output, for tests of the reader. ---
  // Skips the argument checks: out-of-range indices, negative dims, data of the wrong size go out as given.
  void set_unchecked(bool unchecked) { unchecked_ = unchecked; }
  void OverrideFileIdentifier(const std::string& four_chars) { identifier_ = four_chars; }
  void OverrideSchemaVersion(uint32_t version) { version_ = version; }
  void OverrideTensorBuffer(int tensor, uint32_t buffer_index);
  void OverrideOpcodeIndex(int op, uint32_t opcode_index);
  // Makes the tensor's buffer an external one at this raw offset/size, whatever the file holds there.
  void OverrideExternalBuffer(int tensor, uint64_t offset, uint64_t size);
  // Replaces the op's inputs, unchecked (e.g. a tensor index that does not exist).
  void OverrideOpInputs(int op, const std::vector<int>& inputs);
  // Gives a RESHAPE op a ReshapeOptions.new_shape of any length (KilnReshapeParams holds at most 8).
  void OverrideNewShape(int op, const std::vector<int>& new_shape);

 private:
  struct Tensor {
    KilnType type = kKilnFloat32;
    std::vector<int> shape;
    std::vector<int> shape_signature;
    std::string name;
    std::vector<uint8_t> data;
    bool has_data = false;
    bool is_variable = false;
    std::vector<float> scale;
    std::vector<int64_t> zero_point;
    int quantized_dimension = 0;
    bool has_buffer_override = false;
    uint32_t buffer_override = 0;
    bool has_external_override = false;
    uint64_t external_offset = 0;
    uint64_t external_size = 0;
    bool sparse = false;
    std::vector<int> traversal_order, block_map;
    std::vector<SparseDimension> sparse_dims;
  };
  enum class OptionsKind {
    kNone,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kConv,
    kConv3D,
    kDepthwise,
    kPool,
    kFullyConnected,
    kSoftmax,
    kConcatenation,
    kReshape,
    kSqueeze,
    kDepthToSpace,
    kSpaceToDepth,
    kMirrorPad,
    kReducer,
    kL2Norm,
    kLocalResponseNorm,
    kCumsum,
    kGelu,
    kBatchMatMul,
    kLeakyRelu,
    kResizeBilinear,
    kResizeNearestNeighbor,
    kTransposeConv,
    kStridedSlice,
    kGather,
    kOneHot,
    kSplit,
    kSplitV,
    kPack,
    kUnpack,
    kShape,
    kArgMax,
    kArgMin,
    kReverseSequence,
    kBucketize,
    kFakeQuant,
    kEmbeddingLookupSparse,
    kRandom,
    kLstm,
    kSequenceLstm,
    kSvdf,
    kRnn,
    kSequenceRnn,
    kBidiLstm,
    kBidiRnn,
    kIf,
    kWhile,
    kCallOnce,
    kVarHandle
  };
  struct Operator {
    int builtin_code = 0;
    std::string custom_name;
    int version = 1;
    std::vector<int> inputs;
    std::vector<int> outputs;
    OptionsKind options_kind = OptionsKind::kNone;
    // The options struct's bytes (one of builtin_op_data.h's POD structs).
    std::vector<uint8_t> options;
    std::vector<uint8_t> custom_options;
    std::string container, shared_name;  // VAR_HANDLE's strings (the params' pointers are not kept)
    bool has_opcode_override = false;
    uint32_t opcode_override = 0;
    bool has_new_shape_override = false;
    std::vector<int> new_shape_override;
  };
  struct Subgraph {
    std::string name;
    std::vector<Tensor> tensors;
    std::vector<Operator> operators;
    std::vector<int> inputs;
    std::vector<int> outputs;
  };

  bool Error(const std::string& message);
  Tensor* GetTensor(int tensor, const char* call);
  Operator* GetOp(int op, const char* call);
  int AddOpImpl(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
                OptionsKind kind, const void* params, size_t params_size);
  // Builds the flatbuffer with external data placed from `data_start` on; appends the placed data to
  // `external` (offsets relative to the start of the file).
  std::vector<uint8_t> Build(uint64_t data_start, std::vector<uint8_t>* external);

  std::vector<Subgraph> subgraphs_;
  int current_ = 0;
  std::string description_;
  struct Signature {
    std::string key;
    int subgraph = 0;
    std::vector<std::pair<std::string, int>> inputs, outputs;
  };
  std::vector<Signature> signatures_;
  std::string error_;
  std::string identifier_ = "TFL3";
  uint32_t version_ = 3;
  bool unchecked_ = false;
  bool external_data_ = false;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_MODEL_MODEL_WRITER_H_
