// How C types and constants are written in GLSL: registers, buffer storage, literals, struct definitions and
// conversions. Every part of the GPU lowering spells types through these, so that all of them agree.
#include "compiler/glsl_types.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "compiler/frontend.h"
#include "compiler/glsl_lowering_internal.h"

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
  if (lane.is_half) {
    // 16-bit storage holds half vectors as they are (a half3 takes the room of a half4, as in C); registers
    // are floats holding half values, so both conversions are exact.
    s->needs_16bit = true;
    s->unit = lane.count == 3 ? 8 : 2 * lane.count;
    const std::string n = std::to_string(lane.count == 3 ? 4 : lane.count);
    s->type = lane.count == 1 ? "float16_t" : "f16vec" + n;
    const std::string wide = lane.count == 1 ? "float" : "vec" + n;
    s->load = wide + "($)" + (lane.count == 3 ? ".xyz" : "");
    s->store = lane.count == 3 ? "f16vec4(vec4($, 0.0))" : s->type + "($)";
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

// One GLSL name per struct type of the script, the same in every kernel (global reads construct them).
std::string ScriptLowering::StructName(const clang::RecordDecl* record) {
  record = record->getDefinition() ? record->getDefinition() : record;
  auto it = struct_names_.find(record);
  if (it != struct_names_.end()) return it->second;
  const std::string name = record->getName().empty() ? "S_anon" + std::to_string(struct_names_.size())
                                                     : "S_" + record->getNameAsString();
  struct_names_[record] = name;
  return name;
}

std::string KernelLowering::StructName(const clang::RecordDecl* record, clang::SourceLocation loc) {
  record = record->getDefinition();
  if (!record) Fail(loc, "an incomplete struct type");
  auto it = struct_names_.find(record);
  if (it != struct_names_.end()) return it->second;
  if (record->isUnion()) Fail(loc, "a union ('" + record->getNameAsString() + "'), which GLSL lacks");
  const std::string name = script_->StructName(record);
  struct_names_[record] = name;
  std::string text = "struct " + name + " {\n";
  for (const clang::FieldDecl* field : record->fields()) {
    if (field->isBitField()) Fail(field->getLocation(), "a bit-field ('" + field->getNameAsString() + "')");
    text += "  " + Declare(field->getType(), "f_" + field->getNameAsString(), field->getLocation()) + ";\n";
  }
  if (record->field_empty()) Fail(loc, "an empty struct");
  text += "};\n";
  struct_text_.push_back(text);
  return name;
}

std::string KernelLowering::Type(clang::QualType type, clang::SourceLocation loc) {
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (t->isVoidType()) return "void";
  if (context_.getAsConstantArrayType(t)) {
    std::string dims;
    clang::QualType element = t;
    while (const auto* array = context_.getAsConstantArrayType(element)) {
      dims += "[" + std::to_string(array->getSize().getZExtValue()) + "]";
      element = array->getElementType();
    }
    return Type(element, loc) + dims;
  }
  if (t->isPointerType()) Fail(loc, "a pointer ('" + type.getAsString() + "'), which GLSL lacks");
  if (t->isArrayType()) Fail(loc, "an array of unknown size");
  if (const auto* record = t->getAs<clang::RecordType>()) {
    const std::string name = record->getDecl()->getName().str();
    if (name == "rs_allocation" || name == "rs_element" || name == "rs_type" || name == "rs_script" ||
        name == "rs_tm") {
      Fail(loc, "a value of type '" + name + "' (only script globals can be used as allocations on the GPU)");
    }
    return StructName(record->getDecl(), loc);
  }
  const Lane lane = LaneOf(t);
  if (!lane.ok) Fail(loc, "the type '" + type.getAsString() + "'");
  if (lane.bits == 64 && !lane.is_float) needs_int64_ = true;
  return RegisterType(lane);
}

std::string KernelLowering::Declare(clang::QualType type, const std::string& name,
                                    clang::SourceLocation loc) {
  const std::string full = Type(type, loc);
  const size_t bracket = full.find('[');
  if (bracket == std::string::npos) return full + " " + name;
  return full.substr(0, bracket) + " " + name + full.substr(bracket);
}

std::string KernelLowering::Zero(clang::QualType type, clang::SourceLocation loc) {
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    const std::string element = Zero(array->getElementType(), loc);
    const uint64_t n = array->getSize().getZExtValue();
    std::string out = Type(t, loc) + "(";
    for (uint64_t i = 0; i < n; ++i) out += (i ? ", " : "") + element;
    return out + ")";
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    std::string out = Type(t, loc) + "(";
    bool first = true;
    for (const clang::FieldDecl* field : record->getDecl()->getDefinition()->fields()) {
      out += (first ? "" : ", ") + Zero(field->getType(), loc);
      first = false;
    }
    return out + ")";
  }
  Type(t, loc);  // fails for what GLSL cannot hold
  return ZeroOf(LaneOf(t));
}

std::string KernelLowering::ValueLiteral(const clang::APValue& value, clang::QualType type,
                                         clang::SourceLocation loc) {
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    if (!value.isArray()) Fail(loc, "a constant that kilnc cannot evaluate");
    const uint64_t n = array->getSize().getZExtValue();
    std::string out = Type(t, loc) + "(";
    for (uint64_t i = 0; i < n; ++i) {
      const clang::APValue& element = i < value.getArrayInitializedElts()
                                          ? value.getArrayInitializedElt(static_cast<unsigned>(i))
                                          : value.getArrayFiller();
      out += (i ? ", " : "") + ValueLiteral(element, array->getElementType(), loc);
    }
    return out + ")";
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    if (!value.isStruct()) Fail(loc, "a constant that kilnc cannot evaluate");
    std::string out = Type(t, loc) + "(";
    unsigned i = 0;
    for (const clang::FieldDecl* field : record->getDecl()->getDefinition()->fields()) {
      out += (i ? ", " : "") + ValueLiteral(value.getStructField(i), field->getType(), loc);
      ++i;
    }
    return out + ")";
  }
  const Lane lane = LaneOf(t);
  Type(t, loc);
  auto scalar = [&](const clang::APValue& v) -> std::string {
    if (v.isInt())
      return IntLiteral(v.getInt(),
                        Lane{true, lane.is_bool, lane.is_float, lane.is_signed, false, lane.bits, 1});
    if (v.isFloat()) {
      const bool is_double = lane.bits == 64;
      // A half constant widens exactly to float, the register that holds half values.
      llvm::APFloat f = v.getFloat();
      bool lost = false;
      if (!is_double) f.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lost);
      const double d = is_double ? f.convertToDouble() : f.convertToFloat();
      const std::string text = FloatLiteral(d, is_double);
      if (text.empty()) Fail(loc, "an infinite or NaN double constant");
      return text;
    }
    Fail(loc, "a constant that kilnc cannot evaluate");
  };
  if (lane.count == 1) return scalar(value);
  if (!value.isVector()) Fail(loc, "a constant that kilnc cannot evaluate");
  std::string out = RegisterType(lane) + "(";
  for (unsigned i = 0; i < lane.count; ++i) out += (i ? ", " : "") + scalar(value.getVectorElt(i));
  return out + ")";
}

// C truncates a value stored into an 8- or 16-bit integer; registers are 32-bit, so wrap explicitly. A half
// value lives in a float register: round it to half (kiln_h, round to nearest even with integer operations, the
// same on every device).
std::string KernelLowering::Wrap(const std::string& text, clang::QualType type) {
  const Lane lane = LaneOf(type);
  if (lane.ok && lane.is_half) {
    Use("kiln_h");
    if (lane.count > 1) Use("kiln_h#vec");
    return "kiln_h(" + text + ")";
  }
  if (!lane.ok || lane.is_bool || lane.is_float || lane.bits >= 32) return text;
  const std::string bits = std::to_string(lane.bits);
  if (lane.is_signed) return "bitfieldExtract(" + text + ", 0, " + bits + ")";
  return "(" + text + (lane.bits == 8 ? " & 255u)" : " & 65535u)");
}

std::string KernelLowering::ToBool(const std::string& text, clang::QualType type, clang::SourceLocation loc) {
  const Lane lane = LaneOf(type);
  if (!lane.ok || lane.count != 1) Fail(loc, "a condition of type '" + type.getAsString() + "'");
  if (lane.is_bool) return text;
  return "(" + text + " != " + ZeroOf(lane) + ")";
}

std::string KernelLowering::Convert(const std::string& text, clang::QualType from, clang::QualType to,
                                    clang::SourceLocation loc) {
  const Lane src = LaneOf(from);
  const Lane dst = LaneOf(to);
  if (!src.ok || !dst.ok)
    Fail(loc, "a conversion from '" + from.getAsString() + "' to '" + to.getAsString() + "'");
  const std::string dst_type = Type(to, loc);
  Type(from, loc);
  if (dst.is_bool && dst.count == 1) return ToBool(text, from, loc);
  if (RegisterType(src) == RegisterType(dst) && src.count == dst.count) {
    // Same register type: only narrowing to a smaller integer changes the value.
    return (dst.bits < src.bits || src.is_signed != dst.is_signed) ? Wrap(text, to) : text;
  }
  return Wrap(dst_type + "(" + text + ")", to);
}

}  // namespace compiler
}  // namespace kiln
