// Writes .tflite files (model_writer.h) with FlatBuffers, for tests, the demo model and code-built models.

#include "runtime/model/model_writer.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>

#include "flatbuffers/flexbuffers.h"
#include "tflite_generated.h"

namespace kiln {
namespace {

namespace fb = ::kiln::tflite;

bool ToFileType(KilnType type, fb::TensorType* out) {
  switch (type) {
    case kKilnFloat32:
      *out = fb::TensorType::FLOAT32;
      return true;
    case kKilnFloat16:
      *out = fb::TensorType::FLOAT16;
      return true;
    case kKilnInt32:
      *out = fb::TensorType::INT32;
      return true;
    case kKilnUInt8:
      *out = fb::TensorType::UINT8;
      return true;
    case kKilnInt64:
      *out = fb::TensorType::INT64;
      return true;
    case kKilnString:
      *out = fb::TensorType::STRING;
      return true;
    case kKilnBool:
      *out = fb::TensorType::BOOL;
      return true;
    case kKilnInt16:
      *out = fb::TensorType::INT16;
      return true;
    case kKilnComplex64:
      *out = fb::TensorType::COMPLEX64;
      return true;
    case kKilnInt8:
      *out = fb::TensorType::INT8;
      return true;
    case kKilnFloat64:
      *out = fb::TensorType::FLOAT64;
      return true;
    case kKilnComplex128:
      *out = fb::TensorType::COMPLEX128;
      return true;
    case kKilnUInt64:
      *out = fb::TensorType::UINT64;
      return true;
    case kKilnResource:
      *out = fb::TensorType::RESOURCE;
      return true;
    case kKilnVariant:
      *out = fb::TensorType::VARIANT;
      return true;
    case kKilnUInt32:
      *out = fb::TensorType::UINT32;
      return true;
    case kKilnUInt16:
      *out = fb::TensorType::UINT16;
      return true;
    case kKilnInt4:
      *out = fb::TensorType::INT4;
      return true;
    case kKilnNoType:
      return false;
  }
  return false;
}

// Element sizes for the writer's own size check (the reader has the authoritative TypeSize).
size_t ElementSize(KilnType type) {
  switch (type) {
    case kKilnBool:
    case kKilnUInt8:
    case kKilnInt8:
      return 1;
    case kKilnInt16:
    case kKilnUInt16:
    case kKilnFloat16:
      return 2;
    case kKilnFloat32:
    case kKilnInt32:
    case kKilnUInt32:
      return 4;
    case kKilnInt64:
    case kKilnUInt64:
    case kKilnFloat64:
    case kKilnComplex64:
      return 8;
    case kKilnComplex128:
      return 16;
    default:
      return 0;
  }
}

// Kiln's activation and padding values are the file's, shifted for padding. Out-of-range values (only
// reachable in unchecked mode) are written as they come so that tests can produce them.
fb::ActivationFunctionType ToFileActivation(KilnFusedActivation activation) {
  return static_cast<fb::ActivationFunctionType>(static_cast<int8_t>(activation));
}
fb::Padding ToFilePadding(KilnPadding padding) {
  return static_cast<fb::Padding>(static_cast<int8_t>(static_cast<int>(padding) - 1));
}

constexpr uint64_t kExternalAlignment = 16;
uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// FlexMap

FlexMap& FlexMap::Int(const std::string& key, int64_t value) {
  Value v;
  v.kind = Value::kInt;
  v.int_value = value;
  entries_[key] = v;
  return *this;
}

FlexMap& FlexMap::Float(const std::string& key, float value) {
  Value v;
  v.kind = Value::kFloat;
  v.float_value = value;
  entries_[key] = v;
  return *this;
}

FlexMap& FlexMap::Bool(const std::string& key, bool value) {
  Value v;
  v.kind = Value::kBool;
  v.int_value = value ? 1 : 0;
  entries_[key] = v;
  return *this;
}

FlexMap& FlexMap::String(const std::string& key, const std::string& value) {
  Value v;
  v.kind = Value::kString;
  v.string_value = value;
  entries_[key] = v;
  return *this;
}

FlexMap& FlexMap::FloatVector(const std::string& key, const std::vector<float>& values) {
  Value v;
  v.kind = Value::kFloatVector;
  v.floats = values;
  entries_[key] = v;
  return *this;
}

FlexMap& FlexMap::IntVector(const std::string& key, const std::vector<int64_t>& values) {
  Value v;
  v.kind = Value::kIntVector;
  v.ints = values;
  entries_[key] = v;
  return *this;
}

std::vector<uint8_t> FlexMap::Finish() const {
  flexbuffers::Builder builder;
  size_t start = builder.StartMap();
  for (const auto& [key, value] : entries_) {
    const char* k = key.c_str();
    switch (value.kind) {
      case Value::kInt:
        builder.Int(k, value.int_value);
        break;
      case Value::kFloat:
        builder.Float(k, value.float_value);
        break;
      case Value::kBool:
        builder.Bool(k, value.int_value != 0);
        break;
      case Value::kString:
        builder.String(k, value.string_value);
        break;
      case Value::kFloatVector:
        builder.Vector(k, value.floats.data(), value.floats.size());
        break;
      case Value::kIntVector:
        builder.Vector(k, value.ints.data(), value.ints.size());
        break;
    }
  }
  builder.EndMap(start);
  builder.Finish();
  return builder.GetBuffer();
}

// ---------------------------------------------------------------------------------------------------------
// ModelWriter: recording

ModelWriter::ModelWriter() {
  subgraphs_.emplace_back();
  subgraphs_.back().name = "main";
}

bool ModelWriter::Error(const std::string& message) {
  if (error_.empty()) error_ = message;
  return false;
}

ModelWriter::Tensor* ModelWriter::GetTensor(int tensor, const char* call) {
  auto& tensors = subgraphs_[static_cast<size_t>(current_)].tensors;
  if (tensor < 0 || static_cast<size_t>(tensor) >= tensors.size()) {
    Error(std::string(call) + ": no tensor " + std::to_string(tensor));
    return nullptr;
  }
  return &tensors[static_cast<size_t>(tensor)];
}

ModelWriter::Operator* ModelWriter::GetOp(int op, const char* call) {
  auto& operators = subgraphs_[static_cast<size_t>(current_)].operators;
  if (op < 0 || static_cast<size_t>(op) >= operators.size()) {
    Error(std::string(call) + ": no operator " + std::to_string(op));
    return nullptr;
  }
  return &operators[static_cast<size_t>(op)];
}

int ModelWriter::AddTensor(KilnType type, const std::vector<int>& shape, const std::string& name) {
  fb::TensorType file_type;
  if (!ToFileType(type, &file_type)) {
    Error("AddTensor '" + name + "': type " + std::to_string(type) + " has no .tflite equivalent");
    return -1;
  }
  if (!unchecked_) {
    for (int dim : shape) {
      if (dim < 0) {
        Error("AddTensor '" + name + "': negative dimension " + std::to_string(dim));
        return -1;
      }
    }
  }
  Tensor tensor;
  tensor.type = type;
  tensor.shape = shape;
  tensor.name = name;
  auto& tensors = subgraphs_[static_cast<size_t>(current_)].tensors;
  tensors.push_back(std::move(tensor));
  return static_cast<int>(tensors.size() - 1);
}

int ModelWriter::AddConstTensor(KilnType type, const std::vector<int>& shape, const std::string& name,
                                const void* data, size_t size) {
  if (!unchecked_) {
    size_t element_size = ElementSize(type);
    uint64_t count = 1;
    for (int dim : shape) count *= static_cast<uint64_t>(std::max(dim, 0));
    if (element_size != 0 && count * element_size != size) {
      Error("AddConstTensor '" + name + "': " + std::to_string(size) +
            " bytes of data, but the shape needs " + std::to_string(count * element_size));
      return -1;
    }
    if (size == 0 && count != 0) {
      Error("AddConstTensor '" + name + "': no data (an empty buffer means 'not a constant' in .tflite)");
      return -1;
    }
  }
  int index = AddTensor(type, shape, name);
  if (index < 0) return -1;
  Tensor& tensor = subgraphs_[static_cast<size_t>(current_)].tensors[static_cast<size_t>(index)];
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  tensor.data.assign(bytes, bytes + size);
  tensor.has_data = true;
  return index;
}

void ModelWriter::SetQuantization(int tensor, const std::vector<float>& scale,
                                  const std::vector<int64_t>& zero_point, int quantized_dimension) {
  Tensor* t = GetTensor(tensor, "SetQuantization");
  if (t == nullptr) return;
  if (!unchecked_) {
    if (scale.empty() || scale.size() != zero_point.size()) {
      Error("SetQuantization '" + t->name + "': need the same, non-zero number of scales and zero points");
      return;
    }
    if (scale.size() > 1 &&
        (quantized_dimension < 0 || static_cast<size_t>(quantized_dimension) >= t->shape.size() ||
         static_cast<size_t>(t->shape[static_cast<size_t>(quantized_dimension)]) != scale.size())) {
      Error("SetQuantization '" + t->name + "': per-channel scales must match shape[quantized_dimension]");
      return;
    }
  }
  t->scale = scale;
  t->zero_point = zero_point;
  t->quantized_dimension = quantized_dimension;
}

void ModelWriter::SetVariable(int tensor, bool is_variable) {
  if (Tensor* t = GetTensor(tensor, "SetVariable")) t->is_variable = is_variable;
}

void ModelWriter::SetSparsity(int tensor, const std::vector<int>& traversal_order, const std::vector<int>& block_map,
                              const std::vector<SparseDimension>& dims) {
  if (Tensor* t = GetTensor(tensor, "SetSparsity")) {
    t->sparse = true;
    t->traversal_order = traversal_order;
    t->block_map = block_map;
    t->sparse_dims = dims;
  }
}

void ModelWriter::SetShapeSignature(int tensor, const std::vector<int>& shape_signature) {
  if (Tensor* t = GetTensor(tensor, "SetShapeSignature")) t->shape_signature = shape_signature;
}

int ModelWriter::AddOpImpl(KilnBuiltinOperator code, const std::vector<int>& inputs,
                           const std::vector<int>& outputs, OptionsKind kind, const void* params,
                           size_t params_size) {
  const std::string op_name = "AddOp(code " + std::to_string(code) + ")";
  if (!unchecked_) {
    int tensor_count = static_cast<int>(subgraphs_[static_cast<size_t>(current_)].tensors.size());
    for (int t : inputs) {
      if (t < -1 || t >= tensor_count) {
        Error(op_name + ": input tensor " + std::to_string(t) + " does not exist");
        return -1;
      }
    }
    for (int t : outputs) {
      if (t < 0 || t >= tensor_count) {
        Error(op_name + ": output tensor " + std::to_string(t) + " does not exist");
        return -1;
      }
    }
    bool matches = true;
    switch (kind) {
      case OptionsKind::kNone:
        break;
      case OptionsKind::kAdd:
        matches = code == kKilnBuiltinAdd || code == kKilnBuiltinSub;
        break;
      case OptionsKind::kMul:
        matches = code == kKilnBuiltinMul || code == kKilnBuiltinDiv;
        break;
      case OptionsKind::kConv:
        matches = code == kKilnBuiltinConv2d;
        break;
      case OptionsKind::kConv3D:
        matches = code == kKilnBuiltinConv3d || code == kKilnBuiltinConv3dTranspose;
        break;
      case OptionsKind::kDepthwise:
        matches = code == kKilnBuiltinDepthwiseConv2d;
        break;
      case OptionsKind::kPool:
        matches = code == kKilnBuiltinAveragePool2d || code == kKilnBuiltinMaxPool2d ||
                  code == kKilnBuiltinL2Pool2d;
        break;
      case OptionsKind::kFullyConnected:
        matches = code == kKilnBuiltinFullyConnected;
        break;
      case OptionsKind::kSoftmax:
        matches = code == kKilnBuiltinSoftmax;
        break;
      case OptionsKind::kConcatenation:
        matches = code == kKilnBuiltinConcatenation;
        break;
      case OptionsKind::kReshape:
        matches = code == kKilnBuiltinReshape;
        break;
      case OptionsKind::kSqueeze:
        matches = code == kKilnBuiltinSqueeze;
        break;
      case OptionsKind::kL2Norm:
        matches = code == kKilnBuiltinL2Normalization;
        break;
      case OptionsKind::kLocalResponseNorm:
        matches = code == kKilnBuiltinLocalResponseNormalization;
        break;
      case OptionsKind::kCumsum:
        matches = code == kKilnBuiltinCumsum;
        break;
      case OptionsKind::kGelu:
        matches = code == kKilnBuiltinGelu;
        break;
      case OptionsKind::kReverseSequence:
        matches = code == kKilnBuiltinReverseSequence;
        break;
      case OptionsKind::kBucketize:
        matches = code == kKilnBuiltinBucketize;
        break;
      case OptionsKind::kFakeQuant:
        matches = code == kKilnBuiltinFakeQuant;
        break;
      case OptionsKind::kEmbeddingLookupSparse:
        matches = code == kKilnBuiltinEmbeddingLookupSparse;
        break;
      case OptionsKind::kRandom:
        matches = code == kKilnBuiltinRandomUniform || code == kKilnBuiltinRandomStandardNormal ||
                  code == kKilnBuiltinMultinomial;
        break;
      case OptionsKind::kBatchMatMul:
        matches = code == kKilnBuiltinBatchMatmul;
        break;
      case OptionsKind::kDepthToSpace:
        matches = code == kKilnBuiltinDepthToSpace;
        break;
      case OptionsKind::kSpaceToDepth:
        matches = code == kKilnBuiltinSpaceToDepth;
        break;
      case OptionsKind::kMirrorPad:
        matches = code == kKilnBuiltinMirrorPad;
        break;
      case OptionsKind::kLeakyRelu:
        matches = code == kKilnBuiltinLeakyRelu;
        break;
      case OptionsKind::kResizeBilinear:
        matches = code == kKilnBuiltinResizeBilinear;
        break;
      case OptionsKind::kResizeNearestNeighbor:
        matches = code == kKilnBuiltinResizeNearestNeighbor;
        break;
      case OptionsKind::kTransposeConv:
        matches = code == kKilnBuiltinTransposeConv;
        break;
      case OptionsKind::kStridedSlice:
        matches = code == kKilnBuiltinStridedSlice;
        break;
      case OptionsKind::kGather:
        matches = code == kKilnBuiltinGather;
        break;
      case OptionsKind::kOneHot:
        matches = code == kKilnBuiltinOneHot;
        break;
      case OptionsKind::kSplit:
        matches = code == kKilnBuiltinSplit;
        break;
      case OptionsKind::kSplitV:
        matches = code == kKilnBuiltinSplitV;
        break;
      case OptionsKind::kPack:
        matches = code == kKilnBuiltinPack;
        break;
      case OptionsKind::kUnpack:
        matches = code == kKilnBuiltinUnpack;
        break;
      case OptionsKind::kShape:
        matches = code == kKilnBuiltinShape;
        break;
      case OptionsKind::kArgMax:
        matches = code == kKilnBuiltinArgMax;
        break;
      case OptionsKind::kArgMin:
        matches = code == kKilnBuiltinArgMin;
        break;
      case OptionsKind::kLstm:
        matches = code == kKilnBuiltinLstm;
        break;
      case OptionsKind::kSequenceLstm:
        matches = code == kKilnBuiltinUnidirectionalSequenceLstm;
        break;
      case OptionsKind::kSvdf:
        matches = code == kKilnBuiltinSvdf;
        break;
      case OptionsKind::kRnn:
        matches = code == kKilnBuiltinRnn;
        break;
      case OptionsKind::kSequenceRnn:
        matches = code == kKilnBuiltinUnidirectionalSequenceRnn;
        break;
      case OptionsKind::kBidiLstm:
        matches = code == kKilnBuiltinBidirectionalSequenceLstm;
        break;
      case OptionsKind::kBidiRnn:
        matches = code == kKilnBuiltinBidirectionalSequenceRnn;
        break;
      case OptionsKind::kIf:
        matches = code == kKilnBuiltinIf;
        break;
      case OptionsKind::kWhile:
        matches = code == kKilnBuiltinWhile;
        break;
      case OptionsKind::kCallOnce:
        matches = code == kKilnBuiltinCallOnce;
        break;
      case OptionsKind::kVarHandle:
        matches = code == kKilnBuiltinVarHandle;
        break;
      case OptionsKind::kReducer:
        matches = code == kKilnBuiltinMean || code == kKilnBuiltinSum || code == kKilnBuiltinReduceMax ||
                  code == kKilnBuiltinReduceMin || code == kKilnBuiltinReduceProd ||
                  code == kKilnBuiltinReduceAny || code == kKilnBuiltinReduceAll;
        break;
      default:
        break;
    }
    if (!matches) {
      Error(op_name + ": the options struct does not belong to this operator");
      return -1;
    }
  }
  Operator op;
  op.builtin_code = code;
  op.inputs = inputs;
  op.outputs = outputs;
  op.options_kind = kind;
  if (params != nullptr) {
    const uint8_t* bytes = static_cast<const uint8_t*>(params);
    op.options.assign(bytes, bytes + params_size);
  }
  auto& operators = subgraphs_[static_cast<size_t>(current_)].operators;
  operators.push_back(std::move(op));
  return static_cast<int>(operators.size() - 1);
}

int ModelWriter::AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs,
                       const std::vector<int>& outputs) {
  if (!unchecked_ && code == kKilnBuiltinCustom) {
    Error("AddOp: use AddCustomOp for custom ops");
    return -1;
  }
  return AddOpImpl(code, inputs, outputs, OptionsKind::kNone, nullptr, 0);
}

#define KILN_ADD_OP_WITH(Struct, Kind)                                                   \
  int ModelWriter::AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs,       \
                         const std::vector<int>& outputs, const Struct& params) {        \
    return AddOpImpl(code, inputs, outputs, OptionsKind::Kind, &params, sizeof(params)); \
  }
KILN_ADD_OP_WITH(KilnAddParams, kAdd)
KILN_ADD_OP_WITH(KilnMulParams, kMul)
KILN_ADD_OP_WITH(KilnConvParams, kConv)
KILN_ADD_OP_WITH(KilnConv3DParams, kConv3D)
KILN_ADD_OP_WITH(KilnDepthwiseConvParams, kDepthwise)
KILN_ADD_OP_WITH(KilnPoolParams, kPool)
KILN_ADD_OP_WITH(KilnFullyConnectedParams, kFullyConnected)
KILN_ADD_OP_WITH(KilnSoftmaxParams, kSoftmax)
KILN_ADD_OP_WITH(KilnConcatenationParams, kConcatenation)
KILN_ADD_OP_WITH(KilnReshapeParams, kReshape)
KILN_ADD_OP_WITH(KilnSqueezeParams, kSqueeze)
KILN_ADD_OP_WITH(KilnDepthToSpaceParams, kDepthToSpace)
KILN_ADD_OP_WITH(KilnSpaceToDepthParams, kSpaceToDepth)
KILN_ADD_OP_WITH(KilnMirrorPadParams, kMirrorPad)
KILN_ADD_OP_WITH(KilnReducerParams, kReducer)
KILN_ADD_OP_WITH(KilnL2NormParams, kL2Norm)
KILN_ADD_OP_WITH(KilnLocalResponseNormParams, kLocalResponseNorm)
KILN_ADD_OP_WITH(KilnCumsumParams, kCumsum)
KILN_ADD_OP_WITH(KilnGeluParams, kGelu)
KILN_ADD_OP_WITH(KilnBatchMatMulParams, kBatchMatMul)
KILN_ADD_OP_WITH(KilnLeakyReluParams, kLeakyRelu)
KILN_ADD_OP_WITH(KilnResizeBilinearParams, kResizeBilinear)
KILN_ADD_OP_WITH(KilnResizeNearestNeighborParams, kResizeNearestNeighbor)
KILN_ADD_OP_WITH(KilnTransposeConvParams, kTransposeConv)
KILN_ADD_OP_WITH(KilnStridedSliceParams, kStridedSlice)
KILN_ADD_OP_WITH(KilnGatherParams, kGather)
KILN_ADD_OP_WITH(KilnOneHotParams, kOneHot)
KILN_ADD_OP_WITH(KilnSplitParams, kSplit)
KILN_ADD_OP_WITH(KilnSplitVParams, kSplitV)
KILN_ADD_OP_WITH(KilnPackParams, kPack)
KILN_ADD_OP_WITH(KilnUnpackParams, kUnpack)
KILN_ADD_OP_WITH(KilnShapeParams, kShape)
KILN_ADD_OP_WITH(KilnArgMaxParams, kArgMax)
KILN_ADD_OP_WITH(KilnArgMinParams, kArgMin)
KILN_ADD_OP_WITH(KilnReverseSequenceParams, kReverseSequence)
KILN_ADD_OP_WITH(KilnBucketizeParams, kBucketize)
KILN_ADD_OP_WITH(KilnFakeQuantParams, kFakeQuant)
KILN_ADD_OP_WITH(KilnEmbeddingLookupSparseParams, kEmbeddingLookupSparse)
KILN_ADD_OP_WITH(KilnRandomParams, kRandom)
KILN_ADD_OP_WITH(KilnLSTMParams, kLstm)
KILN_ADD_OP_WITH(KilnUnidirectionalSequenceLSTMParams, kSequenceLstm)
KILN_ADD_OP_WITH(KilnSVDFParams, kSvdf)
KILN_ADD_OP_WITH(KilnRNNParams, kRnn)
KILN_ADD_OP_WITH(KilnSequenceRNNParams, kSequenceRnn)
KILN_ADD_OP_WITH(KilnBidirectionalSequenceLSTMParams, kBidiLstm)
KILN_ADD_OP_WITH(KilnBidirectionalSequenceRNNParams, kBidiRnn)
KILN_ADD_OP_WITH(KilnIfParams, kIf)
KILN_ADD_OP_WITH(KilnWhileParams, kWhile)
KILN_ADD_OP_WITH(KilnCallOnceParams, kCallOnce)
#undef KILN_ADD_OP_WITH

int ModelWriter::AddOp(KilnBuiltinOperator code, const std::vector<int>& inputs, const std::vector<int>& outputs,
                       const KilnVarHandleParams& params) {
  const int index = AddOpImpl(code, inputs, outputs, OptionsKind::kVarHandle, nullptr, 0);
  if (index < 0) return index;
  Operator& op = subgraphs_[static_cast<size_t>(current_)].operators[static_cast<size_t>(index)];
  op.container = params.container != nullptr ? params.container : "";
  op.shared_name = params.shared_name != nullptr ? params.shared_name : "";
  return index;
}

int ModelWriter::AddCustomOp(const std::string& name, const std::vector<int>& inputs,
                             const std::vector<int>& outputs, const std::vector<uint8_t>& options) {
  if (!unchecked_ && name.empty()) {
    Error("AddCustomOp: a custom op needs a name");
    return -1;
  }
  int index = AddOpImpl(kKilnBuiltinCustom, inputs, outputs, OptionsKind::kNone, nullptr, 0);
  if (index < 0) return -1;
  Operator& op = subgraphs_[static_cast<size_t>(current_)].operators[static_cast<size_t>(index)];
  op.custom_name = name;
  op.custom_options = options;
  return index;
}

void ModelWriter::SetOpVersion(int op, int version) {
  if (Operator* o = GetOp(op, "SetOpVersion")) o->version = version;
}

int ModelWriter::AddSubgraph(const std::string& name) {
  subgraphs_.emplace_back();
  subgraphs_.back().name = name;
  current_ = static_cast<int>(subgraphs_.size() - 1);
  return current_;
}

void ModelWriter::SetCurrentSubgraph(int subgraph) {
  if (subgraph < 0 || static_cast<size_t>(subgraph) >= subgraphs_.size()) {
    Error("SetCurrentSubgraph: no subgraph " + std::to_string(subgraph));
    return;
  }
  current_ = subgraph;
}

void ModelWriter::SetInputs(const std::vector<int>& tensors) {
  Subgraph& s = subgraphs_[static_cast<size_t>(current_)];
  if (!unchecked_) {
    for (int t : tensors) {
      if (t < 0 || static_cast<size_t>(t) >= s.tensors.size()) {
        Error("SetInputs: tensor " + std::to_string(t) + " does not exist");
        return;
      }
    }
  }
  s.inputs = tensors;
}

void ModelWriter::SetOutputs(const std::vector<int>& tensors) {
  Subgraph& s = subgraphs_[static_cast<size_t>(current_)];
  if (!unchecked_) {
    for (int t : tensors) {
      if (t < 0 || static_cast<size_t>(t) >= s.tensors.size()) {
        Error("SetOutputs: tensor " + std::to_string(t) + " does not exist");
        return;
      }
    }
  }
  s.outputs = tensors;
}

void ModelWriter::SetDescription(const std::string& description) { description_ = description; }

void ModelWriter::AddSignature(const std::string& key, int subgraph,
                               const std::vector<std::pair<std::string, int>>& inputs,
                               const std::vector<std::pair<std::string, int>>& outputs) {
  signatures_.push_back(Signature{key, subgraph, inputs, outputs});
}

void ModelWriter::OverrideTensorBuffer(int tensor, uint32_t buffer_index) {
  if (Tensor* t = GetTensor(tensor, "OverrideTensorBuffer")) {
    t->has_buffer_override = true;
    t->buffer_override = buffer_index;
  }
}

void ModelWriter::OverrideOpcodeIndex(int op, uint32_t opcode_index) {
  if (Operator* o = GetOp(op, "OverrideOpcodeIndex")) {
    o->has_opcode_override = true;
    o->opcode_override = opcode_index;
  }
}

void ModelWriter::OverrideExternalBuffer(int tensor, uint64_t offset, uint64_t size) {
  if (Tensor* t = GetTensor(tensor, "OverrideExternalBuffer")) {
    t->has_external_override = true;
    t->external_offset = offset;
    t->external_size = size;
  }
}

void ModelWriter::OverrideOpInputs(int op, const std::vector<int>& inputs) {
  if (Operator* o = GetOp(op, "OverrideOpInputs")) o->inputs = inputs;
}

void ModelWriter::OverrideNewShape(int op, const std::vector<int>& new_shape) {
  if (Operator* o = GetOp(op, "OverrideNewShape")) {
    o->has_new_shape_override = true;
    o->new_shape_override = new_shape;
  }
}

// ---------------------------------------------------------------------------------------------------------
// ModelWriter: building the file

std::vector<uint8_t> ModelWriter::Build(uint64_t data_start, std::vector<uint8_t>* external) {
  flatbuffers::FlatBufferBuilder b(4096);
  b.ForceDefaults(false);

  // Places `bytes` after the flatbuffer; returns its file offset.
  auto place_external = [&](const std::vector<uint8_t>& bytes) {
    external->resize(AlignUp(external->size(), kExternalAlignment), 0);
    uint64_t offset = data_start + external->size();
    external->insert(external->end(), bytes.begin(), bytes.end());
    return offset;
  };

  // Operator codes, one per distinct (code, custom name, version), in order of first use.
  std::vector<std::tuple<int, std::string, int>> codes;
  auto code_index = [&](const Operator& op) {
    auto key = std::make_tuple(op.builtin_code, op.custom_name, op.version);
    auto it = std::find(codes.begin(), codes.end(), key);
    if (it != codes.end()) return static_cast<uint32_t>(it - codes.begin());
    codes.push_back(key);
    return static_cast<uint32_t>(codes.size() - 1);
  };

  // Buffer 0 is the empty sentinel, as the converter writes it.
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  buffers.push_back(fb::CreateBuffer(b));

  std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs;
  for (const Subgraph& s : subgraphs_) {
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    for (const Tensor& t : s.tensors) {
      uint32_t buffer_index = 0;
      if (t.has_external_override) {
        buffers.push_back(fb::CreateBuffer(b, 0, t.external_offset, t.external_size));
        buffer_index = static_cast<uint32_t>(buffers.size() - 1);
      } else if (t.has_data) {
        if (external_data_) {
          uint64_t offset = place_external(t.data);
          buffers.push_back(fb::CreateBuffer(b, 0, offset, t.data.size()));
        } else {
          b.ForceVectorAlignment(t.data.size(), sizeof(uint8_t), 16);
          auto data = b.CreateVector(t.data);
          buffers.push_back(fb::CreateBuffer(b, data));
        }
        buffer_index = static_cast<uint32_t>(buffers.size() - 1);
      }
      if (t.has_buffer_override) buffer_index = t.buffer_override;

      flatbuffers::Offset<fb::QuantizationParameters> quantization = 0;
      if (!t.scale.empty() || !t.zero_point.empty()) {
        quantization =
            fb::CreateQuantizationParameters(b, 0, 0, b.CreateVector(t.scale), b.CreateVector(t.zero_point),
                                             fb::QuantizationDetails::NONE, 0, t.quantized_dimension);
      }
      fb::TensorType type = fb::TensorType::FLOAT32;
      ToFileType(t.type, &type);
      auto shape = b.CreateVector(t.shape);
      auto name = b.CreateString(t.name);
      flatbuffers::Offset<flatbuffers::Vector<int32_t>> signature = 0;
      if (!t.shape_signature.empty()) signature = b.CreateVector(t.shape_signature);
      flatbuffers::Offset<fb::SparsityParameters> sparsity = 0;
      if (t.sparse) {
        auto index_vector = [&b](KilnType index_type, const std::vector<int32_t>& v,
                                 fb::SparseIndexVector* kind) -> flatbuffers::Offset<void> {
          if (index_type == kKilnUInt8) {
            *kind = fb::SparseIndexVector::Uint8Vector;
            return fb::CreateUint8Vector(b, b.CreateVector(std::vector<uint8_t>(v.begin(), v.end()))).Union();
          }
          if (index_type == kKilnUInt16) {
            *kind = fb::SparseIndexVector::Uint16Vector;
            return fb::CreateUint16Vector(b, b.CreateVector(std::vector<uint16_t>(v.begin(), v.end()))).Union();
          }
          *kind = fb::SparseIndexVector::Int32Vector;
          return fb::CreateInt32Vector(b, b.CreateVector(v)).Union();
        };
        std::vector<flatbuffers::Offset<fb::DimensionMetadata>> dims;
        for (const SparseDimension& d : t.sparse_dims) {
          if (!d.csr) {
            dims.push_back(fb::CreateDimensionMetadata(b, fb::DimensionType::DENSE, d.dense_size));
            continue;
          }
          fb::SparseIndexVector segments_kind, indices_kind;
          auto segments = index_vector(d.index_type, d.segments, &segments_kind);
          auto indices = index_vector(d.index_type, d.indices, &indices_kind);
          dims.push_back(fb::CreateDimensionMetadata(b, fb::DimensionType::SPARSE_CSR, 0, segments_kind, segments,
                                                     indices_kind, indices));
        }
        sparsity = fb::CreateSparsityParameters(b, b.CreateVector(t.traversal_order), b.CreateVector(t.block_map),
                                                b.CreateVector(dims));
      }
      tensors.push_back(fb::CreateTensor(b, shape, type, buffer_index, name, quantization, t.is_variable, sparsity,
                                         signature, /*has_rank=*/true));
    }

    std::vector<flatbuffers::Offset<fb::Operator>> operators;
    for (const Operator& op : s.operators) {
      uint32_t opcode_index = code_index(op);
      if (op.has_opcode_override) opcode_index = op.opcode_override;

      fb::BuiltinOptions options_type = fb::BuiltinOptions::NONE;
      flatbuffers::Offset<void> options = 0;
      auto params = [&op](auto* out) {
        std::memset(out, 0, sizeof(*out));
        std::memcpy(out, op.options.data(), std::min(sizeof(*out), op.options.size()));
      };
      switch (op.options_kind) {
        case OptionsKind::kNone:
          // Ops whose options table has no fields still get one, as the converter writes them.
          switch (op.builtin_code) {
            case kKilnBuiltinPad:
              options_type = fb::BuiltinOptions::PadOptions;
              options = fb::CreatePadOptions(b).Union();
              break;
            case kKilnBuiltinTranspose:
              options_type = fb::BuiltinOptions::TransposeOptions;
              options = fb::CreateTransposeOptions(b).Union();
              break;
            case kKilnBuiltinDequantize:
              options_type = fb::BuiltinOptions::DequantizeOptions;
              options = fb::CreateDequantizeOptions(b).Union();
              break;
            case kKilnBuiltinQuantize:
              options_type = fb::BuiltinOptions::QuantizeOptions;
              options = fb::CreateQuantizeOptions(b).Union();
              break;
            case kKilnBuiltinAtan2:
              options_type = fb::BuiltinOptions::ATan2Options;
              options = fb::CreateATan2Options(b).Union();
              break;
            case kKilnBuiltinSlice:
              options_type = fb::BuiltinOptions::SliceOptions;
              options = fb::CreateSliceOptions(b).Union();
              break;
            case kKilnBuiltinExpandDims:
              options_type = fb::BuiltinOptions::ExpandDimsOptions;
              options = fb::CreateExpandDimsOptions(b).Union();
              break;
            case kKilnBuiltinTile:
              options_type = fb::BuiltinOptions::TileOptions;
              options = fb::CreateTileOptions(b).Union();
              break;
            default:
              break;
          }
          break;
        case OptionsKind::kAdd:
        case OptionsKind::kSub: {
          KilnAddParams p;
          params(&p);
          if (op.builtin_code == kKilnBuiltinSub) {
            options_type = fb::BuiltinOptions::SubOptions;
            options = fb::CreateSubOptions(b, ToFileActivation(p.activation), p.pot_scale_int16).Union();
          } else {
            options_type = fb::BuiltinOptions::AddOptions;
            options = fb::CreateAddOptions(b, ToFileActivation(p.activation), p.pot_scale_int16).Union();
          }
          break;
        }
        case OptionsKind::kMul:
        case OptionsKind::kDiv: {
          KilnMulParams p;
          params(&p);
          if (op.builtin_code == kKilnBuiltinDiv) {
            options_type = fb::BuiltinOptions::DivOptions;
            options = fb::CreateDivOptions(b, ToFileActivation(p.activation)).Union();
          } else {
            options_type = fb::BuiltinOptions::MulOptions;
            options = fb::CreateMulOptions(b, ToFileActivation(p.activation)).Union();
          }
          break;
        }
        case OptionsKind::kConv: {
          KilnConvParams p;
          params(&p);
          options_type = fb::BuiltinOptions::Conv2DOptions;
          options = fb::CreateConv2DOptions(b, ToFilePadding(p.padding), p.stride_width, p.stride_height,
                                            ToFileActivation(p.activation), p.dilation_width_factor,
                                            p.dilation_height_factor)
                        .Union();
          break;
        }
        case OptionsKind::kConv3D: {
          KilnConv3DParams p;
          params(&p);
          options_type = fb::BuiltinOptions::Conv3DOptions;
          options = fb::CreateConv3DOptions(b, ToFilePadding(p.padding), p.stride_depth, p.stride_width,
                                            p.stride_height, ToFileActivation(p.activation), p.dilation_depth_factor,
                                            p.dilation_width_factor, p.dilation_height_factor)
                        .Union();
          break;
        }
        case OptionsKind::kDepthwise: {
          KilnDepthwiseConvParams p;
          params(&p);
          options_type = fb::BuiltinOptions::DepthwiseConv2DOptions;
          options = fb::CreateDepthwiseConv2DOptions(
                        b, ToFilePadding(p.padding), p.stride_width, p.stride_height, p.depth_multiplier,
                        ToFileActivation(p.activation), p.dilation_width_factor, p.dilation_height_factor)
                        .Union();
          break;
        }
        case OptionsKind::kPool: {
          KilnPoolParams p;
          params(&p);
          options_type = fb::BuiltinOptions::Pool2DOptions;
          options = fb::CreatePool2DOptions(b, ToFilePadding(p.padding), p.stride_width, p.stride_height,
                                            p.filter_width, p.filter_height, ToFileActivation(p.activation))
                        .Union();
          break;
        }
        case OptionsKind::kFullyConnected: {
          KilnFullyConnectedParams p;
          params(&p);
          options_type = fb::BuiltinOptions::FullyConnectedOptions;
          options =
              fb::CreateFullyConnectedOptions(
                  b, ToFileActivation(p.activation),
                  static_cast<fb::FullyConnectedOptionsWeightsFormat>(static_cast<int8_t>(p.weights_format)),
                  p.keep_num_dims, p.asymmetric_quantize_inputs)
                  .Union();
          break;
        }
        case OptionsKind::kSoftmax: {
          KilnSoftmaxParams p;
          params(&p);
          options_type = fb::BuiltinOptions::SoftmaxOptions;
          options = fb::CreateSoftmaxOptions(b, p.beta).Union();
          break;
        }
        case OptionsKind::kConcatenation: {
          KilnConcatenationParams p;
          params(&p);
          options_type = fb::BuiltinOptions::ConcatenationOptions;
          options = fb::CreateConcatenationOptions(b, p.axis, ToFileActivation(p.activation)).Union();
          break;
        }
        case OptionsKind::kReshape: {
          KilnReshapeParams p;
          params(&p);
          int count = std::clamp(p.num_dimensions, 0, KILN_RESHAPE_MAX_DIMENSIONS);
          flatbuffers::Offset<flatbuffers::Vector<int32_t>> new_shape = 0;
          if (count > 0) new_shape = b.CreateVector(p.shape, static_cast<size_t>(count));
          options_type = fb::BuiltinOptions::ReshapeOptions;
          options = fb::CreateReshapeOptions(b, new_shape).Union();
          break;
        }
        case OptionsKind::kSqueeze: {
          KilnSqueezeParams p;
          params(&p);
          int count = std::clamp(p.num_squeeze_dims, 0, KILN_RESHAPE_MAX_DIMENSIONS);
          flatbuffers::Offset<flatbuffers::Vector<int32_t>> dims = 0;
          if (count > 0) dims = b.CreateVector(p.squeeze_dims, static_cast<size_t>(count));
          options_type = fb::BuiltinOptions::SqueezeOptions;
          options = fb::CreateSqueezeOptions(b, dims).Union();
          break;
        }
        case OptionsKind::kDepthToSpace: {
          KilnDepthToSpaceParams p;
          params(&p);
          options_type = fb::BuiltinOptions::DepthToSpaceOptions;
          options = fb::CreateDepthToSpaceOptions(b, p.block_size).Union();
          break;
        }
        case OptionsKind::kSpaceToDepth: {
          KilnSpaceToDepthParams p;
          params(&p);
          options_type = fb::BuiltinOptions::SpaceToDepthOptions;
          options = fb::CreateSpaceToDepthOptions(b, p.block_size).Union();
          break;
        }
        case OptionsKind::kMirrorPad: {
          KilnMirrorPadParams p;
          params(&p);
          options_type = fb::BuiltinOptions::MirrorPadOptions;
          // The mode's bytes as an int: tests write modes the format does not know, which the enum cannot hold.
          int32_t mode = 0;
          static_assert(sizeof(mode) == sizeof(p.mode), "KilnMirrorPadMode is an int-sized enum");
          std::memcpy(&mode, &p.mode, sizeof(mode));
          options = fb::CreateMirrorPadOptions(b, static_cast<fb::MirrorPadMode>(static_cast<int8_t>(mode))).Union();
          break;
        }
        case OptionsKind::kReducer: {
          KilnReducerParams p;
          params(&p);
          options_type = fb::BuiltinOptions::ReducerOptions;
          options = fb::CreateReducerOptions(b, p.keep_dims).Union();
          break;
        }
        case OptionsKind::kL2Norm: {
          KilnL2NormParams p;
          params(&p);
          options_type = fb::BuiltinOptions::L2NormOptions;
          options = fb::CreateL2NormOptions(b, ToFileActivation(p.activation)).Union();
          break;
        }
        case OptionsKind::kLocalResponseNorm: {
          KilnLocalResponseNormParams p;
          params(&p);
          options_type = fb::BuiltinOptions::LocalResponseNormalizationOptions;
          options = fb::CreateLocalResponseNormalizationOptions(b, p.radius, p.bias, p.alpha, p.beta).Union();
          break;
        }
        case OptionsKind::kCumsum: {
          KilnCumsumParams p;
          params(&p);
          options_type = fb::BuiltinOptions::CumsumOptions;
          options = fb::CreateCumsumOptions(b, p.exclusive, p.reverse).Union();
          break;
        }
        case OptionsKind::kBatchMatMul: {
          KilnBatchMatMulParams p;
          params(&p);
          options_type = fb::BuiltinOptions::BatchMatMulOptions;
          options = fb::CreateBatchMatMulOptions(b, p.adj_x, p.adj_y, p.asymmetric_quantize_inputs).Union();
          break;
        }
        case OptionsKind::kGelu: {
          KilnGeluParams p;
          params(&p);
          options_type = fb::BuiltinOptions::GeluOptions;
          options = fb::CreateGeluOptions(b, p.approximate).Union();
          break;
        }
        case OptionsKind::kReverseSequence: {
          KilnReverseSequenceParams p;
          params(&p);
          options_type = fb::BuiltinOptions::ReverseSequenceOptions;
          options = fb::CreateReverseSequenceOptions(b, p.seq_dim, p.batch_dim).Union();
          break;
        }
        case OptionsKind::kBucketize: {
          KilnBucketizeParams p;
          params(&p);
          std::vector<float> boundaries;
          if (p.boundaries != nullptr && p.num_boundaries > 0) {
            boundaries.assign(p.boundaries, p.boundaries + p.num_boundaries);
          }
          options_type = fb::BuiltinOptions::BucketizeOptions;
          options = fb::CreateBucketizeOptions(b, b.CreateVector(boundaries)).Union();
          break;
        }
        case OptionsKind::kFakeQuant: {
          KilnFakeQuantParams p;
          params(&p);
          options_type = fb::BuiltinOptions::FakeQuantOptions;
          options = fb::CreateFakeQuantOptions(b, p.min, p.max, p.num_bits, p.narrow_range).Union();
          break;
        }
        case OptionsKind::kRandom: {
          KilnRandomParams p;
          params(&p);
          options_type = fb::BuiltinOptions::RandomOptions;
          options = fb::CreateRandomOptions(b, p.seed, p.seed2).Union();
          break;
        }
        case OptionsKind::kEmbeddingLookupSparse: {
          KilnEmbeddingLookupSparseParams p;
          params(&p);
          options_type = fb::BuiltinOptions::EmbeddingLookupSparseOptions;
          // The combiner's bytes as an int: tests write combiners the format does not know.
          int32_t combiner = 0;
          static_assert(sizeof(combiner) == sizeof(p.combiner), "KilnCombinerType is an int-sized enum");
          std::memcpy(&combiner, &p.combiner, sizeof(combiner));
          options = fb::CreateEmbeddingLookupSparseOptions(b, static_cast<fb::CombinerType>(static_cast<int8_t>(combiner)))
                        .Union();
          break;
        }
        case OptionsKind::kLeakyRelu: {
          KilnLeakyReluParams p;
          params(&p);
          options_type = fb::BuiltinOptions::LeakyReluOptions;
          options = fb::CreateLeakyReluOptions(b, p.alpha).Union();
          break;
        }
        case OptionsKind::kResizeBilinear: {
          KilnResizeBilinearParams p;
          params(&p);
          options_type = fb::BuiltinOptions::ResizeBilinearOptions;
          options = fb::CreateResizeBilinearOptions(b, p.align_corners, p.half_pixel_centers).Union();
          break;
        }
        case OptionsKind::kResizeNearestNeighbor: {
          KilnResizeNearestNeighborParams p;
          params(&p);
          options_type = fb::BuiltinOptions::ResizeNearestNeighborOptions;
          options = fb::CreateResizeNearestNeighborOptions(b, p.align_corners, p.half_pixel_centers).Union();
          break;
        }
        case OptionsKind::kTransposeConv: {
          KilnTransposeConvParams p;
          params(&p);
          options_type = fb::BuiltinOptions::TransposeConvOptions;
          options = fb::CreateTransposeConvOptions(b, ToFilePadding(p.padding), p.stride_width, p.stride_height,
                                                   ToFileActivation(p.activation))
                        .Union();
          break;
        }
        case OptionsKind::kStridedSlice: {
          KilnStridedSliceParams p;
          params(&p);
          options_type = fb::BuiltinOptions::StridedSliceOptions;
          options = fb::CreateStridedSliceOptions(b, p.begin_mask, p.end_mask, p.ellipsis_mask, p.new_axis_mask,
                                                  p.shrink_axis_mask, p.offset)
                        .Union();
          break;
        }
        case OptionsKind::kGather: {
          KilnGatherParams p;
          params(&p);
          options_type = fb::BuiltinOptions::GatherOptions;
          options = fb::CreateGatherOptions(b, p.axis, p.batch_dims).Union();
          break;
        }
        case OptionsKind::kOneHot: {
          KilnOneHotParams p;
          params(&p);
          options_type = fb::BuiltinOptions::OneHotOptions;
          options = fb::CreateOneHotOptions(b, p.axis).Union();
          break;
        }
        case OptionsKind::kSplit: {
          KilnSplitParams p;
          params(&p);
          options_type = fb::BuiltinOptions::SplitOptions;
          options = fb::CreateSplitOptions(b, p.num_splits).Union();
          break;
        }
        case OptionsKind::kSplitV: {
          KilnSplitVParams p;
          params(&p);
          options_type = fb::BuiltinOptions::SplitVOptions;
          options = fb::CreateSplitVOptions(b, p.num_splits).Union();
          break;
        }
        case OptionsKind::kPack: {
          KilnPackParams p;
          params(&p);
          options_type = fb::BuiltinOptions::PackOptions;
          options = fb::CreatePackOptions(b, p.values_count, p.axis).Union();
          break;
        }
        case OptionsKind::kLstm: {
          KilnLSTMParams p;
          params(&p);
          options_type = fb::BuiltinOptions::LSTMOptions;
          options = fb::CreateLSTMOptions(b, ToFileActivation(p.activation), p.cell_clip, p.proj_clip,
                                          static_cast<fb::LSTMKernelType>(static_cast<int8_t>(p.kernel_type)),
                                          p.asymmetric_quantize_inputs)
                        .Union();
          break;
        }
        case OptionsKind::kSequenceLstm: {
          KilnUnidirectionalSequenceLSTMParams p;
          params(&p);
          options_type = fb::BuiltinOptions::UnidirectionalSequenceLSTMOptions;
          options = fb::CreateUnidirectionalSequenceLSTMOptions(b, ToFileActivation(p.activation), p.cell_clip,
                                                                p.proj_clip, p.time_major,
                                                                p.asymmetric_quantize_inputs,
                                                                p.diagonal_recurrent_tensors)
                        .Union();
          break;
        }
        case OptionsKind::kSvdf: {
          KilnSVDFParams p;
          params(&p);
          options_type = fb::BuiltinOptions::SVDFOptions;
          options =
              fb::CreateSVDFOptions(b, p.rank, ToFileActivation(p.activation), p.asymmetric_quantize_inputs).Union();
          break;
        }
        case OptionsKind::kRnn: {
          KilnRNNParams p;
          params(&p);
          options_type = fb::BuiltinOptions::RNNOptions;
          options = fb::CreateRNNOptions(b, ToFileActivation(p.activation), p.asymmetric_quantize_inputs).Union();
          break;
        }
        case OptionsKind::kBidiLstm: {
          KilnBidirectionalSequenceLSTMParams p;
          params(&p);
          options_type = fb::BuiltinOptions::BidirectionalSequenceLSTMOptions;
          options = fb::CreateBidirectionalSequenceLSTMOptions(b, ToFileActivation(p.activation), p.cell_clip,
                                                               p.proj_clip, p.merge_outputs, p.time_major,
                                                               p.asymmetric_quantize_inputs)
                        .Union();
          break;
        }
        case OptionsKind::kBidiRnn: {
          KilnBidirectionalSequenceRNNParams p;
          params(&p);
          options_type = fb::BuiltinOptions::BidirectionalSequenceRNNOptions;
          options = fb::CreateBidirectionalSequenceRNNOptions(b, p.time_major, ToFileActivation(p.activation),
                                                              p.merge_outputs, p.asymmetric_quantize_inputs)
                        .Union();
          break;
        }
        case OptionsKind::kSequenceRnn: {
          KilnSequenceRNNParams p;
          params(&p);
          options_type = fb::BuiltinOptions::SequenceRNNOptions;
          options = fb::CreateSequenceRNNOptions(b, p.time_major, ToFileActivation(p.activation),
                                                 p.asymmetric_quantize_inputs)
                        .Union();
          break;
        }
        case OptionsKind::kUnpack: {
          KilnUnpackParams p;
          params(&p);
          options_type = fb::BuiltinOptions::UnpackOptions;
          options = fb::CreateUnpackOptions(b, p.num, p.axis).Union();
          break;
        }
        case OptionsKind::kShape: {
          KilnShapeParams p;
          params(&p);
          fb::TensorType type;
          if (p.out_type != kKilnNoType && ToFileType(p.out_type, &type)) {
            options_type = fb::BuiltinOptions::ShapeOptions;
            options = fb::CreateShapeOptions(b, type).Union();
          }
          break;
        }
        case OptionsKind::kArgMax: {
          KilnArgMaxParams p;
          params(&p);
          fb::TensorType type;
          if (p.output_type != kKilnNoType && ToFileType(p.output_type, &type)) {
            options_type = fb::BuiltinOptions::ArgMaxOptions;
            options = fb::CreateArgMaxOptions(b, type).Union();
          }
          break;
        }
        case OptionsKind::kArgMin: {
          KilnArgMinParams p;
          params(&p);
          fb::TensorType type;
          if (p.output_type != kKilnNoType && ToFileType(p.output_type, &type)) {
            options_type = fb::BuiltinOptions::ArgMinOptions;
            options = fb::CreateArgMinOptions(b, type).Union();
          }
          break;
        }
        case OptionsKind::kIf: {
          KilnIfParams p;
          params(&p);
          options_type = fb::BuiltinOptions::IfOptions;
          options = fb::CreateIfOptions(b, p.then_subgraph_index, p.else_subgraph_index).Union();
          break;
        }
        case OptionsKind::kWhile: {
          KilnWhileParams p;
          params(&p);
          options_type = fb::BuiltinOptions::WhileOptions;
          options = fb::CreateWhileOptions(b, p.cond_subgraph_index, p.body_subgraph_index).Union();
          break;
        }
        case OptionsKind::kCallOnce: {
          KilnCallOnceParams p;
          params(&p);
          options_type = fb::BuiltinOptions::CallOnceOptions;
          options = fb::CreateCallOnceOptions(b, p.init_subgraph_index).Union();
          break;
        }
        case OptionsKind::kVarHandle: {
          auto container = b.CreateString(op.container);
          auto shared_name = b.CreateString(op.shared_name);
          options_type = fb::BuiltinOptions::VarHandleOptions;
          options = fb::CreateVarHandleOptions(b, container, shared_name).Union();
          break;
        }
      }
      if (op.has_new_shape_override) {
        options_type = fb::BuiltinOptions::ReshapeOptions;
        options = fb::CreateReshapeOptions(b, b.CreateVector(op.new_shape_override)).Union();
      }

      flatbuffers::Offset<flatbuffers::Vector<uint8_t>> custom_options = 0;
      uint64_t large_offset = 0;
      uint64_t large_size = 0;
      if (!op.custom_options.empty()) {
        if (external_data_) {
          large_offset = place_external(op.custom_options);
          large_size = op.custom_options.size();
        } else {
          custom_options = b.CreateVector(op.custom_options);
        }
      }
      auto inputs = b.CreateVector(op.inputs);
      auto outputs = b.CreateVector(op.outputs);
      operators.push_back(fb::CreateOperator(b, opcode_index, inputs, outputs, options_type, options,
                                             custom_options, fb::CustomOptionsFormat::FLEXBUFFERS, 0, 0,
                                             large_offset, large_size));
    }

    auto tensors_vector = b.CreateVector(tensors);
    auto inputs = b.CreateVector(s.inputs);
    auto outputs = b.CreateVector(s.outputs);
    auto operators_vector = b.CreateVector(operators);
    auto name = b.CreateString(s.name);
    subgraphs.push_back(fb::CreateSubGraph(b, tensors_vector, inputs, outputs, operators_vector, name));
  }

  std::vector<flatbuffers::Offset<fb::OperatorCode>> code_tables;
  for (const auto& [code, custom_name, version] : codes) {
    auto custom = custom_name.empty() ? 0 : b.CreateString(custom_name);
    // The byte field saturates at 127 (PLACEHOLDER_FOR_GREATER_OP_CODES), as the converter writes it.
    int8_t deprecated = static_cast<int8_t>(std::min(code, 127));
    code_tables.push_back(
        fb::CreateOperatorCode(b, deprecated, custom, version, static_cast<fb::BuiltinOperator>(code)));
  }
  auto codes_vector = b.CreateVector(code_tables);
  auto subgraphs_vector = b.CreateVector(subgraphs);
  auto description = b.CreateString(description_);
  auto buffers_vector = b.CreateVector(buffers);
  std::vector<flatbuffers::Offset<fb::SignatureDef>> signature_defs;
  for (const Signature& sig : signatures_) {
    auto maps = [&b](const std::vector<std::pair<std::string, int>>& list) {
      std::vector<flatbuffers::Offset<fb::TensorMap>> out;
      for (const auto& [name, tensor] : list) {
        out.push_back(fb::CreateTensorMap(b, b.CreateString(name), static_cast<uint32_t>(tensor)));
      }
      return b.CreateVector(out);
    };
    auto inputs = maps(sig.inputs);
    auto outputs = maps(sig.outputs);
    signature_defs.push_back(fb::CreateSignatureDef(b, inputs, outputs, b.CreateString(sig.key),
                                                    static_cast<uint32_t>(sig.subgraph)));
  }
  auto signatures_vector = signature_defs.empty() ? 0 : b.CreateVector(signature_defs);
  auto model = fb::CreateModel(b, version_, codes_vector, subgraphs_vector, description, buffers_vector, 0, 0,
                               signatures_vector);
  std::string identifier = identifier_;
  identifier.resize(4, ' ');
  b.Finish(model, identifier.c_str());
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

std::vector<uint8_t> ModelWriter::Finish() {
  if (!error_.empty()) return {};
  bool any_custom_options = false;
  bool any_data = false;
  for (const Subgraph& s : subgraphs_) {
    for (const Operator& op : s.operators) any_custom_options |= !op.custom_options.empty();
    for (const Tensor& t : s.tensors) any_data |= t.has_data;
  }
  std::vector<uint8_t> external;
  if (!external_data_ || (!any_custom_options && !any_data)) return Build(0, &external);

  // External offsets count from the start of the file, so they depend on the flatbuffer's size, which
  // does not depend on their values (fixed-width fields, always present since offsets are > 1). Build once
  // to learn the size, then again with the real offsets.
  std::vector<uint8_t> first = Build(kExternalAlignment, &external);
  std::vector<uint8_t> file;
  for (int attempt = 0; attempt < 3; ++attempt) {
    uint64_t data_start = AlignUp(first.size(), kExternalAlignment);
    external.clear();
    file = Build(data_start, &external);
    if (file.size() == first.size()) {
      file.resize(data_start, 0);
      file.insert(file.end(), external.begin(), external.end());
      return file;
    }
    first = std::move(file);
  }
  Error("Finish: the flatbuffer's size did not settle while placing external data");
  return {};
}

}  // namespace kiln
