// Script globals on the GPU: the block layout every kernel of a script shares, reads of globals and
// constants, and the allocation globals (rsGetElementAt_*, rsSetElementAt_*, pointer globals) bound as
// buffers.
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "clang/AST/RecordLayout.h"
#include "compiler/glsl_lowering_internal.h"
#include "kiln/spirv_abi.h"

namespace kiln {
namespace compiler {

// The unit size an allocation global's binding uses; all GPU kernels of a module must agree.
bool ScriptLowering::ClaimAllocationUnit(const GlobalSlot& slot, uint32_t unit, std::string* why) {
  auto it = allocation_units_.find(slot.row);
  if (it == allocation_units_.end()) {
    allocation_units_[slot.row] = unit;
    return true;
  }
  if (it->second == unit) return true;
  *why = "allocation '" + info_->gpu.globals[slot.row].name + "' is read with " + std::to_string(unit) +
         "-byte units here but with " + std::to_string(it->second) + "-byte units by another GPU kernel";
  return false;
}

void ScriptLowering::LayOutGlobals() {
  uint32_t cursor = 0;
  int allocations = 0;
  for (const GlobalDesc& g : info_->module.globals) {
    auto it = vars_.find(g.name);
    if (it == vars_.end()) continue;
    const clang::VarDecl* var = it->second;
    GlobalSlot slot;
    GpuGlobalSlot row;
    row.name = g.name;
    const std::string member = "g_" + g.name;
    if (g.is_allocation) {
      if (allocations >= static_cast<int>(KILN_SPIRV_MAX_ALLOCATIONS)) {
        slot.why_not = "more than " + std::to_string(KILN_SPIRV_MAX_ALLOCATIONS) + " allocation globals";
        globals_[var] = slot;
        continue;
      }
      cursor = (cursor + 15) / 16 * 16;
      slot.allocation = true;
      slot.allocation_index = allocations++;
      slot.offset = cursor;
      slot.member = "KilnAllocationInfo " + member;
      slot.read = member;
      if (const auto* pointer = var->getType()->getAs<clang::PointerType>()) {
        slot.pointee = pointer->getPointeeType();
      }
      row.kind = KILN_SPIRV_GLOBAL_ALLOCATION;
      row.block_offset = cursor;
      row.unit_size = 1;  // until a kernel reads it (a unit of 1 divides every view)
      cursor += sizeof(KilnSpirvAllocationInfo);
    } else {
      const clang::QualType type = var->getType();
      clang::QualType element = type;
      std::string dims;
      while (const auto* array = context_.getAsConstantArrayType(element)) {
        dims += "[" + std::to_string(array->getSize().getZExtValue()) + "]";
        element = array->getElementType();
      }
      const Lane lane = LaneOf(element);
      uint32_t align = 4;
      if (element->getAs<clang::RecordType>()) {
        // handled below
      } else if (!lane.ok) {
        slot.why_not = "its type '" + type.getAsString() + "' has no GPU layout";
      }
      const bool is_struct = element->getAs<clang::RecordType>() != nullptr;
      if (!slot.why_not.empty()) {
        // no GPU form
      } else if (!is_struct && lane.bits >= 32) {
        slot.member = RegisterType(lane) + " " + member + dims;
        slot.read = member;
        const uint32_t lane_bytes = lane.bits / 8;
        align = lane_bytes * (lane.count == 1 ? 1 : (lane.count == 2 ? 2 : 4));
      } else if (is_struct && dims.empty()) {
        // A struct: its C bytes as uint words, each field rebuilt from them.
        const uint32_t words = (g.size + 3) / 4;
        slot.member = "uint " + member + "[" + std::to_string(words) + "]";
        if (!WordRead(type, 0, member, &slot.read, &slot.why_not)) slot.read.clear();
        slot.struct_type = type;
      } else if (!dims.empty()) {
        slot.why_not = "it is an array of 8- or 16-bit values or of structs";
      } else {
        // Packed into uint words and unpacked in the shader (bool, char, short, half and their vectors).
        const uint32_t words = (g.size + 3) / 4;
        slot.member = "uint " + member + "[" + std::to_string(words) + "]";
        if (!WordRead(type, 0, member, &slot.read, &slot.why_not)) slot.read.clear();
      }
      if (slot.why_not.empty()) {
        cursor = (cursor + align - 1) / align * align;
        slot.offset = cursor;
        row.kind = KILN_SPIRV_GLOBAL_VALUE;
        row.size = g.size;
        row.block_offset = cursor;
        cursor += g.size;
      }
    }
    if (!slot.why_not.empty()) {
      globals_[var] = slot;
      continue;
    }
    slot.row = static_cast<int>(info_->gpu.globals.size());
    info_->gpu.globals.push_back(row);
    globals_[var] = slot;
  }
  block_size_ = cursor;
}

bool ScriptLowering::WordRead(clang::QualType type, uint32_t offset, const std::string& words,
                              std::string* out, std::string* why, const std::string& base, bool call) {
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    const uint64_t n = array->getSize().getZExtValue();
    const uint32_t stride =
        static_cast<uint32_t>(context_.getTypeSizeInChars(array->getElementType()).getQuantity());
    if (n > 64) {
      *why = "it holds an array of more than 64 elements inside a struct";
      return false;
    }
    std::string element_type;
    std::string parts;
    for (uint64_t i = 0; i < n; ++i) {
      std::string part;
      if (!WordRead(array->getElementType(), offset + static_cast<uint32_t>(i) * stride, words, &part, why, base,
                    call)) {
        return false;
      }
      parts += (i ? ", " : "") + part;
    }
    if (!TypeName(t, &element_type, why)) return false;
    *out = element_type + "(" + parts + ")";
    return true;
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    const clang::RecordDecl* decl = record->getDecl()->getDefinition();
    if (!decl || decl->isUnion()) {
      *why = "it is a union or incomplete struct";
      return false;
    }
    const clang::ASTRecordLayout& layout = context_.getASTRecordLayout(decl);
    std::string parts;
    for (const clang::FieldDecl* field : decl->fields()) {
      if (field->isBitField()) {
        *why = "it has a bit-field";
        return false;
      }
      std::string part;
      const uint32_t field_offset =
          offset + static_cast<uint32_t>(layout.getFieldOffset(field->getFieldIndex()) / 8);
      if (!WordRead(field->getType(), field_offset, words, &part, why, base, call)) return false;
      parts += (parts.empty() ? "" : ", ") + part;
    }
    *out = StructName(decl) + "(" + parts + ")";
    return true;
  }
  const Lane lane = LaneOf(t);
  if (!lane.ok || lane.bits == 64) {
    *why = "it holds a '" + type.getAsString() + "' field (no word layout for it)";
    return false;
  }
  std::vector<std::string> lanes;
  const uint32_t bytes = lane.bits / 8;
  for (uint32_t i = 0; i < lane.count; ++i) {
    const uint32_t byte = offset + i * bytes;
    std::string index = std::to_string(byte / 4) + (call ? "u" : "");
    if (!base.empty()) index = base + " + " + index;
    const std::string word = words + (call ? "(" + index + ")" : "[" + index + "]");
    const std::string shift = std::to_string((byte % 4) * 8);
    if (lane.bits == 32) {
      lanes.push_back(lane.is_float ? "uintBitsToFloat(" + word + ")"
                                    : (lane.is_signed ? "int(" + word + ")" : word));
    } else if (lane.is_half) {
      lanes.push_back("unpackHalf2x16(" + word + " >> " + shift + "u).x");  // exact
    } else if (lane.is_bool) {
      lanes.push_back("(bitfieldExtract(" + word + ", " + shift + ", 8) != 0u)");
    } else if (lane.is_signed) {
      lanes.push_back("bitfieldExtract(int(" + word + "), " + shift + ", " + std::to_string(lane.bits) + ")");
    } else {
      lanes.push_back("bitfieldExtract(" + word + ", " + shift + ", " + std::to_string(lane.bits) + ")");
    }
  }
  if (lane.count == 1) {
    *out = lanes[0];
  } else {
    *out = RegisterType(lane) + "(";
    for (size_t i = 0; i < lanes.size(); ++i) *out += (i ? ", " : "") + lanes[i];
    *out += ")";
  }
  return true;
}

// The GLSL spelling of an array type (for constructors), e.g. "float[3]" or "S_Point[2]".
bool ScriptLowering::TypeName(clang::QualType type, std::string* out, std::string* why) {
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    std::string element;
    if (!TypeName(array->getElementType(), &element, why)) return false;
    const size_t bracket = element.find('[');
    const std::string dim = "[" + std::to_string(array->getSize().getZExtValue()) + "]";
    *out = bracket == std::string::npos ? element + dim
                                        : element.substr(0, bracket) + dim + element.substr(bracket);
    return true;
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    *out = StructName(record->getDecl());
    return true;
  }
  const Lane lane = LaneOf(t);
  if (!lane.ok) {
    *why = "it holds a '" + type.getAsString() + "'";
    return false;
  }
  *out = RegisterType(lane);
  return true;
}

void KernelLowering::UseGlobal(const clang::VarDecl* var) {
  globals_used_.insert(var->getCanonicalDecl());
  script_->NoteGlobalRead();
}

std::string KernelLowering::VarRef(const clang::VarDecl* var, clang::SourceLocation loc) {
  if (!var->hasGlobalStorage()) {
    if (!locals_.count(var)) Fail(loc, "a variable kilnc did not declare ('" + var->getNameAsString() + "')");
    return locals_[var];
  }
  if (var->isStaticLocal()) Fail(loc, "a static local variable ('" + var->getNameAsString() + "')");
  const clang::VarDecl* canonical = var->getCanonicalDecl();
  GlobalSlot* slot = script_->FindGlobal(canonical);
  const bool is_const = var->getType().isConstQualified();
  // Constants (const globals, and static globals nothing writes) are folded into the shader.
  if (is_const || (!slot && !script_->IsWritten(canonical))) {
    auto it = constants_.find(canonical);
    if (it != constants_.end()) return it->second;
    const clang::VarDecl* definition = var->getDefinition() ? var->getDefinition() : var;
    const clang::APValue* value = definition->getInit() ? definition->evaluateValue() : nullptr;
    const std::string name = "c_" + var->getNameAsString();
    std::string init;
    if (value) {
      init = ValueLiteral(*value, var->getType(), loc);
    } else if (!definition->getInit()) {
      init = Zero(var->getType(), loc);
    } else {
      Fail(loc, "global '" + var->getNameAsString() + "', whose initializer is not a constant");
    }
    constant_text_.push_back("const " + Declare(var->getType(), name, loc) + " = " + init + ";\n");
    constants_[canonical] = name;
    return name;
  }
  if (!slot) {
    Fail(loc, "static global '" + var->getNameAsString() +
                  "', which the script writes and which holds an object handle or pointer (only plain data is "
                  "carried to the GPU)");
  }
  if (!slot->why_not.empty()) Fail(loc, "global '" + var->getNameAsString() + "': " + slot->why_not);
  if (slot->allocation) {
    Fail(loc, "allocation global '" + var->getNameAsString() +
                  "' used other than through rsGetElementAt_*/rsSetElementAt_*/rsAllocationGetDim*");
  }
  UseGlobal(canonical);
  if (!slot->struct_type.isNull()) Type(slot->struct_type, loc);  // emits the struct definitions it builds
  return slot->read;
}

// GPU kernels see script globals read-only (kiln/spirv_abi.h: globals are snapshotted per launch).
void KernelLowering::CheckWritable(const clang::Expr* target, clang::SourceLocation loc) {
  UsrPlace place;
  if (UsrPlaceOf(target, &place)) Fail(loc, "a write through usrData (the GPU form only reads it)");
  const clang::Expr* e = target;
  for (int depth = 0; e && depth < 64; ++depth) {
    e = e->IgnoreParenImpCasts();
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
      const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
      if (var && var->hasGlobalStorage()) {
        Fail(loc, "a write to script global '" + var->getNameAsString() +
                      "' (on the GPU, kernels read globals and cannot write them)");
      }
      return;
    }
    if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(e)) {
      e = member->getBase();
    } else if (const auto* subscript = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
      e = subscript->getBase();
    } else if (const auto* swizzle = llvm::dyn_cast<clang::ExtVectorElementExpr>(e)) {
      e = swizzle->getBase();
    } else {
      return;
    }
  }
}

std::string KernelLowering::Allocation(const clang::Expr* arg, clang::SourceLocation loc, GlobalSlot** slot) {
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(arg->IgnoreParenImpCasts());
  const clang::VarDecl* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
  if (!var || !var->hasGlobalStorage()) {
    Fail(loc, "an rs_allocation that is not a script global (parameters and locals cannot name GPU buffers)");
  }
  *slot = script_->FindGlobal(var->getCanonicalDecl());
  if (!*slot || !(*slot)->allocation) {
    Fail(loc, "allocation '" + var->getNameAsString() + "', which has no GPU binding" +
                  (*slot && !(*slot)->why_not.empty() ? ": " + (*slot)->why_not : ""));
  }
  UseGlobal(var->getCanonicalDecl());
  needs_allocation_info_ = true;
  return var->getNameAsString();
}

std::string KernelLowering::AllocationAccessor(GlobalSlot* slot, const clang::VarDecl* var,
                                               clang::QualType element, bool write,
                                               clang::SourceLocation loc) {
  Storage storage;
  std::string why;
  if (!StorageFor(element, context_, &storage, &why)) Fail(loc, "an allocation of " + why);
  NoteStorage(storage);
  if (!script_->ClaimAllocationUnit(*slot, storage.unit, &why)) Fail(loc, why);
  AllocationUse& use = allocations_[slot->allocation_index];
  if (!use.storage_type.empty() && use.storage_type != storage.type) {
    Fail(loc,
         "allocation '" + var->getNameAsString() + "' read as two different element types in one kernel");
  }
  use.storage_type = storage.type;
  use.write = use.write || write;
  for (const char* helper : {"kiln_unpack_u8", "kiln_unpack_i8", "kiln_pack_8", "kiln_unpack_u16",
                             "kiln_unpack_i16", "kiln_pack_16"}) {
    if (storage.load.find(helper) != std::string::npos || storage.store.find(helper) != std::string::npos) {
      Use(helper);
    }
  }
  const std::string reg = Type(element, loc);
  const std::string buffer = "a" + std::to_string(slot->allocation_index);
  const std::string info = slot->read;
  const uint32_t size = static_cast<uint32_t>(context_.getTypeSizeInChars(element).getQuantity());
  const std::string name = std::string(write ? "kiln_set_" : "kiln_get_") + var->getNameAsString() + "_" +
                           std::to_string(size) + "_" +
                           (reg == storage.type ? reg : storage.type + "_" + reg);
  std::string sanitized;
  for (char c : name) sanitized += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (accessors_.count(sanitized)) return sanitized;
  // rsGetElementAt on the GPU (kiln/spirv_abi.h, "Faults"): out-of-range coordinates or a different element
  // size read zero and write nothing, and record a fault, so that the driver fails the launch as the CPU
  // driver does.
  needs_fault_ = true;
  const std::string report = "kiln_fault_report(" + std::string(write ? "2u" : "1u") + ", " +
                             std::to_string(slot->allocation_index) + "u, x, y, z, " + std::to_string(size) +
                             "u)";
  std::string text;
  const std::string check = "x >= " + info + ".dim_x || y >= max(" + info + ".dim_y, 1u) || z >= max(" +
                            info + ".dim_z, 1u) || " + info + ".element_size != " + std::to_string(size) +
                            "u";
  const std::string index = info + ".offset + x * (" + info + ".element_size / " + info +
                            ".unit_size) + y * " + info + ".stride_y + z * " + info + ".stride_z";
  if (write) {
    text = "void " + sanitized + "(" + reg + " v, uint x, uint y, uint z) {\n  if (" + check + ") {\n    " +
           report + ";\n    return;\n  }\n  " + buffer + "[" + index + "] = " + Fill(storage.store, "v") +
           ";\n}\n";
  } else {
    text = reg + " " + sanitized + "(uint x, uint y, uint z) {\n  if (" + check + ") {\n    " + report +
           ";\n    return " + Zero(element, loc) + ";\n  }\n  return " +
           Fill(storage.load, buffer + "[" + index + "]") + ";\n}\n";
  }
  accessors_[sanitized] = text;
  accessor_order_.push_back(sanitized);
  return sanitized;
}

// p[i] on a pointer global bound to an allocation (rsBind): element i of the allocation's packed data, as
// the CPU reads it; i past the last element reads zero.
std::string KernelLowering::PointerRead(const clang::VarDecl* var, const clang::Expr* index,
                                        clang::SourceLocation loc) {
  GlobalSlot* slot = script_->FindGlobal(var->getCanonicalDecl());
  if (!slot || !slot->allocation || slot->pointee.isNull()) {
    Fail(loc, "pointer global '" + var->getNameAsString() + "', which has no GPU binding");
  }
  UseGlobal(var->getCanonicalDecl());
  needs_allocation_info_ = true;
  const clang::QualType element = slot->pointee.getUnqualifiedType();
  Storage storage;
  std::string why;
  if (!StorageFor(element, context_, &storage, &why)) Fail(loc, "a pointer global to " + why);
  NoteStorage(storage);
  if (!script_->ClaimAllocationUnit(*slot, storage.unit, &why)) Fail(loc, why);
  AllocationUse& use = allocations_[slot->allocation_index];
  if (!use.storage_type.empty() && use.storage_type != storage.type) {
    Fail(loc, "pointer global '" + var->getNameAsString() + "' read as two different element types");
  }
  use.storage_type = storage.type;
  for (const char* helper : {"kiln_unpack_u8", "kiln_unpack_i8", "kiln_unpack_u16", "kiln_unpack_i16"}) {
    if (storage.load.find(helper) != std::string::npos) Use(helper);
  }
  const std::string reg = Type(element, loc);
  const std::string info = slot->read;
  const uint32_t size = static_cast<uint32_t>(context_.getTypeSizeInChars(element).getQuantity());
  const std::string name = "kiln_read_" + var->getNameAsString();
  if (!accessors_.count(name)) {
    needs_fault_ = true;
    const std::string count = info + ".dim_x * max(" + info + ".dim_y, 1u) * max(" + info + ".dim_z, 1u)";
    accessors_[name] =
        reg + " " + name + "(uint i) {\n  if (i >= " + count + " || " + info +
        ".element_size != " + std::to_string(size) + "u) {\n    kiln_fault_report(1u, " +
        std::to_string(slot->allocation_index) + "u, i, 0u, 0u, " + std::to_string(size) +
        "u);\n    return " + Zero(element, loc) + ";\n  }\n  return " +
        Fill(storage.load, "a" + std::to_string(slot->allocation_index) + "[" + info + ".offset + i * (" +
                               info + ".element_size / " + info + ".unit_size)]") +
        ";\n}\n";
    accessor_order_.push_back(name);
  }
  const Lane lane = LaneOf(index->getType());
  std::string i = Expr(index);
  if (lane.bits == 64 || lane.is_signed) i = "uint(" + i + ")";
  return name + "(" + i + ")";
}

}  // namespace compiler
}  // namespace kiln
