// The validated, in-memory form of a .tflite model that the interpreter builds from.
//
// model_reader.cc fills it from the flatbuffer; nothing downstream looks at the flatbuffer again. Everything
// here has already been checked: tensor indices are in range (or -1 for an absent optional input), shapes are
// non-negative and their byte sizes fit in size_t, constant data has exactly the tensor's byte size, and the
// operators are in an order where every tensor is written before it is read.
#ifndef KILN_RUNTIME_MODEL_MODEL_H_
#define KILN_RUNTIME_MODEL_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/common.h"

namespace kiln {

struct QuantizationDesc {
  std::vector<float> scale;        // one per channel, or one for the whole tensor; empty if not quantized
  std::vector<int32_t> zero_point;  // same length as scale
  int quantized_dimension = 0;
};

struct TensorDesc {
  KilnType type = kKilnNoType;
  std::vector<int> shape;
  std::vector<int> shape_signature;  // -1 marks a dynamic dimension; empty when the model has none
  std::string name;
  // Constant data (weights) inside the model's bytes, or nullptr for activations and inputs.
  const uint8_t* data = nullptr;
  size_t data_size = 0;
  // A sparse constant's dense form, which `data` then points into (the reader densifies sparse tensors).
  std::shared_ptr<std::vector<uint8_t>> dense_data;
  QuantizationDesc quantization;
  bool is_variable = false;
};

struct OperatorDesc {
  int builtin_code = 0;     // KilnBuiltinOperator: the larger of builtin_code and deprecated_builtin_code
  std::string custom_name;  // set for kKilnBuiltinCustom
  int version = 1;
  std::vector<int> inputs;   // -1: absent optional input
  std::vector<int> outputs;
  std::vector<int> intermediates;
  // The builtin options parsed into the matching struct of kiln/builtin_op_data.h, or null.
  std::shared_ptr<void> builtin_data;
  // The custom options bytes (a flexbuffer map), pointing into the model's bytes.
  const uint8_t* custom_options = nullptr;
  size_t custom_options_size = 0;
};

struct SubgraphDesc {
  std::string name;
  std::vector<TensorDesc> tensors;
  std::vector<OperatorDesc> operators;
  std::vector<int> inputs;
  std::vector<int> outputs;
};

// A SignatureDef: a named entry point whose inputs and outputs carry the names the converter took from the saved
// model. Each name maps to a tensor of subgraph `subgraph_index`.
struct SignatureTensor {
  std::string name;
  int tensor_index = 0;
};
struct SignatureDesc {
  std::string key;  // "serving_default"
  int subgraph_index = 0;
  std::vector<SignatureTensor> inputs;
  std::vector<SignatureTensor> outputs;
};

struct ModelDesc {
  uint32_t version = 0;
  std::string description;
  std::vector<SubgraphDesc> subgraphs;  // subgraphs[0] is the main graph
  std::vector<SignatureDesc> signatures;
};

// Verifies and reads a .tflite model held in `data` (which must outlive `out`: constant tensors point into
// it). On failure returns false and sets `*error` to a message that names the problem and where it is
// ("subgraph 0, operator 3 (CONV_2D): input 1 refers to tensor 57, but the subgraph has 40 tensors").
bool ReadModel(const uint8_t* data, size_t size, ModelDesc* out, std::string* error);

// "CONV_2D", "CUSTOM", ... for a builtin code; "UNKNOWN(<n>)" for codes Kiln does not know.
std::string BuiltinOperatorName(int builtin_code);
// As BuiltinOperatorName, without the code: "UNKNOWN" for one the schema does not name. The string is static.
const char* BuiltinOperatorCName(int builtin_code);

// The byte size of one element, or 0 for types without a fixed size (strings, resources).
size_t TypeSize(KilnType type);
// "float32", "int8", ...; "unknown" for values outside KilnType. Static strings (KilnTypeGetName).
const char* TypeName(KilnType type);

}  // namespace kiln

#endif  // KILN_RUNTIME_MODEL_MODEL_H_
