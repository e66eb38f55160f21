// The harness of the operator wrapper tests: builds a ModelWriter model, runs it through the C API and
// collects the error reporter's messages.
#ifndef KILN_TESTS_OPS_WRAPPER_RUNNER_H_
#define KILN_TESTS_OPS_WRAPPER_RUNNER_H_

#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "runtime/model/model_writer.h"

namespace kiln::ops::wrapper_testing {

inline void CollectErrors(void* user_data, const char* format, va_list args) {
  char buffer[1024];
  vsnprintf(buffer, sizeof(buffer), format, args);
  *static_cast<std::string*>(user_data) += std::string(buffer) + "\n";
}

// Builds the model, creates an interpreter and allocates tensors; `status` tells how far it got.
class Runner {
 public:
  // `reference_kernels`: no host (XNNPACK) run, as for nodes with dynamic tensors.
  explicit Runner(ModelWriter& writer, bool reference_kernels = false) {
    bytes_ = writer.Finish();
    EXPECT_FALSE(bytes_.empty()) << writer.error();
    model_ = KilnModelCreate(bytes_.data(), bytes_.size());
    EXPECT_NE(model_, nullptr);
    KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetErrorReporter(options, &CollectErrors, &errors_);
    if (reference_kernels) KilnInterpreterOptionsSetUseReferenceKernels(options, true);
    interpreter_ = KilnInterpreterCreate(model_, options);
    KilnInterpreterOptionsDelete(options);
    EXPECT_NE(interpreter_, nullptr) << errors_;
    if (interpreter_ != nullptr) status_ = KilnInterpreterAllocateTensors(interpreter_);
  }
  ~Runner() {
    KilnInterpreterDelete(interpreter_);
    KilnModelDelete(model_);
  }

  KilnStatus status() const { return status_; }
  const std::string& errors() const { return errors_; }

  void SetInput(int index, const void* data, size_t bytes) {
    ASSERT_EQ(KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter_, index), data, bytes),
              kKilnOk);
  }
  KilnStatus Invoke() { return KilnInterpreterInvoke(interpreter_); }
  KilnInterpreter* interpreter() const { return interpreter_; }
  std::vector<int> OutputDims(int index = 0) const {
    const KilnTensor* t = KilnInterpreterGetOutputTensor(interpreter_, index);
    std::vector<int> dims(KilnTensorNumDims(t));
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = KilnTensorDim(t, static_cast<int32_t>(i));
    return dims;
  }
  // The output's elements as T (int8_t, int32_t, ...).
  template <typename T>
  std::vector<T> OutputAs(int index = 0) const {
    const KilnTensor* t = KilnInterpreterGetOutputTensor(interpreter_, index);
    std::vector<T> values(KilnTensorByteSize(t) / sizeof(T));
    if (!values.empty()) std::memcpy(values.data(), KilnTensorData(t), values.size() * sizeof(T));
    return values;
  }
  std::vector<float> Output(int index = 0) const {
    const KilnTensor* t = KilnInterpreterGetOutputTensor(interpreter_, index);
    std::vector<float> values(KilnTensorByteSize(t) / 4);
    if (!values.empty()) std::memcpy(values.data(), KilnTensorData(t), values.size() * 4);
    return values;
  }

 private:
  std::vector<uint8_t> bytes_;
  KilnModel* model_ = nullptr;
  KilnInterpreter* interpreter_ = nullptr;
  std::string errors_;
  KilnStatus status_ = kKilnError;
};

inline void ExpectErrorMentions(const Runner& r, const std::vector<std::string>& words) {
  EXPECT_NE(r.status(), kKilnOk);
  for (const std::string& w : words)
    EXPECT_NE(r.errors().find(w), std::string::npos) << w << " in: " << r.errors();
}

}  // namespace kiln::ops::wrapper_testing

#endif  // KILN_TESTS_OPS_WRAPPER_RUNNER_H_
