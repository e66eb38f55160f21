// The analysis pass's reflection: the kernels, reductions, invokables and globals a script exports, with the
// types the host sees and the signatures it may call, each checked where it is declared.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "clang/AST/Attr.h"
#include "clang/AST/RecordLayout.h"
#include "compiler/analyzer.h"
#include "compiler/frontend.h"
#include "compiler/global_writes.h"

namespace kiln {
namespace compiler {

KilnType ScalarKilnType(const clang::BuiltinType* type) {
  switch (type->getKind()) {
    case clang::BuiltinType::Float:
      return kKilnFloat32;
    case clang::BuiltinType::Double:
      return kKilnFloat64;
    case clang::BuiltinType::Half:
    case clang::BuiltinType::Float16:
      return kKilnFloat16;
    case clang::BuiltinType::Char_S:
    case clang::BuiltinType::SChar:
      return kKilnInt8;
    case clang::BuiltinType::Char_U:
    case clang::BuiltinType::UChar:
      return kKilnUInt8;
    case clang::BuiltinType::Short:
      return kKilnInt16;
    case clang::BuiltinType::UShort:
      return kKilnUInt16;
    case clang::BuiltinType::Int:
      return kKilnInt32;
    case clang::BuiltinType::UInt:
      return kKilnUInt32;
    case clang::BuiltinType::Long:
    case clang::BuiltinType::LongLong:
      return kKilnInt64;
    case clang::BuiltinType::ULong:
    case clang::BuiltinType::ULongLong:
      return kKilnUInt64;
    case clang::BuiltinType::Bool:
      return kKilnBool;
    default:
      return kKilnNoType;
  }
}

namespace {

bool IsRecordNamed(clang::QualType type, llvm::StringRef name) {
  const clang::RecordType* record = type.getCanonicalType()->getAs<clang::RecordType>();
  return record && record->getDecl()->getName() == name;
}

bool IsObjectHandle(clang::QualType type) {
  return IsRecordNamed(type, "rs_element") || IsRecordNamed(type, "rs_type") ||
         IsRecordNamed(type, "rs_script");  // rs_sampler is plain data in Kiln (rs_core.rsh)
}

}  // namespace

// Describes a type for the reflection; reports and returns false for types a script cannot export.
bool Analyzer::Describe(clang::QualType type, KernelTypeDesc* out, int depth) {
  *out = KernelTypeDesc();
  out->name = Spelling(type);
  const clang::QualType canonical = type.getCanonicalType().getUnqualifiedType();
  if (canonical->isVoidType()) return true;
  if (canonical->isIncompleteType() || depth > 8) return false;
  out->size = static_cast<uint32_t>(context_.getTypeSizeInChars(canonical).getQuantity());
  out->alignment = static_cast<uint32_t>(context_.getTypeAlignInChars(canonical).getQuantity());
  if (const auto* array = context_.getAsConstantArrayType(canonical)) {
    KernelTypeDesc element;
    if (!Describe(array->getElementType(), &element, depth + 1) || element.array_size != 0) return false;
    element.array_size = static_cast<uint32_t>(array->getSize().getZExtValue());
    element.size = out->size;
    element.alignment = out->alignment;
    element.name = out->name;
    *out = std::move(element);
    return true;
  }
  if (IsRecordNamed(canonical, "rs_allocation")) {
    out->kind = KernelTypeKind::kAllocation;
    return true;
  }
  if (IsObjectHandle(canonical)) {
    out->kind = KernelTypeKind::kObject;
    return true;
  }
  if (const auto* vector = canonical->getAs<clang::VectorType>()) {
    const auto* lane = vector->getElementType()->getAs<clang::BuiltinType>();
    out->kind = KernelTypeKind::kScalar;
    out->element_type = lane ? ScalarKilnType(lane) : kKilnNoType;
    out->vector_size = vector->getNumElements();
    return out->element_type != kKilnNoType && out->vector_size <= 4;
  }
  if (const auto* enum_type = canonical->getAs<clang::EnumType>()) {
    return Describe(enum_type->getDecl()->getIntegerType(), out, depth + 1) &&
           (out->name = Spelling(type), true);
  }
  if (const auto* builtin = canonical->getAs<clang::BuiltinType>()) {
    out->kind = KernelTypeKind::kScalar;
    out->element_type = ScalarKilnType(builtin);
    return out->element_type != kKilnNoType;
  }
  if (const auto* pointer = canonical->getAs<clang::PointerType>()) {
    KernelTypeDesc pointee;
    const clang::QualType pointee_type = pointer->getPointeeType();
    if (!pointee_type->isVoidType() && !Describe(pointee_type, &pointee, depth + 1)) return false;
    out->kind = KernelTypeKind::kPointer;
    out->element_type = pointee.kind == KernelTypeKind::kScalar ? pointee.element_type : kKilnNoType;
    out->vector_size = pointee.kind == KernelTypeKind::kScalar ? pointee.vector_size : 1;
    out->size = pointee.size;
    out->alignment = pointee.alignment;
    return true;
  }
  if (const auto* record = canonical->getAs<clang::RecordType>()) {
    const clang::RecordDecl* decl = record->getDecl()->getDefinition();
    if (!decl) return false;
    out->kind = KernelTypeKind::kStruct;
    const clang::ASTRecordLayout& layout = context_.getASTRecordLayout(decl);
    for (const clang::FieldDecl* field : decl->fields()) {
      KernelFieldDesc f;
      f.name = field->getNameAsString();
      if (field->isBitField()) return false;
      f.offset = static_cast<uint32_t>(layout.getFieldOffset(field->getFieldIndex()) / 8);
      if (!Describe(field->getType(), &f.type, depth + 1)) return false;
      out->fields.push_back(std::move(f));
    }
    return true;
  }
  return false;
}

int Analyzer::SpecialRank(llvm::StringRef name) {
  if (name == "context") return 0;
  if (name == "x") return 1;
  if (name == "y") return 2;
  if (name == "z") return 3;
  return -1;
}

bool Analyzer::IsKernelContext(clang::QualType type) const {
  const auto* pointer = type.getCanonicalType()->getAs<clang::PointerType>();
  return pointer && pointer->getPointeeType().isConstQualified() &&
         IsRecordNamed(pointer->getPointeeType(), "KilnKernelLaunch");
}

// Parses the special parameters (context, x, y, z) that follow the inputs; shared by kernels and reduction
// accumulators. Returns false after reporting.
bool Analyzer::SpecialParam(const clang::ParmVarDecl* param, unsigned diag, llvm::StringRef owner,
                            int* last_rank, uint32_t* signature, std::vector<ArgKind>* args) {
  const int rank = SpecialRank(param->getName());
  const clang::QualType type = param->getType();
  if (rank == 0 && !IsKernelContext(type)) {
    diags_.Report(param->getLocation(), diag) << owner
                                              << "special parameter 'context' must have type "
                                                 "rs_kernel_context";
    return false;
  }
  if (rank > 0 && !(type->isIntegerType() && !type->isBooleanType() && context_.getTypeSize(type) == 32)) {
    diags_.Report(param->getLocation(), diag)
        << owner << ("special parameter '" + param->getNameAsString() + "' must have type uint32_t or int");
    return false;
  }
  if (rank <= *last_rank) {
    diags_.Report(param->getLocation(), diag)
        << owner
        << ("special parameter '" + param->getNameAsString() +
            "' is out of order or repeated; the order is context, x, y, z");
    return false;
  }
  *last_rank = rank;
  static const uint32_t kBits[] = {kKernelSigCtxt, kKernelSigX, kKernelSigY, kKernelSigZ};
  static const ArgKind kKinds[] = {ArgKind::kContext, ArgKind::kX, ArgKind::kY, ArgKind::kZ};
  *signature |= kBits[rank];
  args->push_back(kKinds[rank]);
  return true;
}

void Analyzer::AnalyzeKernel(const clang::FunctionDecl* fd) {
  const std::string name = fd->getNameAsString();
  KernelDesc desc;
  KernelInfo info;
  desc.name = name;
  desc.expand_symbol = "__kiln_expand_" + name;
  desc.signature = kKernelSigKernel;
  info.function = name;
  bool ok = true;
  int last_rank = -1;
  if (fd->isVariadic()) {
    diags_.Report(fd->getLocation(), diag_kernel_) << name << "a kernel cannot be variadic";
    ok = false;
  }
  for (const clang::ParmVarDecl* param : fd->parameters()) {
    if (SpecialRank(param->getName()) >= 0) {
      ok &= SpecialParam(param, diag_kernel_, name, &last_rank, &desc.signature, &info.args);
      continue;
    }
    const clang::QualType type = param->getType();
    if (last_rank >= 0) {
      diags_.Report(param->getLocation(), diag_kernel_)
          << name
          << ("input parameter '" + param->getNameAsString() +
              "' follows a special parameter; inputs come first");
      ok = false;
      continue;
    }
    if (type.getAsString().find("rs_kernel_context") != std::string::npos) {
      diags_.Report(param->getLocation(), diag_kernel_)
          << name
          << ("the rs_kernel_context parameter '" + param->getNameAsString() +
              "' must be named 'context', as RenderScript requires");
      ok = false;
      continue;
    }
    if (type->isPointerType() || type->isArrayType()) {
      diags_.Report(param->getLocation(), diag_kernel_)
          << name
          << ("parameter '" + param->getNameAsString() +
              "' is a pointer; RS_KERNEL inputs are passed by value (bind other data through globals)");
      ok = false;
      continue;
    }
    KernelTypeDesc input;
    if (!Describe(type, &input) || input.kind == KernelTypeKind::kAllocation ||
        input.kind == KernelTypeKind::kObject) {
      diags_.Report(param->getLocation(), diag_kernel_)
          << name << ("input '" + param->getNameAsString() + "' has unsupported type " + Spelling(type));
      ok = false;
      continue;
    }
    desc.inputs.push_back(input);
    info.input_types.push_back(Spelling(type));
    info.args.push_back(ArgKind::kInput);
  }
  if (desc.inputs.size() > KILN_KERNEL_MAX_INPUTS) {
    diags_.Report(fd->getLocation(), diag_kernel_)
        << name
        << ("has " + std::to_string(desc.inputs.size()) + " inputs; at most " +
            std::to_string(KILN_KERNEL_MAX_INPUTS) + " are allowed");
    ok = false;
  }
  if (!desc.inputs.empty()) desc.signature |= kKernelSigIn;
  const clang::QualType result = fd->getReturnType();
  if (!result->isVoidType()) {
    KernelTypeDesc output;
    if (result->isPointerType() || !Describe(result, &output) || output.kind == KernelTypeKind::kAllocation ||
        output.kind == KernelTypeKind::kObject) {
      diags_.Report(fd->getLocation(), diag_kernel_) << name << ("cannot return " + Spelling(result));
      ok = false;
    } else {
      desc.output = output;
      info.output_type = Spelling(result);
      desc.signature |= kKernelSigOut;
    }
  }
  // A kernel with neither inputs nor an output (RenderScript API 23) has no tensor to take its extent from: it
  // runs over the range its launch options give (KilnLaunchOptions), writing through globals.
  if (!ok) return;
  desc.hal_level = LevelOf(fd);
  if (!CheckLevel(desc.hal_level, fd, diag_kernel_)) return;
  if (LaunchesKernels(fd)) {
    diags_.Report(fd->getLocation(), diag_kernel_)
        << name << "calls rsForEach; only invokables and init() may launch kernels";
    return;
  }
  info_->module.kernels.push_back(std::move(desc));
  info_->kernels.push_back(std::move(info));
}

// void root(const T* in, U* out, const void* usrData, uint32_t x, uint32_t y): RenderScript's original
// form.
void Analyzer::AnalyzeRootKernel(const clang::FunctionDecl* fd) {
  const std::string name = fd->getNameAsString();
  if (!fd->getReturnType()->isVoidType()) {
    diags_.Report(fd->getLocation(), diag_kernel_) << name << "old-style root() must return void";
    return;
  }
  KernelDesc desc;
  KernelInfo info;
  desc.name = name;
  desc.expand_symbol = "__kiln_expand_" + name;
  desc.root_style = true;
  info.function = name;
  bool have_in = false, have_out = false, have_usr = false;
  int next_coordinate = 1;  // x, then y, then z
  for (const clang::ParmVarDecl* param : fd->parameters()) {
    const clang::QualType type = param->getType();
    const std::string pname = param->getNameAsString();
    if (const auto* pointer = type->getAs<clang::PointerType>()) {
      const clang::QualType pointee = pointer->getPointeeType();
      if (next_coordinate > 1 || have_usr) {
        diags_.Report(param->getLocation(), diag_kernel_)
            << name << ("pointer parameter '" + pname + "' after usrData or a coordinate");
        return;
      }
      const bool is_const = pointee.isConstQualified();
      const bool looks_like_usr = pointee->isVoidType() && pname == "usrData";
      if (!have_in && !have_out && is_const && !looks_like_usr) {
        have_in = true;
      } else if (!have_out && !is_const && !looks_like_usr) {
        have_out = true;
      } else {
        have_usr = true;
        desc.signature |= kKernelSigUsr;
        info.args.push_back(ArgKind::kUsrData);
        continue;
      }
      KernelTypeDesc element;
      if (pointee->isVoidType() || !Describe(pointee, &element)) {
        diags_.Report(param->getLocation(), diag_kernel_)
            << name
            << ("parameter '" + pname + "' must point to a concrete element type, not " + Spelling(type));
        return;
      }
      if (have_in && info.input_types.empty()) {
        desc.inputs.push_back(element);
        info.input_types.push_back(Spelling(pointee));
        desc.signature |= kKernelSigIn;
        info.args.push_back(ArgKind::kInputPtr);
      } else {
        desc.output = element;
        info.output_type = Spelling(pointee);
        desc.signature |= kKernelSigOut;
        info.args.push_back(ArgKind::kOutputPtr);
      }
      continue;
    }
    if (!type->isIntegerType() || context_.getTypeSize(type) != 32 || next_coordinate > 3) {
      diags_.Report(param->getLocation(), diag_kernel_)
          << name
          << ("unexpected parameter '" + pname +
              "'; the form is root(const T* in, U* out, "
              "const void* usrData, uint32_t x, uint32_t y, uint32_t z)");
      return;
    }
    static const uint32_t kBits[] = {0, kKernelSigX, kKernelSigY, kKernelSigZ};
    static const ArgKind kKinds[] = {ArgKind::kX, ArgKind::kX, ArgKind::kY, ArgKind::kZ};
    desc.signature |= kBits[next_coordinate];
    info.args.push_back(kKinds[next_coordinate]);
    ++next_coordinate;
  }
  if (!have_in && !have_out) {
    diags_.Report(fd->getLocation(), diag_kernel_) << name << "root() needs an input or an output pointer";
    return;
  }
  desc.hal_level = LevelOf(fd);
  if (!CheckLevel(desc.hal_level, fd, diag_kernel_)) return;
  if (LaunchesKernels(fd)) {
    diags_.Report(fd->getLocation(), diag_kernel_)
        << name << "calls rsForEach; only invokables and init() may launch kernels";
    return;
  }
  info_->module.kernels.push_back(std::move(desc));
  info_->kernels.push_back(std::move(info));
}

// The T of a `T*` parameter, or a null type.
clang::QualType Analyzer::PointeeOf(const clang::ParmVarDecl* param) {
  const auto* pointer = param->getType()->getAs<clang::PointerType>();
  return pointer ? pointer->getPointeeType() : clang::QualType();
}

void Analyzer::AnalyzeReductions() {
  std::set<std::string> names;
  for (const ReducePragma& pragma : pragmas_->reductions) {
    const std::string& name = pragma.name;
    auto fail = [&](clang::SourceLocation loc, const std::string& message) {
      diags_.Report(loc.isValid() ? loc : pragma.location, diag_reduction_) << name << message;
    };
    if (!names.insert(name).second) {
      fail(pragma.location, "defined twice");
      continue;
    }
    // Reductions share the module's one namespace with kernels, invokables and globals.
    bool clash = FindUserFunction(name) != nullptr;
    for (const clang::VarDecl* vd : globals_) clash |= vd->getName() == name;
    if (clash) {
      fail(pragma.location, "the name is already used by a function or global of this script");
      continue;
    }
    std::map<std::string, const clang::FunctionDecl*> fns;
    bool ok = true;
    for (const auto& entry : pragma.functions) {
      const clang::FunctionDecl* fd = FindUserFunction(entry.second);
      if (!fd) {
        fail(pragma.function_locations.at(entry.first),
             entry.first + " function '" + entry.second + "' is not defined in this script");
        ok = false;
        continue;
      }
      if (!fd->getReturnType()->isVoidType()) {
        fail(fd->getLocation(), entry.first + " function '" + entry.second + "' must return void");
        ok = false;
      }
      reduction_functions_.insert(fd->getCanonicalDecl());
      fns[entry.first] = fd;
    }
    if (!ok) continue;
    ReductionDesc desc;
    ReductionInfo info;
    desc.name = name;
    desc.accumulator = pragma.functions.at("accumulator");
    auto get = [&](const char* key) {
      auto it = pragma.functions.find(key);
      return it == pragma.functions.end() ? std::string() : it->second;
    };
    desc.initializer = get("initializer");
    desc.combiner = get("combiner");
    desc.outconverter = get("outconverter");
    desc.init_symbol = "__kiln_reduce_" + name + "_init";
    desc.accum_symbol = "__kiln_reduce_" + name + "_accum";
    desc.combine_symbol = "__kiln_reduce_" + name + "_combine";
    desc.out_symbol = "__kiln_reduce_" + name + "_out";

    const clang::FunctionDecl* accumulator = fns.at("accumulator");
    if (accumulator->getNumParams() < 2) {
      fail(accumulator->getLocation(),
           "accumulator '" + desc.accumulator + "' must take the accumulator pointer and at least one input");
      continue;
    }
    const clang::QualType accum_type = PointeeOf(accumulator->getParamDecl(0));
    if (accum_type.isNull() || accum_type.isConstQualified() || accum_type->isVoidType() ||
        !Describe(accum_type, &desc.accumulator_type)) {
      fail(accumulator->getParamDecl(0)->getLocation(),
           "the accumulator's first parameter must be a non-const pointer to the accumulator data type");
      continue;
    }
    desc.accumulator_size = desc.accumulator_type.size;
    desc.accumulator_alignment = desc.accumulator_type.alignment;
    info.accumulator_type = Spelling(accum_type);
    int last_rank = -1;
    for (unsigned i = 1; i < accumulator->getNumParams() && ok; ++i) {
      const clang::ParmVarDecl* param = accumulator->getParamDecl(i);
      if (SpecialRank(param->getName()) >= 0) {
        ok &= SpecialParam(param, diag_reduction_, name, &last_rank, &desc.signature, &info.accumulator_args);
        continue;
      }
      KernelTypeDesc input;
      if (last_rank >= 0 || param->getType()->isPointerType() || !Describe(param->getType(), &input)) {
        fail(param->getLocation(), "accumulator input '" + param->getNameAsString() +
                                       "' must be a value (not a pointer) before any special parameter");
        ok = false;
        continue;
      }
      desc.inputs.push_back(input);
      info.input_types.push_back(Spelling(param->getType()));
      info.accumulator_args.push_back(ArgKind::kInput);
    }
    if (!ok) continue;
    if (desc.inputs.empty() || desc.inputs.size() > KILN_KERNEL_MAX_INPUTS) {
      fail(accumulator->getLocation(), "the accumulator needs 1 to 8 inputs");
      continue;
    }
    if (const clang::FunctionDecl* init = fns.count("initializer") ? fns.at("initializer") : nullptr) {
      if (init->getNumParams() != 1 || PointeeOf(init->getParamDecl(0)).isNull() ||
          !SameType(PointeeOf(init->getParamDecl(0)), accum_type)) {
        fail(init->getLocation(), "initializer '" + desc.initializer + "' must be void " + desc.initializer +
                                      "(" + info.accumulator_type + "* accum)");
        continue;
      }
    }
    if (const clang::FunctionDecl* comb = fns.count("combiner") ? fns.at("combiner") : nullptr) {
      if (comb->getNumParams() != 2 || PointeeOf(comb->getParamDecl(0)).isNull() ||
          PointeeOf(comb->getParamDecl(1)).isNull() ||
          !SameType(PointeeOf(comb->getParamDecl(0)), accum_type) ||
          !SameType(PointeeOf(comb->getParamDecl(1)), accum_type)) {
        fail(comb->getLocation(), "combiner '" + desc.combiner + "' must be void " + desc.combiner + "(" +
                                      info.accumulator_type + "* accum, const " + info.accumulator_type +
                                      "* other)");
        continue;
      }
    } else if (desc.inputs.size() != 1 || desc.signature != 0 ||
               !SameType(accumulator->getParamDecl(1)->getType(), accum_type)) {
      fail(pragma.location,
           "without a combiner, the accumulator must take exactly one input, of the "
           "accumulator type " +
               info.accumulator_type + ", and no special parameters");
      continue;
    }
    if (const clang::FunctionDecl* out = fns.count("outconverter") ? fns.at("outconverter") : nullptr) {
      const clang::QualType result =
          out->getNumParams() == 2 ? PointeeOf(out->getParamDecl(0)) : clang::QualType();
      if (result.isNull() || result.isConstQualified() || PointeeOf(out->getParamDecl(1)).isNull() ||
          !SameType(PointeeOf(out->getParamDecl(1)), accum_type) || !Describe(result, &desc.result) ||
          desc.result.kind == KernelTypeKind::kVoid) {
        fail(out->getLocation(), "outconverter '" + desc.outconverter + "' must be void " +
                                     desc.outconverter + "(ResultType* result, const " +
                                     info.accumulator_type + "* accum)");
        continue;
      }
      info.result_type = Spelling(result);
    } else {
      desc.result = desc.accumulator_type;
      info.result_type = info.accumulator_type;
    }
    HalLevel level;
    bool launches = false;
    for (const auto& entry : fns) {
      level = std::max(level, LevelOf(entry.second));
      launches = launches || LaunchesKernels(entry.second);
    }
    if (launches) {
      fail(pragma.location, "its functions call rsForEach; only invokables and init() may launch kernels");
      continue;
    }
    desc.hal_level = level;
    if (kMaxSupportedHalLevel < level) {
      fail(pragma.location, "needs HAL level " + level.ToString() + ", above the newest Kiln supports (" +
                                kMaxSupportedHalLevel.ToString() + ")");
      continue;
    }
    info_->module.reductions.push_back(std::move(desc));
    info_->reductions.push_back(std::move(info));
  }
}

void Analyzer::AnalyzeInvokables() {
  for (const clang::FunctionDecl* fd : user_functions_) {
    const std::string name = fd->getNameAsString();
    if (fd->hasAttr<clang::RenderScriptKernelAttr>() || IsOldStyleKernel(fd) ||
        reduction_functions_.count(fd->getCanonicalDecl())) {
      continue;
    }
    if (name == "init") {
      if (!fd->getReturnType()->isVoidType() || fd->getNumParams() != 0) {
        diags_.Report(fd->getLocation(), diag_invokable_)
            << name << "init must be declared 'void init(void)'";
        continue;
      }
      info_->module.has_init = true;
      continue;
    }
    if (fd->getStorageClass() == clang::SC_Static || fd->isInlineSpecified() ||
        !fd->getReturnType()->isVoidType()) {
      continue;
    }
    InvokableDesc desc;
    InvokableInfo info;
    desc.name = name;
    desc.symbol = "__kiln_invoke_" + name;
    info.function = name;
    bool ok = true;
    if (fd->isVariadic()) {
      diags_.Report(fd->getLocation(), diag_invokable_) << name << "an invokable cannot be variadic";
      ok = false;
    }
    uint32_t end = 0;
    for (const clang::ParmVarDecl* param : fd->parameters()) {
      ParamDesc p;
      p.name = param->getNameAsString();
      if (param->getType()->isPointerType() || !Describe(param->getType(), &p.type)) {
        diags_.Report(param->getLocation(), diag_invokable_)
            << name
            << ("parameter '" + p.name + "' has type " + Spelling(param->getType()) +
                ", which cannot be passed from the host (pointers are not allowed)");
        ok = false;
        continue;
      }
      p.offset = (end + p.type.alignment - 1) / p.type.alignment * p.type.alignment;
      end = p.offset + p.type.size;
      desc.args_alignment = std::max(desc.args_alignment, p.type.alignment);
      desc.params.push_back(p);
      info.param_types.push_back(Spelling(param->getType()));
    }
    if (!ok) continue;
    desc.args_size = (end + desc.args_alignment - 1) / desc.args_alignment * desc.args_alignment;
    desc.hal_level = LevelOf(fd);
    if (!CheckLevel(desc.hal_level, fd, diag_invokable_)) continue;
    info_->module.invokables.push_back(std::move(desc));
    info_->invokables.push_back(std::move(info));
  }
}

namespace {

// Numbers, vectors and structs and arrays of them: no object handle or pointer anywhere.
bool IsPlainData(const KernelTypeDesc& type) {
  if (type.kind == KernelTypeKind::kScalar) return true;
  if (type.kind != KernelTypeKind::kStruct) return false;
  return std::all_of(type.fields.begin(), type.fields.end(),
                     [](const KernelFieldDesc& f) { return IsPlainData(f.type); });
}

}  // namespace

void Analyzer::AnalyzeGlobals() {
  std::set<const clang::VarDecl*> seen;
  // A static global the code writes (a setter or init() computing a table the kernels read) is reflected too,
  // hidden from the API, so that the runtime can carry its value to a GPU instance; one nobody writes is a
  // constant, left to the optimizer and folded into GPU code.
  GlobalWriteScanner writes;
  writes.TraverseDecl(context_.getTranslationUnitDecl());
  for (const clang::VarDecl* vd : globals_) {
    const clang::VarDecl* definition = vd->getDefinition();
    if (!definition) definition = vd->getActingDefinition();  // C's tentative definition: `int x;`
    if (!definition) continue;
    const bool is_static = vd->getCanonicalDecl()->getStorageClass() == clang::SC_Static;
    if (is_static && (definition->getType().isConstQualified() || !writes.written.count(vd->getCanonicalDecl()))) {
      continue;
    }
    if (!seen.insert(definition->getCanonicalDecl()).second) continue;
    GlobalDesc desc;
    desc.name = definition->getNameAsString();
    desc.is_static = is_static;
    const clang::QualType type = definition->getType();
    if (is_static) {
      // Only plain data moves between devices; a static object handle or pointer stays on the CPU instance.
      if (!Describe(type, &desc.type) || !IsPlainData(desc.type)) continue;
    } else if (!Describe(type, &desc.type)) {
      diags_.Report(definition->getLocation(), diag_global_)
          << desc.name << ("type " + Spelling(type) + " cannot be reflected (make the global static)");
      continue;
    }
    desc.size = static_cast<uint32_t>(context_.getTypeSizeInChars(type).getQuantity());
    desc.alignment = static_cast<uint32_t>(context_.getDeclAlign(definition).getQuantity());
    desc.is_const = type.isConstQualified();
    desc.is_allocation =
        desc.type.kind == KernelTypeKind::kAllocation || desc.type.kind == KernelTypeKind::kPointer;
    if (auto it = accessed_as_.find(definition->getCanonicalDecl()); it != accessed_as_.end()) {
      desc.accessed_as.assign(it->second.begin(), it->second.end());
    }
    info_->module.globals.push_back(std::move(desc));
  }
}

}  // namespace compiler
}  // namespace kiln
