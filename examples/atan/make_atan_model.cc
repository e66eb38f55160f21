// Writes the sample model with Kiln's model writer: make_atan_model OUT.tflite
// The repo ships its output as examples/atan/atan.tflite; a test checks that the two stay identical.
#include <cstdio>

#include "atan_model.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_atan_model OUT.tflite\n");
    return 2;
  }
  const std::vector<uint8_t> bytes = kiln::examples::AtanModel(kiln::examples::kTrainedOffset, 0.0f);
  if (bytes.empty()) {
    std::fprintf(stderr, "make_atan_model: the model writer failed\n");
    return 1;
  }
  std::FILE* f = std::fopen(argv[1], "wb");
  if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "make_atan_model: cannot write %s\n", argv[1]);
    return 1;
  }
  std::printf("wrote %s (%zu bytes)\n", argv[1], bytes.size());
  return 0;
}
