// Helpers shared by the model tests.
#ifndef KILN_TESTS_MODEL_MODEL_TEST_UTIL_H_
#define KILN_TESTS_MODEL_MODEL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/model/model.h"

namespace kiln::testing {

// Reads `bytes`, expecting failure; returns the error message.
inline std::string ReadError(const std::vector<uint8_t>& bytes) {
  ModelDesc model;
  std::string error;
  bool ok = ReadModel(bytes.data(), bytes.size(), &model, &error);
  EXPECT_FALSE(ok) << "the model was accepted";
  EXPECT_FALSE(error.empty());
  // A failed read leaves nothing half-filled behind.
  EXPECT_TRUE(model.subgraphs.empty());
  return error;
}

}  // namespace kiln::testing

// Expects reading `bytes` to fail with a message that contains `substring`.
#define EXPECT_MODEL_ERROR(bytes, substring)                                                \
  do {                                                                                      \
    std::string kiln_error_ = ::kiln::testing::ReadError(bytes);                            \
    EXPECT_NE(kiln_error_.find(substring), std::string::npos)                               \
        << "error message: " << kiln_error_ << "\nexpected it to contain: " << (substring); \
  } while (0)

#endif  // KILN_TESTS_MODEL_MODEL_TEST_UTIL_H_
