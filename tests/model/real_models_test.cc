// Every real .tflite model in ../shared/models reads without error, and what is read agrees with what
// MANIFEST.md (written from the source repositories) says about it: size, ops, inputs and outputs.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/builtin_ops.h"
#include "runtime/model/model.h"
#include "tests/test_util.h"

namespace kiln {
namespace {

using ::kiln::testing::ModelPath;
using ::kiln::testing::ModelsDir;
using ::kiln::testing::ReadFileBytes;

std::string Trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t");
  size_t end = s.find_last_not_of(" \t");
  return begin == std::string::npos ? std::string() : s.substr(begin, end - begin + 1);
}

std::vector<std::string> Split(const std::string& s, const std::string& separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t at = s.find(separator, start);
    parts.push_back(Trim(s.substr(start, at == std::string::npos ? std::string::npos : at - start)));
    if (at == std::string::npos) break;
    start = at + separator.size();
  }
  return parts;
}

struct ManifestEntry {
  std::string file;
  size_t bytes = 0;
  std::map<std::string, int> op_counts;  // "CONV_2D" -> 2, "CUSTOM:Sinh" -> 1
  std::vector<std::string> inputs;       // "float32[1, 8, 8, 3]"
  std::vector<std::string> outputs;
};

// Rows of the "Models" table: | file | bytes | ops | inputs -> outputs | source |
std::vector<ManifestEntry> ReadManifest() {
  std::ifstream in(ModelsDir() + "/MANIFEST.md");
  std::vector<ManifestEntry> entries;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells = Split(line.substr(1, line.size() - 2), "|");
    if (cells.size() < 5 || cells[0].find(".tflite") == std::string::npos) continue;
    ManifestEntry entry;
    entry.file = cells[0];
    entry.bytes = std::stoul(cells[1]);
    // "CUSTOM:Sinh; custom: CUSTOM:Sinh": the part before ';' lists the ops.
    for (const std::string& op : Split(Split(cells[2], ";")[0], ",")) {
      size_t x = op.rfind('x');
      int count = 1;
      std::string name = op;
      if (x != std::string::npos && x + 1 < op.size() &&
          std::all_of(op.begin() + static_cast<long>(x) + 1, op.end(), ::isdigit)) {
        count = std::stoi(op.substr(x + 1));
        name = op.substr(0, x);
      }
      entry.op_counts[name] += count;
    }
    std::vector<std::string> io = Split(cells[3], "->");
    if (io.size() != 2) continue;
    entry.inputs = Split(io[0], ";");
    entry.outputs = Split(io[1], ";");
    entries.push_back(entry);
  }
  return entries;
}

const char* TypeLabel(KilnType type) {
  switch (type) {
    case kKilnFloat32:
      return "float32";
    case kKilnInt8:
      return "int8";
    case kKilnUInt8:
      return "uint8";
    case kKilnInt32:
      return "int32";
    case kKilnInt16:
      return "int16";
    case kKilnInt64:
      return "int64";
    default:
      return "other";
  }
}

std::string TensorSignature(const TensorDesc& tensor) {
  std::string s = std::string(TypeLabel(tensor.type)) + "[";
  for (size_t i = 0; i < tensor.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(tensor.shape[i]);
  return s + "]";
}

std::vector<std::string> TfliteFilesInModelsDir() {
  std::vector<std::string> files;
  DIR* dir = opendir(ModelsDir().c_str());
  if (dir == nullptr) return files;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name.size() > 7 && name.compare(name.size() - 7, 7, ".tflite") == 0) files.push_back(name);
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  return files;
}

TEST(RealModelsTest, ManifestListsEveryModelFile) {
  KILN_REQUIRE_MODELS();
  std::set<std::string> listed;
  for (const ManifestEntry& entry : ReadManifest()) listed.insert(entry.file);
  std::vector<std::string> files = TfliteFilesInModelsDir();
  ASSERT_GE(files.size(), 20u) << "expected the shared model collection in " << ModelsDir();
  for (const std::string& file : files) EXPECT_TRUE(listed.count(file)) << file << " is not in MANIFEST.md";
}

TEST(RealModelsTest, EveryModelReadsAndMatchesTheManifest) {
  KILN_REQUIRE_MODELS();
  std::vector<ManifestEntry> entries = ReadManifest();
  ASSERT_GE(entries.size(), 20u);
  for (const ManifestEntry& entry : entries) {
    SCOPED_TRACE(entry.file);
    std::vector<uint8_t> bytes = ReadFileBytes(ModelPath(entry.file));
    ASSERT_EQ(bytes.size(), entry.bytes);
    ModelDesc model;
    std::string error;
    if (entry.file == "lr_transpose.tflite") {
      // Old converter test data in schema version 2, which LiteRT refuses at load ("Model provided is schema
      // version 2 not equal to supported version 3"): so does Kiln, naming the version.
      EXPECT_FALSE(ReadModel(bytes.data(), bytes.size(), &model, &error));
      EXPECT_NE(error.find("unsupported .tflite schema version 2"), std::string::npos) << error;
      continue;
    }
    ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
    EXPECT_EQ(model.version, 3u);
    ASSERT_FALSE(model.subgraphs.empty());
    const SubgraphDesc& main = model.subgraphs[0];

    std::map<std::string, int> op_counts;
    for (const OperatorDesc& op : main.operators) {
      std::string name = op.builtin_code == kKilnBuiltinCustom ? "CUSTOM:" + op.custom_name
                                                               : BuiltinOperatorName(op.builtin_code);
      op_counts[name] += 1;
    }
    EXPECT_EQ(op_counts, entry.op_counts);

    std::vector<std::string> inputs, outputs;
    for (int t : main.inputs) inputs.push_back(TensorSignature(main.tensors[static_cast<size_t>(t)]));
    for (int t : main.outputs) outputs.push_back(TensorSignature(main.tensors[static_cast<size_t>(t)]));
    EXPECT_EQ(inputs, entry.inputs);
    EXPECT_EQ(outputs, entry.outputs);

    // Plausibility of what the ops and tensors carry.
    for (const SubgraphDesc& subgraph : model.subgraphs) {
      for (const TensorDesc& tensor : subgraph.tensors) {
        if (tensor.data == nullptr) continue;
        EXPECT_GE(tensor.data, bytes.data());
        EXPECT_LE(tensor.data + tensor.data_size, bytes.data() + bytes.size());
        size_t elements = 1;
        for (int d : tensor.shape) elements *= static_cast<size_t>(d);
        if (TypeSize(tensor.type) != 0) {
          EXPECT_EQ(tensor.data_size, elements * TypeSize(tensor.type)) << tensor.name;
        }
      }
      for (const OperatorDesc& op : subgraph.operators) {
        switch (op.builtin_code) {
          case kKilnBuiltinConv2d:
          case kKilnBuiltinDepthwiseConv2d:
          case kKilnBuiltinAveragePool2d:
          case kKilnBuiltinMaxPool2d:
          case kKilnBuiltinFullyConnected:
          case kKilnBuiltinSoftmax:
          case kKilnBuiltinAdd:
          case kKilnBuiltinConcatenation:
          case kKilnBuiltinReshape:
          case kKilnBuiltinSqueeze:
          case kKilnBuiltinMean:
          case kKilnBuiltinMul:
          case kKilnBuiltinSub:
          case kKilnBuiltinDiv:
          case kKilnBuiltinSum:
          case kKilnBuiltinReduceMax:
          case kKilnBuiltinReduceMin:
          case kKilnBuiltinReduceProd:
          case kKilnBuiltinReduceAny:
          case kKilnBuiltinReduceAll:
          case kKilnBuiltinL2Pool2d:
          case kKilnBuiltinLeakyRelu:
          case kKilnBuiltinResizeBilinear:
            EXPECT_NE(op.builtin_data, nullptr) << BuiltinOperatorName(op.builtin_code);
            break;
          case kKilnBuiltinCustom:
            EXPECT_EQ(op.builtin_data, nullptr);
            EXPECT_FALSE(op.custom_name.empty());
            break;
          default:
            EXPECT_EQ(op.builtin_data, nullptr) << BuiltinOperatorName(op.builtin_code);
        }
        if (op.builtin_code == kKilnBuiltinConv2d) {
          auto* conv = static_cast<const KilnConvParams*>(op.builtin_data.get());
          EXPECT_TRUE(conv->padding == kKilnPaddingSame || conv->padding == kKilnPaddingValid);
          EXPECT_GE(conv->dilation_width_factor, 1);
          // Conv weights are [out_channels, h, w, in_channels], and constant or computed from a constant
          // (MediaPipe's float16 weights go through a DEQUANTIZE first).
          ASSERT_GE(op.inputs.size(), 2u);
          const TensorDesc& filter = subgraph.tensors[static_cast<size_t>(op.inputs[1])];
          EXPECT_EQ(filter.shape.size(), 4u);
          bool produced = false;
          for (const OperatorDesc& producer : subgraph.operators) {
            for (int out : producer.outputs) produced = produced || out == op.inputs[1];
          }
          EXPECT_TRUE(filter.data != nullptr || produced) << "conv filter neither constant nor computed";
        }
        if (op.builtin_code == kKilnBuiltinSoftmax) {
          EXPECT_GT(static_cast<const KilnSoftmaxParams*>(op.builtin_data.get())->beta, 0.0f);
        }
      }
    }
  }
}

TEST(RealModelsTest, QuantizedModelsCarryQuantization) {
  KILN_REQUIRE_MODELS();
  std::vector<uint8_t> bytes = ReadFileBytes(ModelPath("lr_pc_conv.tflite"));
  ModelDesc model;
  std::string error;
  ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
  // The depthwise conv's filter is quantized per channel: one scale per output channel (128).
  const SubgraphDesc& main = model.subgraphs[0];
  bool found_per_channel = false;
  for (const OperatorDesc& op : main.operators) {
    if (op.builtin_code != kKilnBuiltinDepthwiseConv2d) continue;
    const TensorDesc& filter = main.tensors[static_cast<size_t>(op.inputs[1])];
    const QuantizationDesc& q = filter.quantization;
    ASSERT_GT(q.scale.size(), 1u);
    EXPECT_EQ(q.scale.size(), q.zero_point.size());
    EXPECT_EQ(static_cast<int>(q.scale.size()), filter.shape[static_cast<size_t>(q.quantized_dimension)]);
    for (float s : q.scale) EXPECT_GT(s, 0.0f);
    found_per_channel = true;
  }
  EXPECT_TRUE(found_per_channel);

  bytes = ReadFileBytes(ModelPath("lr_add_int8.tflite"));
  ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
  const TensorDesc& input = model.subgraphs[0].tensors[static_cast<size_t>(model.subgraphs[0].inputs[0])];
  EXPECT_EQ(input.type, kKilnInt8);
  ASSERT_EQ(input.quantization.scale.size(), 1u);
  EXPECT_GT(input.quantization.scale[0], 0.0f);
}

TEST(RealModelsTest, CustomOpNamesAndAtan2) {
  KILN_REQUIRE_MODELS();
  std::vector<uint8_t> bytes = ReadFileBytes(ModelPath("lr_custom_sinh.tflite"));
  ModelDesc model;
  std::string error;
  ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
  ASSERT_EQ(model.subgraphs[0].operators.size(), 1u);
  EXPECT_EQ(model.subgraphs[0].operators[0].builtin_code, kKilnBuiltinCustom);
  EXPECT_EQ(model.subgraphs[0].operators[0].custom_name, "Sinh");

  // ATAN2 (156) does not fit the byte-sized deprecated code: it must come from builtin_code.
  bytes = ReadFileBytes(ModelPath("lr_atan2.tflite"));
  ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
  ASSERT_EQ(model.subgraphs[0].operators.size(), 1u);
  EXPECT_EQ(model.subgraphs[0].operators[0].builtin_code, kKilnBuiltinAtan2);
  EXPECT_EQ(model.subgraphs[0].operators[0].inputs.size(), 2u);
}

TEST(RealModelsTest, MobilenetV2Int8Structure) {
  KILN_REQUIRE_MODELS();
  std::vector<uint8_t> bytes = ReadFileBytes(ModelPath("tm_mobilenet_v2_int8_224.tflite"));
  ModelDesc model;
  std::string error;
  ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
  const SubgraphDesc& main = model.subgraphs[0];
  // MEAN keeps its options; PAD reads its paddings from a constant input.
  for (const OperatorDesc& op : main.operators) {
    if (op.builtin_code == kKilnBuiltinPad) {
      ASSERT_EQ(op.inputs.size(), 2u);
      EXPECT_NE(main.tensors[static_cast<size_t>(op.inputs[1])].data, nullptr);
    }
    if (op.builtin_code == kKilnBuiltinMean) {
      ASSERT_NE(op.builtin_data, nullptr);
    }
  }
}

}  // namespace
}  // namespace kiln
