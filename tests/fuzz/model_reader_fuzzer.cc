// libFuzzer target: ReadModel on arbitrary bytes must either succeed or fail with a message, never crash,
// hang or read outside the input. Whatever it accepts is walked once more so that the sanitizers see every
// pointer the reader handed out (constant data, custom options) being read.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kiln/flex.h"
#include "runtime/model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::ModelDesc model;
  std::string error;
  if (!kiln::ReadModel(data, size, &model, &error)) {
    if (error.empty()) std::abort();  // every failure must say why
    return 0;
  }
  unsigned checksum = 0;
  for (const kiln::SubgraphDesc& subgraph : model.subgraphs) {
    for (const kiln::TensorDesc& tensor : subgraph.tensors) {
      if (tensor.data != nullptr && tensor.data_size > 0) {
        checksum += tensor.data[0] + tensor.data[tensor.data_size - 1];
      }
    }
    for (const kiln::OperatorDesc& op : subgraph.operators) {
      for (int t : op.inputs) {
        if (t < -1 || t >= static_cast<int>(subgraph.tensors.size())) std::abort();
      }
      for (int t : op.outputs) {
        if (t < 0 || t >= static_cast<int>(subgraph.tensors.size())) std::abort();
      }
      if (op.custom_options != nullptr) {
        int count = 0;
        if (KilnFlexMapSize(op.custom_options, op.custom_options_size, &count) == kKilnOk) {
          for (int i = 0; i < count; ++i) {
            const char* key = nullptr;
            KilnFlexValueKind kind;
            if (KilnFlexMapEntry(op.custom_options, op.custom_options_size, i, &key, &kind) == kKilnOk) {
              float value;
              float vector[4];
              int length;
              KilnFlexMapGetFloat(op.custom_options, op.custom_options_size, key, &value);
              KilnFlexMapGetFloatVector(op.custom_options, op.custom_options_size, key, vector, 4, &length);
            }
          }
        }
      }
    }
  }
  volatile unsigned sink = checksum;
  (void)sink;
  return 0;
}
