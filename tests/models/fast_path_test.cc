// The fast path (the XNNPACK host engine) against the reference kernels, on every model in ../shared/models:
// the same seeded inputs through an interpreter with the default options and one with
// KilnInterpreterOptionsSetUseReferenceKernels, outputs equal within 1e-4 relative to the output's scale:
// |fast - reference| <= 1e-4 * (|reference| + max |reference| over the output tensor). The second term keeps
// the bound meaningful for values near zero: after tens of layers summed in another order (XNNPACK's GEMMs
// block and vectorise the sums), a value that is a small difference of large ones moves in its own relative
// terms (0.0024305 vs 0.0024310 on face detection) while its error against the output's scale stays near
// 1e-6. A model Kiln cannot run at all (an op it does not implement) is skipped with the reason; one it runs
// on one path only fails. Also: 1, 2 and all threads give the same answers.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "tests/test_util.h"

namespace kiln {
namespace {

struct Outputs {
  bool ran = false;
  std::string errors;
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<KilnType> types;
};

// Seeded inputs: floats uniform in [-1, 1], integers over a small range, the same for every run of a model.
void FillInputs(KilnInterpreter* interpreter, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int i = 0; i < KilnInterpreterGetInputTensorCount(interpreter); ++i) {
    KilnTensor* t = KilnInterpreterGetInputTensor(interpreter, i);
    const size_t bytes = KilnTensorByteSize(t);
    std::vector<uint8_t> data(bytes);
    if (KilnTensorType(t) == kKilnFloat32) {
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      for (size_t k = 0; k < bytes / 4; ++k) {
        const float v = dist(rng);
        std::memcpy(&data[k * 4], &v, 4);
      }
    } else {
      std::uniform_int_distribution<int> dist(0, 15);
      for (uint8_t& b : data) b = static_cast<uint8_t>(dist(rng));
    }
    KilnTensorCopyFromBuffer(t, data.data(), bytes);
  }
}

Outputs RunModel(const std::string& path, bool reference, int threads) {
  Outputs out;
  KilnModel* model =
      KilnModelCreateFromFileWithErrorReporter(path.c_str(), testing::CollectErrors, &out.errors);
  if (model == nullptr) return out;
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, testing::CollectErrors, &out.errors);
  KilnInterpreterOptionsSetUseReferenceKernels(options, reference);
  KilnInterpreterOptionsSetNumThreads(options, threads);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  if (interpreter != nullptr && KilnInterpreterAllocateTensors(interpreter) == kKilnOk) {
    FillInputs(interpreter, 1234);
    if (KilnInterpreterInvoke(interpreter) == kKilnOk) {
      out.ran = true;
      for (int i = 0; i < KilnInterpreterGetOutputTensorCount(interpreter); ++i) {
        const KilnTensor* t = KilnInterpreterGetOutputTensor(interpreter, i);
        const uint8_t* data = static_cast<const uint8_t*>(KilnTensorData(t));
        out.bytes.emplace_back(data, data + KilnTensorByteSize(t));
        out.types.push_back(KilnTensorType(t));
      }
    }
  }
  KilnInterpreterDelete(interpreter);
  KilnModelDelete(model);
  return out;
}

void ExpectSame(const std::string& what, const Outputs& got, const Outputs& want) {
  ASSERT_EQ(got.bytes.size(), want.bytes.size()) << what;
  for (size_t o = 0; o < got.bytes.size(); ++o) {
    ASSERT_EQ(got.bytes[o].size(), want.bytes[o].size()) << what << ", output " << o;
    if (got.types[o] != kKilnFloat32) {
      EXPECT_EQ(got.bytes[o], want.bytes[o]) << what << ", output " << o;
      continue;
    }
    const size_t n = got.bytes[o].size() / 4;
    std::vector<float> a(n), b(n);
    std::memcpy(a.data(), got.bytes[o].data(), n * 4);
    std::memcpy(b.data(), want.bytes[o].data(), n * 4);
    size_t bad = 0;
    double worst = 0, scale = 0;
    for (size_t k = 0; k < n; ++k) scale = std::max(scale, std::fabs(static_cast<double>(b[k])));
    for (size_t k = 0; k < n; ++k) {
      const double diff = std::fabs(static_cast<double>(a[k]) - b[k]);
      worst = std::max(worst, diff);
      if (!(diff <= 1e-4 * (std::fabs(b[k]) + scale)) && bad++ < 3) {
        ADD_FAILURE() << what << ", output " << o << "[" << k << "]: " << a[k] << " vs reference " << b[k];
      }
    }
    EXPECT_EQ(bad, 0u) << what << ", output " << o << ": " << bad << " of " << n
                       << " elements outside the bound (largest difference " << worst << ", output scale "
                       << scale << ")";
    std::printf("%s, output %zu: largest difference %.3g, %.3g of the output's scale\n", what.c_str(), o,
                worst, scale > 0 ? worst / scale : worst);
  }
}

std::vector<std::string> SharedModels() {
  std::vector<std::string> names;
  if (DIR* dir = opendir(KILN_MODELS_DIR)) {
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name.size() > 7 && name.compare(name.size() - 7, 7, ".tflite") == 0) names.push_back(name);
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) names.push_back("(no models)");  // one instance, which skips with the reason
  return names;
}

class FastPathTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FastPathTest, MatchesTheReferenceKernels) {
  KILN_REQUIRE_MODELS();
  const std::string path = testing::ModelPath(GetParam());
  const Outputs reference = RunModel(path, true, 1);
  const Outputs fast = RunModel(path, false, 1);
  if (!reference.ran && !fast.ran)
    GTEST_SKIP() << GetParam() << ": Kiln does not run it: " << reference.errors;
  ASSERT_TRUE(reference.ran) << "only the fast path runs " << GetParam() << ": " << reference.errors;
  ASSERT_TRUE(fast.ran) << "only the reference kernels run " << GetParam() << ": " << fast.errors;
  ExpectSame(GetParam() + ", fast path, 1 thread", fast, reference);
  ExpectSame(GetParam() + ", fast path, 2 threads", RunModel(path, false, 2), reference);
  ExpectSame(GetParam() + ", fast path, every core", RunModel(path, false, -1), reference);
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.find('.'));
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(SharedModels, FastPathTest, ::testing::ValuesIn(SharedModels()), TestName);

}  // namespace
}  // namespace kiln
