// Writes seed models for model_reader_fuzzer at build time: one valid model with every kind of quantization
// the reader checks, and one per check that fails it, so each smoke run starts at (and mutates around) those
// checks.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/builtin_ops.h"
#include "runtime/model/model_writer.h"

namespace {

struct Tensors {
  int x, filter, bias, u8, i16;
};

// x (int8 [1, 2, 3]) -> ADD(x, filter) -> y; plus a per-channel filter, a one-scale bias of shape [8] with
// quantized_dimension 3, a uint8 and an int16 tensor. `mutate` spoils one value before the model is written.
std::vector<uint8_t> Build(void (*mutate)(kiln::ModelWriter*, const Tensors&)) {
  kiln::ModelWriter w;
  w.set_unchecked(true);
  Tensors t;
  t.x = w.AddTensor(kKilnInt8, {1, 2, 3}, "x");
  t.filter = w.AddConstTensor<int8_t>(kKilnInt8, {1, 2, 3}, "filter", {1, -2, 3, -4, 5, -6});
  t.bias = w.AddConstTensor<int32_t>(kKilnInt32, {8}, "bias", std::vector<int32_t>(8, 3));
  t.u8 = w.AddTensor(kKilnUInt8, {1, 2, 3}, "u8");
  t.i16 = w.AddTensor(kKilnInt16, {1, 2, 3}, "i16");
  int y = w.AddTensor(kKilnInt8, {1, 2, 3}, "y");
  w.AddOp(kKilnBuiltinAdd, {t.x, t.filter}, {y}, KilnAddParams{kKilnActNone, false});
  w.SetInputs({t.x, t.u8, t.i16});
  w.SetOutputs({y});
  w.SetQuantization(t.x, {0.5f}, {-3});
  w.SetQuantization(t.filter, {0.25f, 0.125f, 0.0625f}, {0, 0, 0}, 2);
  w.SetQuantization(t.bias, {0.01f}, {0}, 3);
  w.SetQuantization(t.u8, {0.1f}, {128});
  w.SetQuantization(t.i16, {0.001f}, {0});
  w.SetQuantization(y, {0.5f}, {1});
  if (mutate != nullptr) mutate(&w, t);
  return w.Finish();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  using W = kiln::ModelWriter;
  struct Seed {
    const char* name;
    void (*mutate)(W*, const Tensors&);
  };
  const Seed seeds[] = {
      {"quantized_valid", nullptr},
      {"quantized_zero_scale", [](W* w, const Tensors& t) { w->SetQuantization(t.x, {0.0f}, {0}); }},
      {"quantized_nan_scale",
       [](W* w, const Tensors& t) {
         w->SetQuantization(t.filter, {0.25f, std::numeric_limits<float>::quiet_NaN(), 0.5f}, {0, 0, 0}, 2);
       }},
      {"quantized_int8_zero_point", [](W* w, const Tensors& t) { w->SetQuantization(t.x, {0.5f}, {128}); }},
      {"quantized_uint8_zero_point", [](W* w, const Tensors& t) { w->SetQuantization(t.u8, {0.1f}, {-1}); }},
      {"quantized_channel_count",
       [](W* w, const Tensors& t) {
         w->SetQuantization(t.filter, {0.25f, 0.5f}, {0, 0}, 2);
       }},
      {"quantized_zero_point_count",
       [](W* w, const Tensors& t) {
         w->SetQuantization(t.filter, {0.25f, 0.5f, 1.0f}, {0, 0}, 2);
       }},
      {"quantized_dimension",
       [](W* w, const Tensors& t) {
         w->SetQuantization(t.filter, {0.25f, 0.5f, 1.0f}, {0, 0, 0}, 5);
       }},
  };
  for (const Seed& seed : seeds) {
    const std::vector<uint8_t> bytes = Build(seed.mutate);
    const std::string path = std::string(argv[1]) + "/" + seed.name + ".tflite";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (bytes.empty() || f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      if (f != nullptr) std::fclose(f);
      return 1;
    }
    std::fclose(f);
  }
  return 0;
}
