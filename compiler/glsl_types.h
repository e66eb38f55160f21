// The GPU lowering's view of C types: how a scalar or vector sits in GLSL registers and in a buffer, and how
// its constants are spelled. Shared by every part of the lowering (glsl_*.cc).
#ifndef KILN_COMPILER_GLSL_TYPES_H_
#define KILN_COMPILER_GLSL_TYPES_H_

#include <cstdint>
#include <string>

#include "clang/AST/ASTContext.h"
#include "clang/AST/Type.h"
#include "llvm/ADT/APSInt.h"

namespace kiln {
namespace compiler {

struct Lane {
  bool ok = false;
  bool is_bool = false;
  bool is_float = false;
  bool is_signed = false;
  bool is_half = false;
  unsigned bits = 0;
  unsigned count = 1;  // vector size, 1 for scalars
};

Lane LaneOf(clang::QualType type);

// The GLSL type that holds a value of `lane` in registers: 8- and 16-bit integers live in 32-bit ones, half
// values in floats (KernelLowering::Wrap rounds each operation's result to half, as the CPU's code does).
std::string RegisterType(const Lane& lane);

// Zero of a register type.
std::string ZeroOf(const Lane& lane);

// A float or double constant in GLSL; "" for an infinite or NaN double, which GLSL cannot spell.
std::string FloatLiteral(double value, bool is_double);

std::string IntLiteral(const llvm::APSInt& value, const Lane& lane);

// How a kernel input, output or allocation element of a type is stored in its buffer (kiln/spirv_abi.h,
// "Small element types"). `load` and `store` are templates: `$` is the buffer element or the value.
struct Storage {
  std::string type;
  uint32_t unit = 0;
  std::string load = "$";
  std::string store = "$";
  bool needs_8bit = false;
  bool needs_16bit = false;
};

bool StorageFor(clang::QualType type, const clang::ASTContext& context, Storage* s, std::string* why);

// `templ` with each `$` replaced by `value`.
std::string Fill(const std::string& templ, const std::string& value);

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_GLSL_TYPES_H_
