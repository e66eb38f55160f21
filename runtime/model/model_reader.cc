// Reads a .tflite flatbuffer into the validated ModelDesc of model.h.
//
// Order of work: the FlatBuffers verifier first (so that nothing below can read outside the bytes), then
// the structural checks the verifier cannot know about (indices, sizes, execution order), then the
// builtin options. Every error names where it is: subgraph, tensor or operator index, and a name.
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/builtin_ops.h"
#include "runtime/model/limits.h"
#include "runtime/model/model.h"
#include "runtime/model/sparsity.h"
#include "tflite_generated.h"

namespace kiln {
namespace {

namespace fb = ::kiln::tflite;

// The schema version of the "TFL3" layout (buffers at the model level).
constexpr uint32_t kSchemaVersion = 3;
std::atomic<uint64_t> max_tensor_bytes{kDefaultMaxTensorBytes};  // MaxTensorBytes()

std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  char stack_buffer[512];
  va_list copy;
  va_copy(copy, args);
  int needed = std::vsnprintf(stack_buffer, sizeof(stack_buffer), format, copy);
  va_end(copy);
  std::string result;
  if (needed < 0) {
    result = format;
  } else if (static_cast<size_t>(needed) < sizeof(stack_buffer)) {
    result.assign(stack_buffer, static_cast<size_t>(needed));
  } else {
    result.resize(static_cast<size_t>(needed) + 1);
    std::vsnprintf(&result[0], result.size(), format, args);
    result.resize(static_cast<size_t>(needed));
  }
  va_end(args);
  return result;
}

// Names and file content may hold anything; keep messages printable and short.
std::string Printable(const char* text, size_t length, size_t max_length = 64) {
  std::string out;
  for (size_t i = 0; i < length && i < max_length; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out.push_back(static_cast<char>(c));
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    }
  }
  if (length > max_length) out += "...";
  return out;
}

std::string ShapeString(const std::vector<int>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    if (i == 16 && shape.size() > 17) {
      out += "...";
      break;
    }
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

bool MapTensorType(fb::TensorType type, KilnType* out) {
  switch (type) {
    case fb::TensorType::FLOAT32:
      *out = kKilnFloat32;
      return true;
    case fb::TensorType::FLOAT16:
      *out = kKilnFloat16;
      return true;
    case fb::TensorType::INT32:
      *out = kKilnInt32;
      return true;
    case fb::TensorType::UINT8:
      *out = kKilnUInt8;
      return true;
    case fb::TensorType::INT64:
      *out = kKilnInt64;
      return true;
    case fb::TensorType::STRING:
      *out = kKilnString;
      return true;
    case fb::TensorType::BOOL:
      *out = kKilnBool;
      return true;
    case fb::TensorType::INT16:
      *out = kKilnInt16;
      return true;
    case fb::TensorType::COMPLEX64:
      *out = kKilnComplex64;
      return true;
    case fb::TensorType::INT8:
      *out = kKilnInt8;
      return true;
    case fb::TensorType::FLOAT64:
      *out = kKilnFloat64;
      return true;
    case fb::TensorType::COMPLEX128:
      *out = kKilnComplex128;
      return true;
    case fb::TensorType::UINT64:
      *out = kKilnUInt64;
      return true;
    case fb::TensorType::RESOURCE:
      *out = kKilnResource;
      return true;
    case fb::TensorType::VARIANT:
      *out = kKilnVariant;
      return true;
    case fb::TensorType::UINT32:
      *out = kKilnUInt32;
      return true;
    case fb::TensorType::UINT16:
      *out = kKilnUInt16;
      return true;
    case fb::TensorType::INT4:
      *out = kKilnInt4;
      return true;
  }
  return false;
}

// A span of bytes inside the model.
struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size, ModelDesc* out) : data_(data), size_(size), out_(out) {}

  bool Read();
  const std::string& error() const { return error_; }

 private:
  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  bool CheckHeaderAndVerify();
  bool ReadOperatorCodes();
  bool ReadBuffers();
  bool ReadSubgraph(int index, const fb::SubGraph* subgraph, SubgraphDesc* desc);
  bool ReadSignatures();
  bool ReadTensor(const std::string& where, const fb::Tensor* tensor, TensorDesc* desc);
  bool ReadQuantization(const std::string& where, const fb::QuantizationParameters* quantization,
                        TensorDesc* desc);
  // A sparse constant: checks its SparsityParameters against the shape and the values in `buffer`, and gives the
  // tensor its dense form (sparsity.h).
  bool ReadSparseTensor(const std::string& where, const fb::SparsityParameters* sparsity, uint32_t buffer,
                        size_t element_size, TensorDesc* desc);
  bool ReadOperator(const std::string& where, const fb::Operator* op, int tensor_count, OperatorDesc* desc);
  // Reads the tensor index list `kind` ("input", "output", ...) of `where`; `allow_absent` permits -1.
  bool ReadIndexList(const std::string& where, const char* kind, const flatbuffers::Vector<int32_t>* indices,
                     int tensor_count, bool allow_absent, std::vector<int>* out);
  bool CheckExecutionOrder(int subgraph_index, const SubgraphDesc& desc);
  void MarkEmptyConstants(SubgraphDesc* desc);
  bool ParseBuiltinOptions(const std::string& where, const fb::Operator* op, OperatorDesc* desc);
  // Locates `size` bytes at file offset `offset` (the >2 GB layout), or fails naming `what`.
  bool ExternalBytes(const std::string& what, uint64_t offset, uint64_t size, Bytes* out);

  std::string TensorLabel(int subgraph, int tensor) const;
  std::string OpLabel(int subgraph, int op) const;

  const uint8_t* data_;
  size_t size_;
  ModelDesc* out_;
  const fb::Model* model_ = nullptr;
  std::string error_;

  struct OpCode {
    int builtin_code = 0;
    std::string custom_name;
    int version = 1;
  };
  std::vector<OpCode> op_codes_;
  std::vector<Bytes> buffers_;
};

std::string Reader::TensorLabel(int subgraph, int tensor) const {
  const TensorDesc& t = out_->subgraphs[static_cast<size_t>(subgraph)].tensors[static_cast<size_t>(tensor)];
  return Format("tensor %d '%s'", tensor, Printable(t.name.data(), t.name.size()).c_str());
}

std::string Reader::OpLabel(int subgraph, int op) const {
  const OperatorDesc& o = out_->subgraphs[static_cast<size_t>(subgraph)].operators[static_cast<size_t>(op)];
  if (o.builtin_code == kKilnBuiltinCustom) {
    return Format("operator %d (CUSTOM:%s)", op,
                  Printable(o.custom_name.data(), o.custom_name.size()).c_str());
  }
  return Format("operator %d (%s)", op, BuiltinOperatorName(o.builtin_code).c_str());
}

bool Reader::CheckHeaderAndVerify() {
  // A flatbuffer starts with a 4-byte root offset followed by the 4-byte file identifier.
  if (size_ < 8) {
    return Fail(Format(
        "model is truncated: %zu bytes is too small for a .tflite file (the header alone is 8)", size_));
  }
  if (data_ == nullptr)
    return Fail(Format("not a .tflite model: no data (null pointer with size %zu)", size_));
  if (reinterpret_cast<uintptr_t>(data_) % 4 != 0) {
    return Fail(
        "model data must be at least 4-byte aligned in memory (FlatBuffers reads 32-bit fields in place)");
  }
  if (!flatbuffers::BufferHasIdentifier(data_, fb::ModelIdentifier())) {
    return Fail(Format("not a .tflite model: file identifier is '%s', expected 'TFL3'",
                       Printable(reinterpret_cast<const char*>(data_) + 4, 4).c_str()));
  }
  // Models over 2 GB keep their flatbuffer in front and the large buffers after it; the verifier can only
  // look at the first part (FlatBuffers offsets are 32-bit), and ExternalBytes checks the rest.
  size_t verify_size = std::min<size_t>(size_, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  flatbuffers::Verifier::Options options;
  options.max_depth = 64;
  options.max_tables = 10000000;
  options.check_alignment = true;
  flatbuffers::Verifier verifier(data_, verify_size, options);
  if (!fb::VerifyModelBuffer(verifier)) {
    return Fail(Format("model is truncated or corrupt: FlatBuffers verification failed (%zu bytes)", size_));
  }
  model_ = fb::GetModel(data_);
  return true;
}

bool Reader::ExternalBytes(const std::string& what, uint64_t offset, uint64_t size, Bytes* out) {
  if (offset > size_ || size > size_ - offset) {
    return Fail(Format("%s: external data at offset %" PRIu64 " with size %" PRIu64
                       " lies outside the model (%zu bytes)",
                       what.c_str(), offset, size, size_));
  }
  out->data = data_ + offset;
  out->size = static_cast<size_t>(size);
  return true;
}

bool Reader::ReadOperatorCodes() {
  const auto* codes = model_->operator_codes();
  if (codes == nullptr) return true;
  op_codes_.resize(codes->size());
  for (flatbuffers::uoffset_t i = 0; i < codes->size(); ++i) {
    const fb::OperatorCode* code = codes->Get(i);
    OpCode& desc = op_codes_[i];
    // Older writers fill only the byte-sized field, newer ones both (the byte saturating at 127); the
    // larger of the two is the real code.
    desc.builtin_code =
        std::max<int>(code->deprecated_builtin_code(), static_cast<int>(code->builtin_code()));
    if (desc.builtin_code < 0) {
      return Fail(Format("operator code %u: builtin code %d is negative", i, desc.builtin_code));
    }
    desc.version = code->version();
    if (code->custom_code() != nullptr) desc.custom_name = code->custom_code()->str();
    if (desc.builtin_code == kKilnBuiltinCustom && desc.custom_name.empty()) {
      return Fail(Format("operator code %u: a CUSTOM operator code without a custom_code name", i));
    }
  }
  return true;
}

bool Reader::ReadBuffers() {
  const auto* buffers = model_->buffers();
  if (buffers == nullptr) return true;
  buffers_.resize(buffers->size());
  for (flatbuffers::uoffset_t i = 0; i < buffers->size(); ++i) {
    const fb::Buffer* buffer = buffers->Get(i);
    // The format defines offset as meaningful only above 1 (0 and 1 both mean "inside the flatbuffer").
    if (buffer->offset() > 1) {
      if (!ExternalBytes(Format("buffer %u", i), buffer->offset(), buffer->size(), &buffers_[i]))
        return false;
    } else if (buffer->data() != nullptr) {
      buffers_[i].data = buffer->data()->data();
      buffers_[i].size = buffer->data()->size();
    }
  }
  return true;
}

bool Reader::Read() {
  if (!CheckHeaderAndVerify()) return false;
  // Version 3 only, as LiteRT ("Model provided is schema version N not equal to supported version 3"): the
  // identifier fixes the layout, but what an older version's fields meant differs (the converter's old test
  // data, e.g. a TRANSPOSE whose perm is a scalar), and a model LiteRT refuses should not run differently here.
  if (model_->version() != kSchemaVersion) {
    return Fail(Format("unsupported .tflite schema version %u (Kiln reads version %u, the only one LiteRT loads)",
                       model_->version(), kSchemaVersion));
  }
  out_->version = model_->version();
  if (model_->description() != nullptr) out_->description = model_->description()->str();
  if (!ReadOperatorCodes() || !ReadBuffers()) return false;

  const auto* subgraphs = model_->subgraphs();
  if (subgraphs == nullptr || subgraphs->size() == 0) return Fail("model has no subgraphs");
  out_->subgraphs.resize(subgraphs->size());
  for (flatbuffers::uoffset_t i = 0; i < subgraphs->size(); ++i) {
    if (!ReadSubgraph(static_cast<int>(i), subgraphs->Get(i), &out_->subgraphs[i])) return false;
  }
  return ReadSignatures();
}

// The SignatureDefs: each names a subgraph that exists, and maps names to tensors that subgraph has.
bool Reader::ReadSignatures() {
  const auto* defs = model_->signature_defs();
  if (defs == nullptr) return true;
  out_->signatures.resize(defs->size());
  for (flatbuffers::uoffset_t i = 0; i < defs->size(); ++i) {
    const fb::SignatureDef* def = defs->Get(i);
    SignatureDesc& sig = out_->signatures[i];
    sig.key = def->signature_key() != nullptr ? def->signature_key()->str() : "";
    const std::string where = Format("signature %u ('%s')", i, Printable(sig.key.data(), sig.key.size()).c_str());
    if (def->subgraph_index() >= out_->subgraphs.size()) {
      return Fail(Format("%s: subgraph %u does not exist (the model has %zu)", where.c_str(), def->subgraph_index(),
                         out_->subgraphs.size()));
    }
    sig.subgraph_index = static_cast<int>(def->subgraph_index());
    const size_t tensor_count = out_->subgraphs[sig.subgraph_index].tensors.size();
    for (int output = 0; output < 2; ++output) {
      const auto* maps = output ? def->outputs() : def->inputs();
      std::vector<SignatureTensor>* list = output ? &sig.outputs : &sig.inputs;
      if (maps == nullptr) continue;
      for (flatbuffers::uoffset_t k = 0; k < maps->size(); ++k) {
        const fb::TensorMap* map = maps->Get(k);
        SignatureTensor t;
        t.name = map->name() != nullptr ? map->name()->str() : "";
        if (map->tensor_index() >= tensor_count) {
          return Fail(Format("%s: %s %u ('%s') refers to tensor %u, but subgraph %d has %zu tensors", where.c_str(),
                             output ? "output" : "input", k, Printable(t.name.data(), t.name.size()).c_str(), map->tensor_index(),
                             sig.subgraph_index, tensor_count));
        }
        t.tensor_index = static_cast<int>(map->tensor_index());
        list->push_back(std::move(t));
      }
    }
  }
  return true;
}

// Reads an index list (tensor references) into `out`, checking the range. `allow_absent` permits -1.
bool ReadIndices(const flatbuffers::Vector<int32_t>* indices, int tensor_count, bool allow_absent,
                 std::vector<int>* out, int* bad_position) {
  out->clear();
  if (indices == nullptr) return true;
  out->reserve(indices->size());
  for (flatbuffers::uoffset_t i = 0; i < indices->size(); ++i) {
    int32_t index = indices->Get(i);
    if ((index == -1 && !allow_absent) || index < -1 || index >= tensor_count) {
      *bad_position = static_cast<int>(i);
      return false;
    }
    out->push_back(index);
  }
  return true;
}

bool Reader::ReadIndexList(const std::string& where, const char* kind,
                           const flatbuffers::Vector<int32_t>* indices, int tensor_count, bool allow_absent,
                           std::vector<int>* out) {
  int bad = 0;
  if (ReadIndices(indices, tensor_count, allow_absent, out, &bad)) return true;
  return Fail(Format("%s: %s %d refers to tensor %d, but the subgraph has %d tensors", where.c_str(), kind,
                     bad, indices->Get(static_cast<flatbuffers::uoffset_t>(bad)), tensor_count));
}

bool Reader::ReadSubgraph(int index, const fb::SubGraph* subgraph, SubgraphDesc* desc) {
  if (subgraph->name() != nullptr) desc->name = subgraph->name()->str();
  std::string where = Format("subgraph %d", index);

  const auto* tensors = subgraph->tensors();
  int tensor_count = tensors ? static_cast<int>(tensors->size()) : 0;
  desc->tensors.resize(static_cast<size_t>(tensor_count));
  for (int t = 0; t < tensor_count; ++t) {
    const fb::Tensor* tensor = tensors->Get(static_cast<flatbuffers::uoffset_t>(t));
    std::string name = tensor->name() ? tensor->name()->str() : std::string();
    desc->tensors[static_cast<size_t>(t)].name = name;
    std::string label =
        Format("%s, tensor %d '%s'", where.c_str(), t, Printable(name.data(), name.size()).c_str());
    if (!ReadTensor(label, tensor, &desc->tensors[static_cast<size_t>(t)])) return false;
  }

  if (!ReadIndexList(where, "input", subgraph->inputs(), tensor_count, false, &desc->inputs) ||
      !ReadIndexList(where, "output", subgraph->outputs(), tensor_count, false, &desc->outputs)) {
    return false;
  }

  const auto* operators = subgraph->operators();
  int op_count = operators ? static_cast<int>(operators->size()) : 0;
  desc->operators.resize(static_cast<size_t>(op_count));
  for (int o = 0; o < op_count; ++o) {
    const fb::Operator* op = operators->Get(static_cast<flatbuffers::uoffset_t>(o));
    if (!ReadOperator(Format("%s, operator %d", where.c_str(), o), op, tensor_count,
                      &desc->operators[static_cast<size_t>(o)])) {
      return false;
    }
  }
  MarkEmptyConstants(desc);
  return CheckExecutionOrder(index, *desc);
}

void Reader::MarkEmptyConstants(SubgraphDesc* desc) {
  // A tensor of 0 elements that no operator writes and that is not an input holds nothing to compute: LiteRT
  // takes it whatever its buffer says (none, or 0 bytes), as an arena tensor nobody reads from. Kiln makes it an
  // empty constant, so that the execution-order rule below accepts it and ops read 0 elements of it.
  static const uint8_t kEmpty[8] = {};
  std::vector<bool> written(desc->tensors.size(), false);
  for (const OperatorDesc& op : desc->operators) {
    for (int t : op.outputs) written[static_cast<size_t>(t)] = true;
  }
  for (int t : desc->inputs) written[static_cast<size_t>(t)] = true;
  for (size_t t = 0; t < desc->tensors.size(); ++t) {
    TensorDesc& tensor = desc->tensors[t];
    if (written[t] || tensor.data != nullptr || tensor.is_variable || tensor.type == kKilnString ||
        tensor.type == kKilnResource || tensor.type == kKilnVariant) {
      continue;
    }
    bool empty = false;
    for (int dim : tensor.shape) empty = empty || dim == 0;
    if (!empty) continue;
    tensor.data = kEmpty;
    tensor.data_size = 0;
  }
}

bool Reader::ReadTensor(const std::string& where, const fb::Tensor* tensor, TensorDesc* desc) {
  if (!MapTensorType(tensor->type(), &desc->type)) {
    return Fail(Format("%s: unknown tensor type %d", where.c_str(), static_cast<int>(tensor->type())));
  }
  if (tensor->shape() != nullptr) desc->shape.assign(tensor->shape()->begin(), tensor->shape()->end());
  // Element count and byte size in 64 bits with an overflow check per step; the limit is far below 2^64.
  const uint64_t limit = MaxTensorBytes();
  uint64_t elements = 1;
  for (size_t d = 0; d < desc->shape.size(); ++d) {
    int dim = desc->shape[d];
    if (dim < 0) {
      return Fail(Format("%s: negative dimension %d at index %zu of shape %s", where.c_str(), dim, d,
                         ShapeString(desc->shape).c_str()));
    }
    if (dim != 0 && elements > limit / static_cast<uint64_t>(dim)) {
      return Fail(Format("%s: shape %s is too large (element count overflows the limit of %" PRIu64 ")",
                         where.c_str(), ShapeString(desc->shape).c_str(), limit));
    }
    elements *= static_cast<uint64_t>(dim);
  }
  uint64_t type_size = TypeSize(desc->type);
  if (type_size != 0 && elements > limit / type_size) {
    return Fail(Format("%s: %s%s needs more than %" PRIu64 " bytes", where.c_str(), TypeName(desc->type),
                       ShapeString(desc->shape).c_str(), limit));
  }
  uint64_t byte_size = elements * type_size;

  if (tensor->shape_signature() != nullptr) {
    desc->shape_signature.assign(tensor->shape_signature()->begin(), tensor->shape_signature()->end());
    if (desc->shape_signature.size() != desc->shape.size()) {
      return Fail(Format("%s: shape_signature %s has %zu dimensions but shape %s has %zu", where.c_str(),
                         ShapeString(desc->shape_signature).c_str(), desc->shape_signature.size(),
                         ShapeString(desc->shape).c_str(), desc->shape.size()));
    }
    for (size_t d = 0; d < desc->shape_signature.size(); ++d) {
      int dim = desc->shape_signature[d];
      if (dim < -1 || (dim != -1 && dim != desc->shape[d])) {
        return Fail(Format("%s: shape_signature %s disagrees with shape %s at index %zu", where.c_str(),
                           ShapeString(desc->shape_signature).c_str(), ShapeString(desc->shape).c_str(), d));
      }
    }
  }
  desc->is_variable = tensor->is_variable();

  uint32_t buffer = tensor->buffer();
  if (buffer != 0 || !buffers_.empty()) {
    if (buffer >= buffers_.size()) {
      return Fail(Format("%s: buffer index %u is out of range (the model has %zu buffers)", where.c_str(),
                         buffer, buffers_.size()));
    }
  }
  if (tensor->sparsity() != nullptr) {
    if (!ReadSparseTensor(where, tensor->sparsity(), buffer, static_cast<size_t>(type_size), desc)) return false;
    return ReadQuantization(where, tensor->quantization(), desc);
  }
  if (buffer < buffers_.size() && buffers_[buffer].size > 0) {
    const Bytes& bytes = buffers_[buffer];
    desc->data = bytes.data;
    desc->data_size = bytes.size;
    if (type_size != 0) {
      if (bytes.size != byte_size) {
        return Fail(Format("%s (%s%s): constant data in buffer %u is %zu bytes, but the shape needs %" PRIu64,
                           where.c_str(), TypeName(desc->type), ShapeString(desc->shape).c_str(), buffer,
                           bytes.size, byte_size));
      }
    } else if (desc->type == kKilnInt4) {
      // Constant int4 data is packed two elements per byte.
      uint64_t packed = (elements + 1) / 2;
      if (bytes.size != packed) {
        return Fail(
            Format("%s (int4%s): constant data in buffer %u is %zu bytes, but the shape needs %" PRIu64
                   " (two elements per byte)",
                   where.c_str(), ShapeString(desc->shape).c_str(), buffer, bytes.size, packed));
      }
    } else if (desc->type == kKilnString) {
      // Layout: int32 count, count + 1 int32 offsets from the start of the data, then the bytes.
      const uint8_t* p = bytes.data;
      auto read_i32 = [p](size_t i) {
        int32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        return v;
      };
      bool ok = bytes.size >= 4;
      int32_t count = ok ? read_i32(0) : -1;
      ok = ok && count >= 0 && static_cast<uint64_t>(count) == elements &&
           (static_cast<uint64_t>(count) + 2) * 4 <= bytes.size;
      if (ok) {
        int64_t previous = static_cast<int64_t>(count + 2) * 4;
        for (int32_t i = 0; ok && i <= count; ++i) {
          int64_t offset = read_i32(static_cast<size_t>(i) + 1);
          ok = offset >= previous && static_cast<uint64_t>(offset) <= bytes.size;
          if (i == 0) ok = ok && offset == previous;
          previous = offset;
        }
        ok = ok && static_cast<uint64_t>(previous) == bytes.size;
      }
      if (!ok) {
        return Fail(
            Format("%s: constant string data in buffer %u (%zu bytes) is malformed or does not hold %" PRIu64
                   " strings",
                   where.c_str(), buffer, bytes.size, elements));
      }
    }
  }
  return ReadQuantization(where, tensor->quantization(), desc);
}

namespace {

// A SparseIndexVector's values, or false where it is absent or of no known type.
bool ReadSparseIndices(fb::SparseIndexVector type, const void* vector, std::vector<int64_t>* out) {
  out->clear();
  if (vector == nullptr) return false;
  switch (type) {
    case fb::SparseIndexVector::Int32Vector: {
      const auto* values = static_cast<const fb::Int32Vector*>(vector)->values();
      if (values == nullptr) return false;
      out->assign(values->begin(), values->end());
      return true;
    }
    case fb::SparseIndexVector::Uint16Vector: {
      const auto* values = static_cast<const fb::Uint16Vector*>(vector)->values();
      if (values == nullptr) return false;
      out->assign(values->begin(), values->end());
      return true;
    }
    case fb::SparseIndexVector::Uint8Vector: {
      const auto* values = static_cast<const fb::Uint8Vector*>(vector)->values();
      if (values == nullptr) return false;
      out->assign(values->begin(), values->end());
      return true;
    }
    default: return false;
  }
}

}  // namespace

bool Reader::ReadSparseTensor(const std::string& where, const fb::SparsityParameters* sparsity, uint32_t buffer,
                              size_t element_size, TensorDesc* desc) {
  if (buffer >= buffers_.size() || buffers_[buffer].size == 0) {
    return Fail(Format("%s: a sparse tensor must be a constant, but it has no data", where.c_str()));
  }
  if (element_size == 0) {
    return Fail(Format("%s: sparse %s tensors are not supported (a fixed-size element type is needed)", where.c_str(),
                       TypeName(desc->type)));
  }
  SparsityDesc s;
  if (sparsity->traversal_order() != nullptr) {
    s.traversal_order.assign(sparsity->traversal_order()->begin(), sparsity->traversal_order()->end());
  }
  if (sparsity->block_map() != nullptr) {
    s.block_map.assign(sparsity->block_map()->begin(), sparsity->block_map()->end());
  }
  if (sparsity->dim_metadata() != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < sparsity->dim_metadata()->size(); ++i) {
      const fb::DimensionMetadata* m = sparsity->dim_metadata()->Get(i);
      SparseDimensionDesc d;
      if (m == nullptr) return Fail(Format("%s: sparsity dim_metadata %u is missing", where.c_str(), i));
      if (m->format() == fb::DimensionType::SPARSE_CSR) {
        d.csr = true;
        if (!ReadSparseIndices(m->array_segments_type(), m->array_segments(), &d.segments) ||
            !ReadSparseIndices(m->array_indices_type(), m->array_indices(), &d.indices)) {
          return Fail(
              Format("%s: sparsity dim_metadata %u is SPARSE_CSR but lacks array_segments or "
                     "array_indices (int32, uint16 or uint8 vectors)",
                     where.c_str(), i));
        }
      } else if (m->format() == fb::DimensionType::DENSE) {
        d.dense_size = m->dense_size();
      } else {
        return Fail(Format("%s: sparsity dim_metadata %u has unknown format %d", where.c_str(), i,
                           static_cast<int>(m->format())));
      }
      s.dims.push_back(std::move(d));
    }
  }
  const Bytes& bytes = buffers_[buffer];
  auto dense = std::make_shared<std::vector<uint8_t>>();
  std::string error;
  if (!Densify(desc->shape, s, bytes.data, bytes.size, element_size, dense.get(), &error)) {
    return Fail(Format("%s (sparse %s%s): %s", where.c_str(), TypeName(desc->type), ShapeString(desc->shape).c_str(),
                       error.c_str()));
  }
  desc->dense_data = std::move(dense);
  desc->data = desc->dense_data->empty() ? nullptr : desc->dense_data->data();
  desc->data_size = desc->dense_data->size();
  return true;
}

struct ZeroPointRange {
  int64_t min;
  int64_t max;
};

// The values a zero point can take: those of the tensor's own type, since q = zero_point must stand for real
// 0. Wider types (int32 and int64 biases) and float tensors (whose parameters the kernels do not read) are
// held only to the 32 bits every zero point must fit in. LiteRT's int16 kernels also want a zero point of 0,
// but it checks that per kernel at prepare, not at load, so the reader holds int16 to its range only.
ZeroPointRange ZeroPointRangeOf(KilnType type) {
  switch (type) {
    case kKilnInt8:
      return {-128, 127};
    case kKilnUInt8:
      return {0, 255};
    case kKilnInt16:
      return {-32768, 32767};
    case kKilnUInt16:
      return {0, 65535};
    case kKilnInt4:
      return {-8, 7};
    default:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  }
}

bool Reader::ReadQuantization(const std::string& where, const fb::QuantizationParameters* quantization,
                              TensorDesc* desc) {
  if (quantization == nullptr) return true;
  if (quantization->details_type() != fb::QuantizationDetails::NONE) {
    return Fail(Format("%s: custom quantization (QuantizationDetails type %d) is not supported by Kiln",
                       where.c_str(), static_cast<int>(quantization->details_type())));
  }
  const auto* scale = quantization->scale();
  const auto* zero_point = quantization->zero_point();
  size_t scale_count = scale ? scale->size() : 0;
  size_t zero_point_count = zero_point ? zero_point->size() : 0;
  // Converters write min/max alone for float tensors they recorded ranges for: not quantized.
  if (scale_count == 0 && zero_point_count == 0) return true;
  if (scale_count != zero_point_count) {
    return Fail(Format("%s: quantization has %zu scales but %zu zero points (they must match)", where.c_str(),
                       scale_count, zero_point_count));
  }
  int dimension = quantization->quantized_dimension();
  if (dimension < 0 || (scale_count > 1 && static_cast<size_t>(dimension) >= desc->shape.size())) {
    return Fail(Format("%s: quantized_dimension %d is out of range for shape %s", where.c_str(), dimension,
                       ShapeString(desc->shape).c_str()));
  }
  if (scale_count > 1 && static_cast<size_t>(desc->shape[static_cast<size_t>(dimension)]) != scale_count) {
    return Fail(Format("%s: %zu per-channel scales, but dimension %d of shape %s has size %d", where.c_str(),
                       scale_count, dimension, ShapeString(desc->shape).c_str(),
                       desc->shape[static_cast<size_t>(dimension)]));
  }
  const ZeroPointRange range = ZeroPointRangeOf(desc->type);
  QuantizationDesc& q = desc->quantization;
  q.quantized_dimension = dimension;
  q.scale.reserve(scale_count);
  q.zero_point.reserve(scale_count);
  for (flatbuffers::uoffset_t i = 0; i < scale_count; ++i) {
    float s = scale->Get(i);
    // The verifier aligns a vector's length, not its 8-byte elements: a crafted file can place them anywhere
    // (only 4-byte aligned), so they are copied out rather than loaded in place.
    int64_t z;
    std::memcpy(&z, zero_point->Data() + static_cast<size_t>(i) * sizeof(int64_t), sizeof z);
    z = static_cast<int64_t>(flatbuffers::EndianScalar(static_cast<uint64_t>(z)));
    // real = scale * (q - zero_point): a scale that is not a positive finite number maps every q to 0, NaN or
    // infinity, and the int8 kernels' fixed-point multipliers cannot be derived from it.
    if (!std::isfinite(s) || !(s > 0.0f)) {
      return Fail(Format("%s: quantization scale %u is %g; a scale must be positive and finite",
                         where.c_str(), i, static_cast<double>(s)));
    }
    if (z < std::numeric_limits<int32_t>::min() || z > std::numeric_limits<int32_t>::max()) {
      return Fail(Format("%s: quantization zero point %u (%" PRId64 ") does not fit in 32 bits",
                         where.c_str(), i, z));
    }
    if (z < range.min || z > range.max) {
      return Fail(Format("%s: quantization zero point %u is %" PRId64 ", outside the %s range [%" PRId64
                         ", %" PRId64 "]",
                         where.c_str(), i, z, TypeName(desc->type), range.min, range.max));
    }
    q.scale.push_back(s);
    q.zero_point.push_back(static_cast<int32_t>(z));
  }
  return true;
}

bool Reader::ReadOperator(const std::string& where, const fb::Operator* op, int tensor_count,
                          OperatorDesc* desc) {
  uint32_t opcode_index = op->opcode_index();
  if (opcode_index >= op_codes_.size()) {
    return Fail(Format("%s: opcode_index %u is out of range (the model has %zu operator codes)",
                       where.c_str(), opcode_index, op_codes_.size()));
  }
  const OpCode& code = op_codes_[opcode_index];
  desc->builtin_code = code.builtin_code;
  desc->custom_name = code.custom_name;
  desc->version = code.version;
  std::string label = code.builtin_code == kKilnBuiltinCustom
                          ? Format("%s (CUSTOM:%s)", where.c_str(),
                                   Printable(code.custom_name.data(), code.custom_name.size()).c_str())
                          : Format("%s (%s)", where.c_str(), BuiltinOperatorName(code.builtin_code).c_str());

  // Optional inputs are written as -1.
  if (!ReadIndexList(label, "input", op->inputs(), tensor_count, true, &desc->inputs) ||
      !ReadIndexList(label, "output", op->outputs(), tensor_count, false, &desc->outputs) ||
      !ReadIndexList(label, "intermediate", op->intermediates(), tensor_count, false, &desc->intermediates)) {
    return false;
  }

  if (op->large_custom_options_offset() > 1) {
    Bytes bytes;
    if (!ExternalBytes(label + " custom options", op->large_custom_options_offset(),
                       op->large_custom_options_size(), &bytes)) {
      return false;
    }
    desc->custom_options = bytes.size ? bytes.data : nullptr;
    desc->custom_options_size = bytes.size;
  } else if (op->custom_options() != nullptr && op->custom_options()->size() > 0) {
    desc->custom_options = op->custom_options()->data();
    desc->custom_options_size = op->custom_options()->size();
  }
  return ParseBuiltinOptions(label, op, desc);
}

bool Reader::CheckExecutionOrder(int subgraph_index, const SubgraphDesc& desc) {
  const size_t tensor_count = desc.tensors.size();
  // Who writes each tensor (-1: nobody). Found for all operators first so that a read-before-write can
  // say which later operator writes the tensor.
  std::vector<int> writer(tensor_count, -1);
  for (size_t o = 0; o < desc.operators.size(); ++o) {
    for (size_t k = 0; k < desc.operators[o].outputs.size(); ++k) {
      int t = desc.operators[o].outputs[k];
      const TensorDesc& tensor = desc.tensors[static_cast<size_t>(t)];
      if (tensor.data != nullptr && !tensor.is_variable) {
        return Fail(Format("subgraph %d, %s: output %zu writes %s, which is a constant", subgraph_index,
                           OpLabel(subgraph_index, static_cast<int>(o)).c_str(), k,
                           TensorLabel(subgraph_index, t).c_str()));
      }
      if (writer[static_cast<size_t>(t)] != -1) {
        int first = writer[static_cast<size_t>(t)];
        return Fail(Format("subgraph %d: %s is written by both %s and %s", subgraph_index,
                           TensorLabel(subgraph_index, t).c_str(), OpLabel(subgraph_index, first).c_str(),
                           OpLabel(subgraph_index, static_cast<int>(o)).c_str()));
      }
      writer[static_cast<size_t>(t)] = static_cast<int>(o);
    }
  }

  std::vector<bool> ready(tensor_count, false);
  for (size_t t = 0; t < tensor_count; ++t) {
    ready[t] = desc.tensors[t].data != nullptr || desc.tensors[t].is_variable;
  }
  for (int t : desc.inputs) ready[static_cast<size_t>(t)] = true;
  for (size_t o = 0; o < desc.operators.size(); ++o) {
    const OperatorDesc& op = desc.operators[o];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      int t = op.inputs[k];
      if (t == -1 || ready[static_cast<size_t>(t)]) continue;
      int w = writer[static_cast<size_t>(t)];
      std::string why;
      if (w == static_cast<int>(o)) {
        why = "the operator writes it itself (a cycle)";
      } else if (w > static_cast<int>(o)) {
        why = Format(
            "it is written by %s, which comes later: the operators are not in execution order or the "
            "graph has a cycle",
            OpLabel(subgraph_index, w).c_str());
      } else {
        why = "no operator writes it and it is not a constant, a subgraph input or a variable";
      }
      return Fail(Format("subgraph %d, %s: input %zu reads %s before it has a value: %s", subgraph_index,
                         OpLabel(subgraph_index, static_cast<int>(o)).c_str(), k,
                         TensorLabel(subgraph_index, t).c_str(), why.c_str()));
    }
    for (int t : op.outputs) ready[static_cast<size_t>(t)] = true;
  }
  for (size_t k = 0; k < desc.outputs.size(); ++k) {
    int t = desc.outputs[k];
    if (!ready[static_cast<size_t>(t)]) {
      return Fail(
          Format("subgraph %d: output %zu is %s, which no operator writes and which is not an input, a "
                 "constant or a variable",
                 subgraph_index, k, TensorLabel(subgraph_index, t).c_str()));
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------
// Builtin options

bool MapActivation(fb::ActivationFunctionType activation, KilnFusedActivation* out) {
  switch (activation) {
    case fb::ActivationFunctionType::NONE:
      *out = kKilnActNone;
      return true;
    case fb::ActivationFunctionType::RELU:
      *out = kKilnActRelu;
      return true;
    case fb::ActivationFunctionType::RELU_N1_TO_1:
      *out = kKilnActReluN1To1;
      return true;
    case fb::ActivationFunctionType::RELU6:
      *out = kKilnActRelu6;
      return true;
    case fb::ActivationFunctionType::TANH:
      *out = kKilnActTanh;
      return true;
    case fb::ActivationFunctionType::SIGN_BIT:
      *out = kKilnActSignBit;
      return true;
  }
  return false;
}

bool MapPadding(fb::Padding padding, KilnPadding* out) {
  switch (padding) {
    case fb::Padding::SAME:
      *out = kKilnPaddingSame;
      return true;
    case fb::Padding::VALID:
      *out = kKilnPaddingValid;
      return true;
  }
  return false;
}

template <typename T>
std::shared_ptr<void> AllocateParams(T** out) {
  // calloc: zeroed like LiteRT's value-initialised params, and freed with free() as model.h promises.
  T* params = static_cast<T*>(std::calloc(1, sizeof(T)));
  *out = params;
  return std::shared_ptr<void>(params, std::free);
}

// The options table an op carries, or the table's defaults when it carries none (an absent table reads
// like an empty one, so every field takes its schema default). A table of another type is an error.
template <typename Options>
bool GetOptions(const fb::Operator* op, const Options** out) {
  *out = nullptr;
  fb::BuiltinOptions expected = fb::BuiltinOptionsTraits<Options>::enum_value;
  if (op->builtin_options_type() == fb::BuiltinOptions::NONE) return true;
  if (op->builtin_options_type() != expected || op->builtin_options() == nullptr) return false;
  *out = static_cast<const Options*>(op->builtin_options());
  return true;
}

// Defaults for absent tables, read from a once-built empty table of each type so they always agree with
// the schema (e.g. dilation 1, pot_scale_int16 true).
template <typename Options>
const Options* EmptyOptions() {
  struct Holder {
    flatbuffers::FlatBufferBuilder builder;
    const Options* table;
    Holder() {
      flatbuffers::uoffset_t start = builder.StartTable();
      builder.Finish(flatbuffers::Offset<Options>(builder.EndTable(start)));
      table = flatbuffers::GetRoot<Options>(builder.GetBufferPointer());
    }
  };
  static const Holder holder;
  return holder.table;
}

bool Reader::ParseBuiltinOptions(const std::string& where, const fb::Operator* op, OperatorDesc* desc) {
  auto wrong_type = [&](const char* expected) {
    const char* actual = fb::EnumNameBuiltinOptions(op->builtin_options_type());
    return Fail(Format("%s: builtin options are %s, expected %s", where.c_str(),
                       (actual && *actual) ? actual : "of an unknown type", expected));
  };
  auto bad_activation = [&](fb::ActivationFunctionType a) {
    return Fail(Format("%s: unknown fused activation function %d", where.c_str(), static_cast<int>(a)));
  };
  auto bad_padding = [&](fb::Padding p) {
    return Fail(Format("%s: unknown padding %d", where.c_str(), static_cast<int>(p)));
  };
  auto need_positive = [&](const char* field, int value) {
    if (value >= 1) return true;
    return Fail(Format("%s: %s must be at least 1 (got %d)", where.c_str(), field, value));
  };
  auto activation = [&](fb::ActivationFunctionType a, KilnFusedActivation* out) {
    return MapActivation(a, out) || bad_activation(a);
  };
  // The convolutions and pools share padding, activation and strides.
  auto window = [&](const auto* options, auto* params) {
    if (!MapPadding(options->padding(), &params->padding)) return bad_padding(options->padding());
    if (!activation(options->fused_activation_function(), &params->activation)) return false;
    params->stride_width = options->stride_w();
    params->stride_height = options->stride_h();
    return need_positive("stride_w", params->stride_width) &&
           need_positive("stride_h", params->stride_height);
  };
  auto dilation = [&](const auto* options, auto* params) {
    params->dilation_width_factor = options->dilation_w_factor();
    params->dilation_height_factor = options->dilation_h_factor();
    return need_positive("dilation_w_factor", params->dilation_width_factor) &&
           need_positive("dilation_h_factor", params->dilation_height_factor);
  };
  // The bounded lists of RESHAPE and SQUEEZE: at most KILN_RESHAPE_MAX_DIMENSIONS `noun`s.
  auto int_list = [&](const char* field, const char* noun, const flatbuffers::Vector<int32_t>* list,
                      int* count, int* values) {
    if (list == nullptr) return true;
    if (list->size() > KILN_RESHAPE_MAX_DIMENSIONS) {
      return Fail(Format("%s: %s has %u %s, more than the %d Kiln supports", where.c_str(), field,
                         list->size(), noun, KILN_RESHAPE_MAX_DIMENSIONS));
    }
    *count = static_cast<int>(list->size());
    for (int i = 0; i < *count; ++i) values[i] = list->Get(static_cast<flatbuffers::uoffset_t>(i));
    return true;
  };

#define KILN_GET_OPTIONS(Type, var)                              \
  const fb::Type* var = nullptr;                                 \
  if (!GetOptions<fb::Type>(op, &var)) return wrong_type(#Type); \
  if (var == nullptr) var = EmptyOptions<fb::Type>();

  switch (desc->builtin_code) {
    case kKilnBuiltinAdd:
    case kKilnBuiltinSub: {
      KilnAddParams* params;
      desc->builtin_data = AllocateParams(&params);
      if (desc->builtin_code == kKilnBuiltinAdd) {
        KILN_GET_OPTIONS(AddOptions, options);
        if (!activation(options->fused_activation_function(), &params->activation)) return false;
        params->pot_scale_int16 = options->pot_scale_int16();
      } else {
        KILN_GET_OPTIONS(SubOptions, options);
        if (!activation(options->fused_activation_function(), &params->activation)) return false;
        params->pot_scale_int16 = options->pot_scale_int16();
      }
      return true;
    }
    case kKilnBuiltinMul:
    case kKilnBuiltinDiv: {
      KilnMulParams* params;
      desc->builtin_data = AllocateParams(&params);
      fb::ActivationFunctionType fused;
      if (desc->builtin_code == kKilnBuiltinMul) {
        KILN_GET_OPTIONS(MulOptions, options);
        fused = options->fused_activation_function();
      } else {
        KILN_GET_OPTIONS(DivOptions, options);
        fused = options->fused_activation_function();
      }
      return activation(fused, &params->activation);
    }
    case kKilnBuiltinConv2d: {
      KILN_GET_OPTIONS(Conv2DOptions, options);
      KilnConvParams* params;
      desc->builtin_data = AllocateParams(&params);
      return window(options, params) && dilation(options, params);
    }
    case kKilnBuiltinConv3d:
    case kKilnBuiltinConv3dTranspose: {
      KILN_GET_OPTIONS(Conv3DOptions, options);
      KilnConv3DParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->stride_depth = options->stride_d();
      params->dilation_depth_factor = options->dilation_d_factor();
      return window(options, params) && dilation(options, params) &&
             need_positive("stride_d", params->stride_depth) &&
             need_positive("dilation_d_factor", params->dilation_depth_factor);
    }
    case kKilnBuiltinTransposeConv: {
      KILN_GET_OPTIONS(TransposeConvOptions, options);
      KilnTransposeConvParams* params;
      desc->builtin_data = AllocateParams(&params);
      return window(options, params);
    }
    case kKilnBuiltinDepthwiseConv2d: {
      KILN_GET_OPTIONS(DepthwiseConv2DOptions, options);
      KilnDepthwiseConvParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->depth_multiplier = options->depth_multiplier();
      return window(options, params) && dilation(options, params);
    }
    case kKilnBuiltinAveragePool2d:
    case kKilnBuiltinMaxPool2d:
    case kKilnBuiltinL2Pool2d: {
      KILN_GET_OPTIONS(Pool2DOptions, options);
      KilnPoolParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->filter_width = options->filter_width();
      params->filter_height = options->filter_height();
      return window(options, params) && need_positive("filter_width", params->filter_width) &&
             need_positive("filter_height", params->filter_height);
    }
    case kKilnBuiltinFullyConnected: {
      KILN_GET_OPTIONS(FullyConnectedOptions, options);
      KilnFullyConnectedParams* params;
      desc->builtin_data = AllocateParams(&params);
      if (!activation(options->fused_activation_function(), &params->activation)) return false;
      switch (options->weights_format()) {
        case fb::FullyConnectedOptionsWeightsFormat::DEFAULT:
          params->weights_format = kKilnFullyConnectedWeightsFormatDefault;
          break;
        case fb::FullyConnectedOptionsWeightsFormat::SHUFFLED4x16INT8:
          params->weights_format = kKilnFullyConnectedWeightsFormatShuffled4x16Int8;
          break;
        default:
          return Fail(Format("%s: unknown weights_format %d", where.c_str(),
                             static_cast<int>(options->weights_format())));
      }
      params->keep_num_dims = options->keep_num_dims();
      params->asymmetric_quantize_inputs = options->asymmetric_quantize_inputs();
      return true;
    }
    case kKilnBuiltinSoftmax: {
      KILN_GET_OPTIONS(SoftmaxOptions, options);
      KilnSoftmaxParams* params;
      desc->builtin_data = AllocateParams(&params);
      // Without a table beta is the format's default, 0 (as in LiteRT): converters always write it.
      params->beta = options->beta();
      return true;
    }
    case kKilnBuiltinL2Normalization: {
      KILN_GET_OPTIONS(L2NormOptions, options);
      KilnL2NormParams* params;
      desc->builtin_data = AllocateParams(&params);
      return activation(options->fused_activation_function(), &params->activation);
    }
    case kKilnBuiltinLocalResponseNormalization: {
      KILN_GET_OPTIONS(LocalResponseNormalizationOptions, options);
      KilnLocalResponseNormParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->radius = options->radius();
      params->bias = options->bias();
      params->alpha = options->alpha();
      params->beta = options->beta();
      return true;
    }
    case kKilnBuiltinBatchMatmul: {
      KILN_GET_OPTIONS(BatchMatMulOptions, options);
      KilnBatchMatMulParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->adj_x = options->adj_x();
      params->adj_y = options->adj_y();
      params->asymmetric_quantize_inputs = options->asymmetric_quantize_inputs();
      return true;
    }
    case kKilnBuiltinGelu: {
      KILN_GET_OPTIONS(GeluOptions, options);
      KilnGeluParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->approximate = options->approximate();
      return true;
    }
    case kKilnBuiltinCumsum: {
      KILN_GET_OPTIONS(CumsumOptions, options);
      KilnCumsumParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->exclusive = options->exclusive();
      params->reverse = options->reverse();
      return true;
    }
    case kKilnBuiltinLeakyRelu: {
      KILN_GET_OPTIONS(LeakyReluOptions, options);
      KilnLeakyReluParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->alpha = options->alpha();
      if (!std::isfinite(params->alpha)) {
        return Fail(Format("%s: alpha is not finite", where.c_str()));
      }
      return true;
    }
    case kKilnBuiltinResizeBilinear: {
      KILN_GET_OPTIONS(ResizeBilinearOptions, options);
      KilnResizeBilinearParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->align_corners = options->align_corners();
      params->half_pixel_centers = options->half_pixel_centers();
      return true;
    }
    case kKilnBuiltinResizeNearestNeighbor: {
      KILN_GET_OPTIONS(ResizeNearestNeighborOptions, options);
      KilnResizeNearestNeighborParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->align_corners = options->align_corners();
      params->half_pixel_centers = options->half_pixel_centers();
      return true;
    }
    case kKilnBuiltinConcatenation: {
      KILN_GET_OPTIONS(ConcatenationOptions, options);
      KilnConcatenationParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->axis = options->axis();
      if (!activation(options->fused_activation_function(), &params->activation)) return false;
      return true;
    }
    case kKilnBuiltinReshape: {
      KILN_GET_OPTIONS(ReshapeOptions, options);
      KilnReshapeParams* params;
      desc->builtin_data = AllocateParams(&params);
      return int_list("new_shape", "dimensions", options->new_shape(), &params->num_dimensions,
                      params->shape);
    }
    case kKilnBuiltinSqueeze: {
      KILN_GET_OPTIONS(SqueezeOptions, options);
      KilnSqueezeParams* params;
      desc->builtin_data = AllocateParams(&params);
      return int_list("squeeze_dims", "entries", options->squeeze_dims(), &params->num_squeeze_dims,
                      params->squeeze_dims);
    }
    case kKilnBuiltinDepthToSpace: {
      KILN_GET_OPTIONS(DepthToSpaceOptions, options);
      KilnDepthToSpaceParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->block_size = options->block_size();
      return true;
    }
    case kKilnBuiltinSpaceToDepth: {
      KILN_GET_OPTIONS(SpaceToDepthOptions, options);
      KilnSpaceToDepthParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->block_size = options->block_size();
      return true;
    }
    case kKilnBuiltinMirrorPad: {
      KILN_GET_OPTIONS(MirrorPadOptions, options);
      KilnMirrorPadParams* params;
      desc->builtin_data = AllocateParams(&params);
      switch (options->mode()) {
        case fb::MirrorPadMode::REFLECT:
          params->mode = kKilnMirrorPadReflect;
          break;
        case fb::MirrorPadMode::SYMMETRIC:
          params->mode = kKilnMirrorPadSymmetric;
          break;
        default:
          return Fail(Format("%s: unknown mirror pad mode %d", where.c_str(), static_cast<int>(options->mode())));
      }
      return true;
    }
    case kKilnBuiltinStridedSlice: {
      KILN_GET_OPTIONS(StridedSliceOptions, options);
      KilnStridedSliceParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->begin_mask = options->begin_mask();
      params->end_mask = options->end_mask();
      params->ellipsis_mask = options->ellipsis_mask();
      params->new_axis_mask = options->new_axis_mask();
      params->shrink_axis_mask = options->shrink_axis_mask();
      params->offset = options->offset();
      return true;
    }
    case kKilnBuiltinGather: {
      KILN_GET_OPTIONS(GatherOptions, options);
      KilnGatherParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->axis = options->axis();
      params->batch_dims = options->batch_dims();
      return true;
    }
    case kKilnBuiltinReverseSequence: {
      KILN_GET_OPTIONS(ReverseSequenceOptions, options);
      KilnReverseSequenceParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->seq_dim = options->seq_dim();
      params->batch_dim = options->batch_dim();
      return true;
    }
    case kKilnBuiltinBucketize: {
      KILN_GET_OPTIONS(BucketizeOptions, options);
      // The struct and a copy of the boundaries in one calloc block, freed with free() as model.h promises.
      const size_t count = options->boundaries() != nullptr ? options->boundaries()->size() : 0;
      if (count > static_cast<size_t>(std::numeric_limits<int>::max())) {
        return Fail(Format("%s: BUCKETIZE has %zu boundaries, more than an int counts", where.c_str(), count));
      }
      void* block = std::calloc(1, sizeof(KilnBucketizeParams) + count * sizeof(float));
      auto* params = static_cast<KilnBucketizeParams*>(block);
      if (params == nullptr) return Fail(Format("%s: out of memory reading BUCKETIZE's boundaries", where.c_str()));
      float* boundaries = reinterpret_cast<float*>(static_cast<char*>(block) + sizeof(KilnBucketizeParams));
      for (size_t i = 0; i < count; ++i) {
        boundaries[i] = options->boundaries()->Get(static_cast<flatbuffers::uoffset_t>(i));
      }
      params->boundaries = count > 0 ? boundaries : nullptr;
      params->num_boundaries = static_cast<int>(count);
      desc->builtin_data = std::shared_ptr<void>(block, std::free);
      return true;
    }
    case kKilnBuiltinEmbeddingLookupSparse: {
      KILN_GET_OPTIONS(EmbeddingLookupSparseOptions, options);
      KilnEmbeddingLookupSparseParams* params;
      desc->builtin_data = AllocateParams(&params);
      switch (options->combiner()) {
        case fb::CombinerType::SUM:
          params->combiner = kKilnCombinerSum;
          break;
        case fb::CombinerType::MEAN:
          params->combiner = kKilnCombinerMean;
          break;
        case fb::CombinerType::SQRTN:
          params->combiner = kKilnCombinerSqrtn;
          break;
        default:
          return Fail(Format("%s: unknown EMBEDDING_LOOKUP_SPARSE combiner %d", where.c_str(),
                             static_cast<int>(options->combiner())));
      }
      return true;
    }
    case kKilnBuiltinRandomUniform:
    case kKilnBuiltinRandomStandardNormal:
    case kKilnBuiltinMultinomial: {
      KILN_GET_OPTIONS(RandomOptions, options);
      KilnRandomParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->seed = options->seed();
      params->seed2 = options->seed2();
      return true;
    }
    case kKilnBuiltinFakeQuant: {
      KILN_GET_OPTIONS(FakeQuantOptions, options);
      KilnFakeQuantParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->min = options->min();
      params->max = options->max();
      params->num_bits = options->num_bits();
      params->narrow_range = options->narrow_range();
      return true;
    }
    case kKilnBuiltinOneHot: {
      KILN_GET_OPTIONS(OneHotOptions, options);
      KilnOneHotParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->axis = options->axis();
      return true;
    }
    case kKilnBuiltinSplit: {
      KILN_GET_OPTIONS(SplitOptions, options);
      KilnSplitParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->num_splits = options->num_splits();
      return true;
    }
    case kKilnBuiltinSplitV: {
      KILN_GET_OPTIONS(SplitVOptions, options);
      KilnSplitVParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->num_splits = options->num_splits();
      return true;
    }
    case kKilnBuiltinPack: {
      KILN_GET_OPTIONS(PackOptions, options);
      KilnPackParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->values_count = options->values_count();
      params->axis = options->axis();
      return true;
    }
    case kKilnBuiltinUnpack: {
      KILN_GET_OPTIONS(UnpackOptions, options);
      KilnUnpackParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->num = options->num();
      params->axis = options->axis();
      return true;
    }
    // The index type of SHAPE, ARG_MAX and ARG_MIN: kKilnNoType where the op has no options table (the op then
    // goes by its output tensor's type).
    case kKilnBuiltinShape: {
      const fb::ShapeOptions* options = nullptr;
      if (!GetOptions<fb::ShapeOptions>(op, &options)) return wrong_type("ShapeOptions");
      KilnShapeParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->out_type = kKilnNoType;
      if (options != nullptr && !MapTensorType(options->out_type(), &params->out_type)) {
        return Fail(Format("%s: unknown out_type %d", where.c_str(), static_cast<int>(options->out_type())));
      }
      return true;
    }
    case kKilnBuiltinArgMax: {
      const fb::ArgMaxOptions* options = nullptr;
      if (!GetOptions<fb::ArgMaxOptions>(op, &options)) return wrong_type("ArgMaxOptions");
      KilnArgMaxParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->output_type = kKilnNoType;
      if (options != nullptr && !MapTensorType(options->output_type(), &params->output_type)) {
        return Fail(
            Format("%s: unknown output_type %d", where.c_str(), static_cast<int>(options->output_type())));
      }
      return true;
    }
    case kKilnBuiltinArgMin: {
      const fb::ArgMinOptions* options = nullptr;
      if (!GetOptions<fb::ArgMinOptions>(op, &options)) return wrong_type("ArgMinOptions");
      KilnArgMinParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->output_type = kKilnNoType;
      if (options != nullptr && !MapTensorType(options->output_type(), &params->output_type)) {
        return Fail(
            Format("%s: unknown output_type %d", where.c_str(), static_cast<int>(options->output_type())));
      }
      return true;
    }
    case kKilnBuiltinIf: {
      KILN_GET_OPTIONS(IfOptions, options);
      KilnIfParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->then_subgraph_index = options->then_subgraph_index();
      params->else_subgraph_index = options->else_subgraph_index();
      return true;
    }
    case kKilnBuiltinWhile: {
      KILN_GET_OPTIONS(WhileOptions, options);
      KilnWhileParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->cond_subgraph_index = options->cond_subgraph_index();
      params->body_subgraph_index = options->body_subgraph_index();
      return true;
    }
    case kKilnBuiltinCallOnce: {
      KILN_GET_OPTIONS(CallOnceOptions, options);
      KilnCallOnceParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->init_subgraph_index = options->init_subgraph_index();
      return true;
    }
    case kKilnBuiltinVarHandle: {
      KILN_GET_OPTIONS(VarHandleOptions, options);
      KilnVarHandleParams* params;
      desc->builtin_data = AllocateParams(&params);
      // Flatbuffer strings are NUL-terminated inside the model's bytes, which outlive the params.
      params->container = options->container() != nullptr ? options->container()->c_str() : "";
      params->shared_name = options->shared_name() != nullptr ? options->shared_name()->c_str() : "";
      return true;
    }
    case kKilnBuiltinMean:
    case kKilnBuiltinSum:
    case kKilnBuiltinReduceMax:
    case kKilnBuiltinReduceMin:
    case kKilnBuiltinReduceProd:
    case kKilnBuiltinReduceAny:
    case kKilnBuiltinReduceAll: {
      KILN_GET_OPTIONS(ReducerOptions, options);
      KilnReducerParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->keep_dims = options->keep_dims();
      return true;
    }
    case kKilnBuiltinLstm: {
      KILN_GET_OPTIONS(LSTMOptions, options);
      KilnLSTMParams* params;
      desc->builtin_data = AllocateParams(&params);
      if (!activation(options->fused_activation_function(), &params->activation)) return false;
      params->cell_clip = options->cell_clip();
      params->proj_clip = options->proj_clip();
      switch (options->kernel_type()) {
        case fb::LSTMKernelType::FULL:
          params->kernel_type = kKilnLSTMFullKernel;
          break;
        case fb::LSTMKernelType::BASIC:
          params->kernel_type = kKilnLSTMBasicKernel;
          break;
        default:
          return Fail(Format("%s: unknown kernel_type %d", where.c_str(), static_cast<int>(options->kernel_type())));
      }
      params->asymmetric_quantize_inputs = options->asymmetric_quantize_inputs();
      return true;
    }
    case kKilnBuiltinUnidirectionalSequenceLstm: {
      KILN_GET_OPTIONS(UnidirectionalSequenceLSTMOptions, options);
      KilnUnidirectionalSequenceLSTMParams* params;
      desc->builtin_data = AllocateParams(&params);
      if (!activation(options->fused_activation_function(), &params->activation)) return false;
      params->cell_clip = options->cell_clip();
      params->proj_clip = options->proj_clip();
      params->time_major = options->time_major();
      params->asymmetric_quantize_inputs = options->asymmetric_quantize_inputs();
      params->diagonal_recurrent_tensors = options->diagonal_recurrent_tensors();
      return true;
    }
    case kKilnBuiltinSvdf: {
      KILN_GET_OPTIONS(SVDFOptions, options);
      KilnSVDFParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->rank = options->rank();
      params->asymmetric_quantize_inputs = options->asymmetric_quantize_inputs();
      return activation(options->fused_activation_function(), &params->activation);
    }
    case kKilnBuiltinRnn: {
      KILN_GET_OPTIONS(RNNOptions, options);
      KilnRNNParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->asymmetric_quantize_inputs = options->asymmetric_quantize_inputs();
      return activation(options->fused_activation_function(), &params->activation);
    }
    case kKilnBuiltinUnidirectionalSequenceRnn: {
      KILN_GET_OPTIONS(SequenceRNNOptions, options);
      KilnSequenceRNNParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->time_major = options->time_major();
      params->asymmetric_quantize_inputs = options->asymmetric_quantize_inputs();
      return activation(options->fused_activation_function(), &params->activation);
    }
    case kKilnBuiltinBidirectionalSequenceLstm: {
      KILN_GET_OPTIONS(BidirectionalSequenceLSTMOptions, options);
      KilnBidirectionalSequenceLSTMParams* params;
      desc->builtin_data = AllocateParams(&params);
      if (!activation(options->fused_activation_function(), &params->activation)) return false;
      params->cell_clip = options->cell_clip();
      params->proj_clip = options->proj_clip();
      params->merge_outputs = options->merge_outputs();
      params->time_major = options->time_major();
      params->asymmetric_quantize_inputs = options->asymmetric_quantize_inputs();
      return true;
    }
    case kKilnBuiltinBidirectionalSequenceRnn: {
      KILN_GET_OPTIONS(BidirectionalSequenceRNNOptions, options);
      KilnBidirectionalSequenceRNNParams* params;
      desc->builtin_data = AllocateParams(&params);
      params->time_major = options->time_major();
      params->merge_outputs = options->merge_outputs();
      params->asymmetric_quantize_inputs = options->asymmetric_quantize_inputs();
      return activation(options->fused_activation_function(), &params->activation);
    }
    default:
      return true;
  }
#undef KILN_GET_OPTIONS
}

}  // namespace

bool ReadModel(const uint8_t* data, size_t size, ModelDesc* out, std::string* error) {
  *out = ModelDesc();
  Reader reader(data, size, out);
  if (reader.Read()) return true;
  *out = ModelDesc();
  if (error != nullptr) *error = reader.error();
  return false;
}

const char* BuiltinOperatorCName(int builtin_code) {
  if (builtin_code >= static_cast<int>(fb::BuiltinOperator::MIN) &&
      builtin_code <= static_cast<int>(fb::BuiltinOperator::MAX)) {
    const char* name = fb::EnumNameBuiltinOperator(static_cast<fb::BuiltinOperator>(builtin_code));
    if (name != nullptr && *name != '\0') return name;
  }
  return "UNKNOWN";
}

std::string BuiltinOperatorName(int builtin_code) {
  const std::string name = BuiltinOperatorCName(builtin_code);
  return name != "UNKNOWN" ? name : "UNKNOWN(" + std::to_string(builtin_code) + ")";
}

const char* TypeName(KilnType type) {
  switch (type) {
    case kKilnNoType:
      return "notype";
    case kKilnFloat32:
      return "float32";
    case kKilnInt32:
      return "int32";
    case kKilnUInt8:
      return "uint8";
    case kKilnInt64:
      return "int64";
    case kKilnString:
      return "string";
    case kKilnBool:
      return "bool";
    case kKilnInt16:
      return "int16";
    case kKilnComplex64:
      return "complex64";
    case kKilnInt8:
      return "int8";
    case kKilnFloat16:
      return "float16";
    case kKilnFloat64:
      return "float64";
    case kKilnComplex128:
      return "complex128";
    case kKilnUInt64:
      return "uint64";
    case kKilnResource:
      return "resource";
    case kKilnVariant:
      return "variant";
    case kKilnUInt32:
      return "uint32";
    case kKilnUInt16:
      return "uint16";
    case kKilnInt4:
      return "int4";
  }
  return "unknown";
}

size_t TypeSize(KilnType type) {
  switch (type) {
    case kKilnFloat32:
      return 4;
    case kKilnInt32:
      return 4;
    case kKilnUInt8:
      return 1;
    case kKilnInt64:
      return 8;
    case kKilnBool:
      return 1;
    case kKilnInt16:
      return 2;
    case kKilnComplex64:
      return 8;
    case kKilnInt8:
      return 1;
    case kKilnFloat16:
      return 2;
    case kKilnFloat64:
      return 8;
    case kKilnComplex128:
      return 16;
    case kKilnUInt64:
      return 8;
    case kKilnUInt32:
      return 4;
    case kKilnUInt16:
      return 2;
    // int4 packs two elements per byte, so it has no whole-byte element size.
    case kKilnInt4:
    case kKilnString:
    case kKilnResource:
    case kKilnVariant:
    case kKilnNoType:
      return 0;
  }
  return 0;
}

uint64_t MaxTensorBytes() { return max_tensor_bytes.load(std::memory_order_relaxed); }

void SetMaxTensorBytes(uint64_t bytes) { max_tensor_bytes.store(bytes, std::memory_order_relaxed); }

}  // namespace kiln
