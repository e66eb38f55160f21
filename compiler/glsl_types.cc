// How C types and constants are written in GLSL: registers, buffer storage and literals. Every part of the
// GPU lowering spells types through these, so that all of them agree.
#include "compiler/glsl_types.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "compiler/frontend.h"

namespace kiln {
namespace compiler {

Lane LaneOf(clang::QualType type) {
  Lane lane;
  clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (const auto* vector = t->getAs<clang::VectorType>()) {
    lane.count = vector->getNumElements();
    t = vector->getElementType().getCanonicalType();
  }
  if (const auto* enum_type = t->getAs<clang::EnumType>()) t = enum_type->getDecl()->getIntegerType();
  const auto* builtin = t->getAs<clang::BuiltinType>();
  if (!builtin || lane.count > 4) return lane;
  const KilnType scalar = ScalarKilnType(builtin);
  lane.ok = true;
  lane.is_bool = scalar == kKilnBool;
  lane.is_half = scalar == kKilnFloat16;
  lane.is_float = lane.is_half || scalar == kKilnFloat32 || scalar == kKilnFloat64;
  lane.is_signed =
      scalar == kKilnInt8 || scalar == kKilnInt16 || scalar == kKilnInt32 || scalar == kKilnInt64;
  switch (scalar) {
    case kKilnBool:
    case kKilnInt8:
    case kKilnUInt8:
      lane.bits = 8;
      break;
    case kKilnFloat16:
    case kKilnInt16:
    case kKilnUInt16:
      lane.bits = 16;
      break;
    case kKilnFloat32:
    case kKilnInt32:
    case kKilnUInt32:
      lane.bits = 32;
      break;
    case kKilnFloat64:
    case kKilnInt64:
    case kKilnUInt64:
      lane.bits = 64;
      break;
    default:
      lane.ok = false;
  }
  return lane;
}

std::string RegisterType(const Lane& lane) {
  std::string scalar, prefix;
  if (lane.is_bool) {
    scalar = "bool", prefix = "bvec";
  } else if (lane.is_float) {
    scalar = lane.bits == 64 ? "double" : "float";
    prefix = lane.bits == 64 ? "dvec" : "vec";
  } else if (lane.bits == 64) {
    scalar = lane.is_signed ? "int64_t" : "uint64_t";
    prefix = lane.is_signed ? "i64vec" : "u64vec";
  } else {
    scalar = lane.is_signed ? "int" : "uint";
    prefix = lane.is_signed ? "ivec" : "uvec";
  }
  return lane.count == 1 ? scalar : prefix + std::to_string(lane.count);
}

std::string ZeroOf(const Lane& lane) {
  std::string zero;
  if (lane.is_bool) {
    zero = "false";
  } else if (lane.is_float) {
    zero = lane.bits == 64 ? "0.0lf" : "0.0";
  } else if (lane.bits == 64) {
    zero = lane.is_signed ? "0l" : "0ul";
  } else {
    zero = lane.is_signed ? "0" : "0u";
  }
  return lane.count == 1 ? zero : RegisterType(lane) + "(" + zero + ")";
}

std::string FloatLiteral(double value, bool is_double) {
  if (std::isnan(value) || std::isinf(value)) {
    if (is_double) return "";
    uint32_t bits;
    const float f = static_cast<float>(value);
    std::memcpy(&bits, &f, 4);
    char text[48];
    std::snprintf(text, sizeof(text), "uintBitsToFloat(0x%08xu)", bits);
    return text;
  }
  char text[64];
  std::snprintf(text, sizeof(text), is_double ? "%.17g" : "%.9g", value);
  std::string s = text;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (is_double) s += "lf";
  return value < 0 || (value == 0 && std::signbit(value)) ? "(" + s + ")" : s;
}

std::string IntLiteral(const llvm::APSInt& value, const Lane& lane) {
  if (lane.is_bool) return value.getBoolValue() ? "true" : "false";
  if (lane.is_float) return FloatLiteral(static_cast<double>(value.getSExtValue()), lane.bits == 64);
  char text[48];
  if (lane.bits == 64) {
    if (lane.is_signed) {
      const int64_t v = value.getSExtValue();
      if (v == INT64_MIN) return "(-9223372036854775807l - 1l)";
      std::snprintf(text, sizeof(text), v < 0 ? "(%" PRId64 "l)" : "%" PRId64 "l", v);
    } else {
      std::snprintf(text, sizeof(text), "%" PRIu64 "ul", value.getZExtValue());
    }
  } else if (lane.is_signed) {
    const int64_t v = value.isSigned() ? value.getSExtValue() : static_cast<int64_t>(value.getZExtValue());
    const int32_t v32 = static_cast<int32_t>(v);
    if (v32 == INT32_MIN) return "(-2147483647 - 1)";
    std::snprintf(text, sizeof(text), v32 < 0 ? "(%d)" : "%d", v32);
  } else {
    std::snprintf(text, sizeof(text), "%uu", static_cast<uint32_t>(value.getZExtValue()));
  }
  return text;
}

bool StorageFor(clang::QualType type, const clang::ASTContext& context, Storage* s, std::string* why) {
  const Lane lane = LaneOf(type);
  if (!lane.ok) {
    *why = "element type '" + type.getAsString() + "' (only scalars and vectors have a GPU buffer layout)";
    return false;
  }
  if (lane.is_half) {
    *why = "element type '" + type.getAsString() + "' (half is not lowered to GLSL)";
    return false;
  }
  const uint32_t size = static_cast<uint32_t>(context.getTypeSizeInChars(type).getQuantity());
  const std::string reg = RegisterType(lane);
  if (lane.bits >= 32) {
    if (lane.count == 3) {
      Lane four = lane;
      four.count = 4;
      s->type = RegisterType(four);
      s->unit = size;
      s->load = "$.xyz";
      s->store = s->type + "($, " +
                 ZeroOf(Lane{true, false, lane.is_float, lane.is_signed, false, lane.bits, 1}) + ")";
    } else {
      s->type = reg;
      s->unit = size;
    }
    return true;
  }
  const bool sign = lane.is_signed;
  if (lane.bits == 8) {
    if (lane.count <= 2) {
      s->needs_8bit = true;
      s->unit = lane.count;
      const std::string storage =
          lane.count == 1 ? (sign ? "int8_t" : "uint8_t") : (sign ? "i8vec2" : "u8vec2");
      s->type = storage;
      if (lane.is_bool) {
        s->load = "(uint($) != 0u)";
        s->store = "uint8_t($ ? 1u : 0u)";
      } else {
        s->load = reg + "($)";
        s->store = storage + "($)";
      }
      return true;
    }
    s->type = "uint";
    s->unit = 4;
    s->load =
        std::string(sign ? "kiln_unpack_i8(" : "kiln_unpack_u8(") + "$)" + (lane.count == 3 ? ".xyz" : "");
    s->store = lane.count == 3 ? "kiln_pack_8(uvec4($, 0u))" : "kiln_pack_8(uvec4($))";
    return true;
  }
  // 16-bit integers.
  if (lane.count == 1) {
    s->needs_16bit = true;
    s->unit = 2;
    s->type = sign ? "int16_t" : "uint16_t";
    s->load = reg + "($)";
    s->store = s->type + "($)";
    return true;
  }
  const std::string unpack = sign ? "kiln_unpack_i16(" : "kiln_unpack_u16(";
  if (lane.count == 2) {
    s->type = "uint";
    s->unit = 4;
    s->load = unpack + "$)";
    s->store = "kiln_pack_16(uvec2($))";
    return true;
  }
  s->type = "uvec2";
  s->unit = 8;
  s->load = std::string(sign ? "ivec4(" : "uvec4(") + unpack + "$.x), " + unpack + "$.y))" +
            (lane.count == 3 ? ".xyz" : "");
  s->store = lane.count == 3 ? "uvec2(kiln_pack_16(uvec2($.xy)), kiln_pack_16(uvec2(uint($.z), 0u)))"
                             : "uvec2(kiln_pack_16(uvec2($.xy)), kiln_pack_16(uvec2($.zw)))";
  return true;
}

std::string Fill(const std::string& templ, const std::string& value) {
  std::string out;
  for (char c : templ) {
    if (c == '$') {
      out += value;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace compiler
}  // namespace kiln
