// The script's functions as GLSL functions: statements and expressions lowered as the source reads, each
// function the kernel reaches lowered once, callee first.
#include <map>
#include <string>

#include "clang/AST/RecordLayout.h"
#include "compiler/glsl_lowering_internal.h"

namespace kiln {
namespace compiler {

std::string KernelLowering::LocalName(const clang::VarDecl* var) {
  auto it = locals_.find(var);
  if (it != locals_.end()) return it->second;
  std::string base = var->getNameAsString();
  std::string clean;
  for (char c : base) {
    if (c == '_' && !clean.empty() && clean.back() == '_') continue;  // GLSL reserves "__"
    clean += c;
  }
  const std::string name = "l" + std::to_string(local_counter_++) + "_" + clean;
  locals_[var] = name;
  return name;
}

std::string KernelLowering::FunctionName(const clang::FunctionDecl* fd, clang::SourceLocation loc) {
  const clang::FunctionDecl* definition = fd->getDefinition();
  if (!definition) Fail(loc, "a call to '" + fd->getNameAsString() + "', which has no GPU form");
  auto it = function_names_.find(definition);
  if (it != function_names_.end()) return it->second;
  const std::string name =
      "fn" + std::to_string(function_names_.size()) + "_" + definition->getNameAsString();
  function_names_[definition] = name;
  LowerFunction(definition);
  return name;
}

void KernelLowering::LowerFunction(const clang::FunctionDecl* fd) {
  const std::string name = function_names_.at(fd);
  std::string text = Type(fd->getReturnType(), fd->getLocation()) + " " + name + "(";
  bool first = true;
  for (const clang::ParmVarDecl* param : fd->parameters()) {
    const clang::QualType type = param->getType();
    if (const auto* pointer = type->getAs<clang::PointerType>()) {
      if (pointer->getPointeeType().isConstQualified() &&
          pointer->getPointeeType()->getAs<clang::RecordType>() &&
          pointer->getPointeeType()->getAs<clang::RecordType>()->getDecl()->getName() == "KilnKernelLaunch") {
        continue;  // rs_kernel_context: rsGetDim* read the push constants instead
      }
      if (usr_params_.count(param)) continue;  // usrData: read from binding 28 (see usr_params_)
      // T* p (and root()'s in/out): a GLSL `in`/`inout` parameter; the body may use *p, p->f and p[0].
      const clang::QualType pointee = pointer->getPointeeType();
      if (pointee->isVoidType()) {
        Fail(param->getLocation(), "untyped pointer parameter '" + param->getNameAsString() + "' of '" +
                                       fd->getNameAsString() + "'");
      }
      pointer_params_.insert(param);
      text += (first ? "" : ", ") + std::string(pointee.isConstQualified() ? "in " : "inout ") +
              Declare(pointee.getUnqualifiedType(), LocalName(param), param->getLocation());
      first = false;
      continue;
    }
    text += (first ? "" : ", ") + Declare(type, LocalName(param), param->getLocation());
    first = false;
  }
  text += ") ";
  if (fd->isVariadic()) Fail(fd->getLocation(), "a variadic function");
  std::string body;
  Block(fd->getBody(), 0, &body);
  function_text_.push_back(text + body + "\n");
}

std::string KernelLowering::Cond(const clang::Expr* e) {
  e = e->IgnoreParens();
  std::string usr_test;
  if (UsrNullTest(e, &usr_test)) return usr_test;
  if (const auto* cast = llvm::dyn_cast<clang::ImplicitCastExpr>(e)) {
    if (cast->getCastKind() == clang::CK_IntegralToBoolean ||
        cast->getCastKind() == clang::CK_FloatingToBoolean) {
      return Cond(cast->getSubExpr());
    }
  }
  if (const auto* op = llvm::dyn_cast<clang::BinaryOperator>(e)) {
    const Lane lhs = LaneOf(op->getLHS()->getType());
    if (op->isComparisonOp() && lhs.ok && lhs.count == 1) {
      return "(" + Expr(op->getLHS()) + " " + op->getOpcodeStr().str() + " " + Expr(op->getRHS()) + ")";
    }
    if (op->isLogicalOp()) {
      return "(" + Cond(op->getLHS()) + " " + op->getOpcodeStr().str() + " " + Cond(op->getRHS()) + ")";
    }
  }
  if (const auto* op = llvm::dyn_cast<clang::UnaryOperator>(e)) {
    if (op->getOpcode() == clang::UO_LNot) return "(!" + Cond(op->getSubExpr()) + ")";
  }
  return ToBool(Expr(e), e->getType(), e->getExprLoc());
}

bool KernelLowering::IsUsrPointer(const clang::Expr* e) {
  if (!e->getType()->isPointerType()) return false;
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenCasts());
  const auto* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
  return var && usr_params_.count(var) > 0;
}

bool KernelLowering::UsrPlaceOf(const clang::Expr* e, UsrPlace* place) {
  if (usr_params_.empty()) return false;
  e = e->IgnoreParens();
  const clang::SourceLocation loc = e->getExprLoc();
  if (const auto* op = llvm::dyn_cast<clang::UnaryOperator>(e)) {
    if (op->getOpcode() != clang::UO_Deref || !IsUsrPointer(op->getSubExpr())) return false;
    *place = UsrPlace();
    return true;
  }
  if (const auto* subscript = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
    const clang::Expr* base = subscript->getBase();
    if (IsUsrPointer(base)) {
      *place = UsrPlace();
    } else if (!UsrPlaceOf(base->IgnoreParenImpCasts(), place)) {  // an array inside usrData's bytes
      return false;
    }
    UsrIndex(subscript->getIdx(), e->getType(), place);
    return true;
  }
  if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(e)) {
    if (member->isArrow() ? !IsUsrPointer(member->getBase()) : !UsrPlaceOf(member->getBase(), place)) {
      return false;
    }
    if (member->isArrow()) *place = UsrPlace();
    const auto* field = llvm::dyn_cast<clang::FieldDecl>(member->getMemberDecl());
    if (!field || field->isBitField()) Fail(loc, "a bit-field read through usrData");
    const clang::ASTRecordLayout& layout = context_.getASTRecordLayout(field->getParent());
    place->offset += static_cast<uint32_t>(layout.getFieldOffset(field->getFieldIndex()) / 8);
    return true;
  }
  return false;
}

// Steps `place` to element `index` of an array of `element`s that starts there.
void KernelLowering::UsrIndex(const clang::Expr* index, clang::QualType element, UsrPlace* place) {
  const clang::SourceLocation loc = index->getExprLoc();
  const uint64_t size = static_cast<uint64_t>(context_.getTypeSizeInChars(element).getQuantity());
  clang::Expr::EvalResult value;
  if (index->EvaluateAsInt(value, context_)) {
    const llvm::APSInt& i = value.Val.getInt();
    if (i.isNegative() || i.getActiveBits() > 24 || size * i.getZExtValue() > (1u << 24)) {
      Fail(loc, "an index into usrData outside 0..16 MiB");
    }
    place->offset += static_cast<uint32_t>(size * i.getZExtValue());
    return;
  }
  // A run-time index moves whole words, so every lane's position within its word stays known.
  if (size % 4 != 0) {
    Fail(loc, "a run-time index into usrData over '" + element.getAsString() + "' (" + std::to_string(size) +
                  " bytes; the GPU form indexes elements of a multiple of 4 bytes)");
  }
  const std::string step = "uint(" + Expr(index) + ") * " + std::to_string(size / 4) + "u";
  place->base = place->base.empty() ? step : "(" + place->base + " + " + step + ")";
}

bool KernelLowering::UsrNullTest(const clang::Expr* e, std::string* value) {
  if (usr_params_.empty()) return false;
  e = e->IgnoreParens();
  if (IsUsrPointer(e)) {
    uses_usr_ = true;
    *value = "(kiln_usr_size != 0u)";  // a condition: `if (usrData)`
    return true;
  }
  if (const auto* cast = llvm::dyn_cast<clang::ImplicitCastExpr>(e)) {
    if (cast->getCastKind() == clang::CK_PointerToBoolean && IsUsrPointer(cast->getSubExpr())) {
      uses_usr_ = true;
      *value = "(kiln_usr_size != 0u)";  // `if (usrData)`
      return true;
    }
  }
  if (const auto* op = llvm::dyn_cast<clang::UnaryOperator>(e)) {
    if (op->getOpcode() == clang::UO_LNot && IsUsrPointer(op->getSubExpr())) {
      uses_usr_ = true;
      *value = "(kiln_usr_size == 0u)";  // `!usrData`
      return true;
    }
  }
  if (const auto* op = llvm::dyn_cast<clang::BinaryOperator>(e)) {
    if (op->getOpcode() != clang::BO_EQ && op->getOpcode() != clang::BO_NE) return false;
    const auto is_null = [this](const clang::Expr* x) {
      return x->isNullPointerConstant(context_, clang::Expr::NPC_ValueDependentIsNotNull) !=
             clang::Expr::NPCK_NotNull;
    };
    const bool usr_vs_null = (IsUsrPointer(op->getLHS()) && is_null(op->getRHS())) ||
                             (IsUsrPointer(op->getRHS()) && is_null(op->getLHS()));
    if (!usr_vs_null) return false;
    uses_usr_ = true;
    *value = op->getOpcode() == clang::BO_EQ ? "(kiln_usr_size == 0u)" : "(kiln_usr_size != 0u)";
    return true;
  }
  return false;
}

std::string KernelLowering::Cast(const clang::CastExpr* e) {
  const clang::Expr* sub = e->getSubExpr();
  const clang::SourceLocation loc = e->getExprLoc();
  switch (e->getCastKind()) {
    case clang::CK_LValueToRValue:
    case clang::CK_NoOp:
    case clang::CK_ToVoid: {
      const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(sub->IgnoreParenImpCasts());
      if (ref && usr_params_.count(llvm::dyn_cast<clang::VarDecl>(ref->getDecl()))) return "0";  // (void)usrData
      return Expr(sub);
    }
    case clang::CK_PointerToBoolean: {
      std::string usr_test;
      if (UsrNullTest(e, &usr_test)) return usr_test;
      Fail(loc, "a pointer used as a truth value");
    }
    case clang::CK_IntegralCast:
    case clang::CK_IntegralToFloating:
    case clang::CK_FloatingToIntegral:
    case clang::CK_FloatingCast:
    case clang::CK_IntegralToBoolean:
    case clang::CK_FloatingToBoolean:
      if (e->getCastKind() == clang::CK_IntegralToBoolean ||
          e->getCastKind() == clang::CK_FloatingToBoolean) {
        return ToBool(Expr(sub), sub->getType(), loc);
      }
      return Convert(Expr(sub), sub->getType(), e->getType(), loc);
    case clang::CK_BooleanToSignedIntegral:
      return "(" + Expr(sub) + " ? -1 : 0)";
    case clang::CK_VectorSplat: {
      const clang::QualType element_type = e->getType()->getAs<clang::VectorType>()->getElementType();
      return Type(e->getType(), loc) + "(" + Convert(Expr(sub), sub->getType(), element_type, loc) + ")";
    }
    case clang::CK_BitCast: {
      const Lane src = LaneOf(sub->getType());
      const Lane dst = LaneOf(e->getType());
      if (src.ok && dst.ok && src.count == dst.count && src.bits == 32 && dst.bits == 32) {
        const std::string value = Expr(sub);
        if (src.is_float == dst.is_float && src.is_signed == dst.is_signed) return value;
        if (src.is_float)
          return std::string(dst.is_signed ? "floatBitsToInt(" : "floatBitsToUint(") + value + ")";
        if (dst.is_float) return (src.is_signed ? "intBitsToFloat(" : "uintBitsToFloat(") + value + ")";
        return Type(e->getType(), loc) + "(" + value + ")";
      }
      Fail(loc,
           "a bit cast from '" + sub->getType().getAsString() + "' to '" + e->getType().getAsString() + "'");
    }
    default:
      Fail(loc,
           std::string("a '") + e->getCastKindName() + "' conversion (pointers or other types GLSL lacks)");
  }
}

std::string KernelLowering::Binary(const clang::BinaryOperator* e) {
  const clang::SourceLocation loc = e->getOperatorLoc();
  const clang::BinaryOperatorKind op = e->getOpcode();
  const clang::Expr* lhs = e->getLHS();
  const clang::Expr* rhs = e->getRHS();
  if (op == clang::BO_Comma) return "(" + Expr(lhs) + ", " + Expr(rhs) + ")";
  if (e->isLogicalOp()) return Convert("(" + Cond(e) + ")", context_.BoolTy, e->getType(), loc);
  if (e->isComparisonOp()) {
    std::string usr_test;
    if (UsrNullTest(e, &usr_test)) return Convert(usr_test, context_.BoolTy, e->getType(), loc);
    const Lane lane = LaneOf(lhs->getType());
    if (!lane.ok) Fail(loc, "a comparison of '" + lhs->getType().getAsString() + "' values");
    if (lane.count == 1) return Convert("(" + Cond(e) + ")", context_.BoolTy, e->getType(), loc);
    static const std::map<clang::BinaryOperatorKind, const char*> kVector = {
        {clang::BO_LT, "lessThan"},         {clang::BO_GT, "greaterThan"}, {clang::BO_LE, "lessThanEqual"},
        {clang::BO_GE, "greaterThanEqual"}, {clang::BO_EQ, "equal"},       {clang::BO_NE, "notEqual"}};
    // A vector comparison yields -1 (all bits set) per true lane, as in OpenCL.
    return "(-" + Type(e->getType(), loc) + "(" + kVector.at(op) + "(" + Expr(lhs) + ", " + Expr(rhs) + ")))";
  }
  if (e->isAssignmentOp()) {
    CheckWritable(lhs, loc);
    if (lhs->HasSideEffects(context_) && op != clang::BO_Assign) {
      Fail(loc, "a compound assignment whose target has side effects");
    }
    const std::string target = Expr(lhs);
    if (op == clang::BO_Assign) return "(" + target + " = " + Expr(rhs) + ")";
    const auto* compound = llvm::cast<clang::CompoundAssignOperator>(e);
    const clang::QualType computation = compound->getComputationLHSType();
    const clang::BinaryOperatorKind base = clang::BinaryOperator::getOpForCompoundAssignment(op);
    std::string left = Convert(target, lhs->getType(), computation, loc);
    std::string right = Expr(rhs);
    std::string value;
    const Lane lane = LaneOf(computation);
    if ((base == clang::BO_Rem) && lane.ok && lane.is_signed && !lane.is_float) {
      Use(lane.bits == 64 ? "kiln_rem64" : "kiln_rem");
      value = "kiln_rem(" + left + ", " + right + ")";
    } else {
      value = "(" + left + " " + clang::BinaryOperator::getOpcodeStr(base).str() + " " + right + ")";
    }
    value = Convert(Wrap(value, computation), compound->getComputationResultType(), lhs->getType(), loc);
    return "(" + target + " = " + value + ")";
  }
  const Lane lane = LaneOf(e->getType());
  if (!lane.ok) Fail(loc, "arithmetic on '" + e->getType().getAsString() + "' (pointer arithmetic?)");
  std::string value;
  if (op == clang::BO_Rem && lane.is_signed && !lane.is_float) {
    Use(lane.bits == 64 ? "kiln_rem64" : "kiln_rem");
    value = "kiln_rem(" + Expr(lhs) + ", " + Expr(rhs) + ")";
  } else if (op == clang::BO_Rem && lane.is_float) {
    Fail(loc, "'%' on floating-point values");
  } else {
    value = "(" + Expr(lhs) + " " + e->getOpcodeStr().str() + " " + Expr(rhs) + ")";
  }
  return Wrap(value, e->getType());  // 8/16-bit vectors are not promoted in C
}

std::string KernelLowering::Unary(const clang::UnaryOperator* e) {
  const clang::SourceLocation loc = e->getOperatorLoc();
  const clang::Expr* sub = e->getSubExpr();
  switch (e->getOpcode()) {
    case clang::UO_Plus:
      return Expr(sub);
    case clang::UO_Minus:
      return Wrap("(-" + Expr(sub) + ")", e->getType());
    case clang::UO_Not:
      return Wrap("(~" + Expr(sub) + ")", e->getType());
    case clang::UO_LNot:
      return Convert("(" + Cond(e) + ")", context_.BoolTy, e->getType(), loc);
    case clang::UO_PreInc:
    case clang::UO_PreDec:
    case clang::UO_PostInc:
    case clang::UO_PostDec: {
      const Lane lane = LaneOf(sub->getType());
      if (!lane.ok || lane.is_bool) Fail(loc, "'++'/'--' on '" + sub->getType().getAsString() + "'");
      CheckWritable(sub, loc);
      const std::string target = Expr(sub);
      const char* token = e->isIncrementOp() ? "++" : "--";
      if (lane.is_half) {
        // Rounded to half like any operation; the old value of a postfix form is not recoverable from the new.
        if (!e->isPrefix()) Fail(loc, "a postfix '" + std::string(token) + "' on a half value (use the prefix form)");
        if (sub->HasSideEffects(context_)) Fail(loc, "'++'/'--' on a half target with side effects");
        return "(" + target + " = " + Wrap(target + (e->isIncrementOp() ? " + 1.0" : " - 1.0"), sub->getType()) + ")";
      }
      if (lane.bits >= 32)
        return e->isPrefix() ? "(" + std::string(token) + target + ")" : "(" + target + token + ")";
      // 8/16-bit: wraps like C. The target is written twice, so it must be free of side effects; a postfix
      // form yields the old value, recovered from the new one.
      if (sub->HasSideEffects(context_)) Fail(loc, "'++'/'--' on an 8- or 16-bit target with side effects");
      const std::string one = lane.is_signed ? "1" : "1u";
      const std::string step = std::string(e->isIncrementOp() ? " + " : " - ") + one;
      const std::string updated = "(" + target + " = " + Wrap(target + step, sub->getType()) + ")";
      if (e->isPrefix()) return updated;
      return Wrap("(" + updated + (e->isIncrementOp() ? " - " : " + ") + one + ")", sub->getType());
    }
    case clang::UO_Deref: {
      const std::string param = PointerParam(sub);
      if (param.empty()) Fail(loc, "a pointer dereference");
      return param;
    }
    case clang::UO_AddrOf:
      Fail(loc, "taking an address (pointers are CPU-only)");
    case clang::UO_Extension:
      return Expr(sub);
    default:
      Fail(loc, "the operator '" + clang::UnaryOperator::getOpcodeStr(e->getOpcode()).str() + "'");
  }
}

std::string KernelLowering::InitList(const clang::InitListExpr* e, clang::QualType type) {
  const clang::SourceLocation loc = e->getBeginLoc();
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    const uint64_t count = array->getSize().getZExtValue();
    std::string out = Type(t, loc) + "(";
    for (uint64_t i = 0; i < count; ++i) {
      std::string value = i < e->getNumInits() ? Expr(e->getInit(static_cast<unsigned>(i)))
                                               : (e->hasArrayFiller() ? Expr(e->getArrayFiller())
                                                                      : Zero(array->getElementType(), loc));
      out += (i ? ", " : "") + value;
    }
    return out + ")";
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    std::string out = Type(t, loc) + "(";
    unsigned i = 0;
    for (const clang::FieldDecl* field : record->getDecl()->getDefinition()->fields()) {
      out += (i ? ", " : "") + (i < e->getNumInits() ? Expr(e->getInit(i)) : Zero(field->getType(), loc));
      ++i;
    }
    return out + ")";
  }
  const Lane lane = LaneOf(t);
  if (lane.ok && lane.count > 1) {
    std::string out = Type(t, loc) + "(";
    unsigned lanes = 0;
    for (unsigned i = 0; i < e->getNumInits(); ++i) {
      const clang::Expr* init = e->getInit(i);
      const Lane part = LaneOf(init->getType());
      lanes += part.ok ? part.count : 1;
      out += (i ? ", " : "") + Expr(init);
    }
    Lane element = lane;
    element.count = 1;
    for (; lanes < lane.count; ++lanes) out += (lanes ? ", " : "") + ZeroOf(element);
    return out + ")";
  }
  if (e->getNumInits() == 1) return Expr(e->getInit(0));
  if (e->getNumInits() == 0) return Zero(t, loc);
  Fail(loc, "an initializer list kilnc cannot lower");
}

std::string KernelLowering::Expr(const clang::Expr* e) {
  const clang::SourceLocation loc = e->getExprLoc();
  if (!usr_params_.empty() && (llvm::isa<clang::UnaryOperator>(e) || llvm::isa<clang::ArraySubscriptExpr>(e) ||
                               llvm::isa<clang::MemberExpr>(e))) {
    UsrPlace place;
    if (UsrPlaceOf(e, &place)) {
      std::string value, why;
      if (!script_->WordRead(e->getType(), place.offset, "kiln_usr_word", &value, &why, place.base, true)) {
        Fail(loc, "reading usrData as '" + e->getType().getAsString() + "': " + why);
      }
      uses_usr_ = true;
      return value;
    }
  }
  if (const auto* paren = llvm::dyn_cast<clang::ParenExpr>(e)) return Expr(paren->getSubExpr());
  if (const auto* constant = llvm::dyn_cast<clang::ConstantExpr>(e)) return Expr(constant->getSubExpr());
  if (const auto* literal = llvm::dyn_cast<clang::IntegerLiteral>(e)) {
    const Lane lane = LaneOf(e->getType());
    if (lane.bits == 64) needs_int64_ = true;
    return IntLiteral(llvm::APSInt(literal->getValue(), !lane.is_signed), lane);
  }
  if (const auto* literal = llvm::dyn_cast<clang::CharacterLiteral>(e)) {
    return IntLiteral(llvm::APSInt(llvm::APInt(32, literal->getValue()), false), LaneOf(e->getType()));
  }
  if (const auto* literal = llvm::dyn_cast<clang::FloatingLiteral>(e)) {
    const Lane lane = LaneOf(e->getType());
    const std::string text = FloatLiteral(literal->getValueAsApproximateDouble(), lane.bits == 64);
    if (text.empty()) Fail(loc, "an infinite double literal");
    return text;  // a half literal is a float holding a half value
  }
  if (llvm::isa<clang::UnaryExprOrTypeTraitExpr>(e) || llvm::isa<clang::OffsetOfExpr>(e)) {
    clang::Expr::EvalResult result;
    if (!e->EvaluateAsInt(result, context_)) Fail(loc, "a sizeof kilnc cannot evaluate");
    return IntLiteral(result.Val.getInt(), LaneOf(e->getType()));
  }
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (const auto* constant = llvm::dyn_cast<clang::EnumConstantDecl>(ref->getDecl())) {
      return IntLiteral(constant->getInitVal(), LaneOf(e->getType()));
    }
    if (const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) {
      if (pointer_params_.count(var))
        Fail(loc, "pointer parameter '" + var->getNameAsString() + "' used as a value");
      if (usr_params_.count(var)) {
        Fail(loc, "usrData used other than by reading through it or testing it against NULL (passed on, or "
                  "pointer arithmetic)");
      }
      if (var->getType()->isPointerType() && !var->hasGlobalStorage()) {
        const auto* record = var->getType()->getPointeeType()->getAs<clang::RecordType>();
        if (record && record->getDecl()->getName() == "KilnKernelLaunch") return "kiln";
      }
      return VarRef(var, loc);
    }
    Fail(loc, "a reference to '" + ref->getDecl()->getNameAsString() + "' as a value");
  }
  if (const auto* cast = llvm::dyn_cast<clang::CastExpr>(e)) return Cast(cast);
  if (const auto* convert = llvm::dyn_cast<clang::ConvertVectorExpr>(e)) {
    const clang::Expr* src = convert->getSrcExpr();
    return Convert(Expr(src), src->getType(), e->getType(), loc);
  }
  if (const auto* op = llvm::dyn_cast<clang::BinaryOperator>(e)) return Binary(op);
  if (const auto* op = llvm::dyn_cast<clang::UnaryOperator>(e)) return Unary(op);
  if (const auto* op = llvm::dyn_cast<clang::ConditionalOperator>(e)) {
    if (!LaneOf(op->getCond()->getType()).ok || LaneOf(op->getCond()->getType()).count != 1) {
      Fail(loc, "a vector condition in '?:'");
    }
    return "(" + Cond(op->getCond()) + " ? " + Expr(op->getTrueExpr()) + " : " + Expr(op->getFalseExpr()) +
           ")";
  }
  if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e)) return Call(call);
  if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(e)) {
    if (member->isArrow()) {
      const std::string param = PointerParam(member->getBase());
      if (param.empty()) Fail(loc, "'->' (a pointer)");
      return param + ".f_" + member->getMemberDecl()->getNameAsString();
    }
    return Expr(member->getBase()) + ".f_" + member->getMemberDecl()->getNameAsString();
  }
  if (const auto* swizzle = llvm::dyn_cast<clang::ExtVectorElementExpr>(e)) {
    if (swizzle->isArrow()) Fail(loc, "'->' on a vector pointer");
    llvm::SmallVector<uint32_t, 4> indices;
    swizzle->getEncodedElementAccess(indices);
    std::string letters;
    for (uint32_t i : indices) {
      if (i > 3) Fail(loc, "a swizzle beyond the fourth lane");
      letters += "xyzw"[i];
    }
    const clang::Expr* base = swizzle->getBase();
    if (!LaneOf(base->getType()).ok || LaneOf(base->getType()).count == 1) Fail(loc, "a swizzle of a scalar");
    return Expr(base) + "." + letters;
  }
  if (const auto* subscript = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
    const clang::Expr* base = subscript->getBase()->IgnoreParenImpCasts();
    std::string index = Expr(subscript->getIdx());
    const Lane index_lane = LaneOf(subscript->getIdx()->getType());
    if (index_lane.bits == 64) index = "int(" + index + ")";
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(base)) {
      const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
      if (var && var->getType()->isPointerType() && var->hasGlobalStorage()) {
        return PointerRead(var, subscript->getIdx(), loc);
      }
    }
    if (!PointerParam(base).empty()) {
      clang::Expr::EvalResult index_value;
      if (subscript->getIdx()->EvaluateAsInt(index_value, context_) && index_value.Val.getInt() == 0) {
        return PointerParam(base);
      }
      Fail(loc, "indexing a pointer parameter past its element");
    }
    if (subscript->getBase()->getType()->isPointerType() && !base->getType()->isArrayType()) {
      Fail(loc, "indexing through a pointer");
    }
    return Expr(base) + "[" + index + "]";
  }
  if (const auto* compound = llvm::dyn_cast<clang::CompoundLiteralExpr>(e)) {
    const clang::Expr* init = compound->getInitializer();
    if (const auto* list = llvm::dyn_cast<clang::InitListExpr>(init)) return InitList(list, e->getType());
    return Expr(init);
  }
  if (const auto* list = llvm::dyn_cast<clang::InitListExpr>(e)) return InitList(list, e->getType());
  if (llvm::isa<clang::ImplicitValueInitExpr>(e)) return Zero(e->getType(), loc);
  if (llvm::isa<clang::StringLiteral>(e)) Fail(loc, "a string literal");
  Fail(loc, std::string("the expression kind '") + e->getStmtClassName() + "'");
}

void KernelLowering::VarDecl(const clang::VarDecl* var, int indent, std::string* out) {
  const std::string pad(indent * 2, ' ');
  if (var->isStaticLocal())
    Fail(var->getLocation(), "static local variable '" + var->getNameAsString() + "'");
  if (var->getType()->isPointerType() && var->getInit() && IsUsrPointer(var->getInit())) {
    usr_params_.insert(var);  // `const P* p = (const P*)usrData;`: reads through p read usrData
    return;
  }
  std::string init;
  if (const clang::Expr* e = var->getInit()) {
    const auto* list = llvm::dyn_cast<clang::InitListExpr>(e->IgnoreParens());
    init = list ? InitList(list, var->getType()) : Expr(e);
  }
  // Declared after the initializer is lowered: `int x = x;` is not C anyway, and shadowing stays right.
  const std::string decl = Declare(var->getType(), LocalName(var), var->getLocation());
  *out += pad + decl + (init.empty() ? "" : " = " + init) + ";\n";
}

void KernelLowering::Block(const clang::Stmt* s, int indent, std::string* out) {
  const std::string pad(indent * 2, ' ');
  if (const auto* compound = llvm::dyn_cast<clang::CompoundStmt>(s)) {
    *out += "{\n";
    for (const clang::Stmt* child : compound->body()) Stmt(child, indent + 1, out);
    *out += pad + "}";
    return;
  }
  *out += "{\n";
  Stmt(s, indent + 1, out);
  *out += pad + "}";
}

void KernelLowering::Stmt(const clang::Stmt* s, int indent, std::string* out) {
  const std::string pad(indent * 2, ' ');
  const clang::SourceLocation loc = s->getBeginLoc();
  if (const auto* compound = llvm::dyn_cast<clang::CompoundStmt>(s)) {
    *out += pad;
    Block(compound, indent, out);
    *out += "\n";
    return;
  }
  if (const auto* decl = llvm::dyn_cast<clang::DeclStmt>(s)) {
    for (const clang::Decl* d : decl->decls()) {
      if (const auto* var = llvm::dyn_cast<clang::VarDecl>(d)) {
        VarDecl(var, indent, out);
      } else if (!llvm::isa<clang::RecordDecl>(d) && !llvm::isa<clang::TypedefNameDecl>(d)) {
        Fail(d->getLocation(), "a local declaration kilnc cannot lower");
      }
    }
    return;
  }
  if (const auto* e = llvm::dyn_cast<clang::Expr>(s)) {
    std::string text = Expr(e);
    *out += pad + text + ";\n";
    return;
  }
  if (llvm::isa<clang::NullStmt>(s)) return;
  if (const auto* ret = llvm::dyn_cast<clang::ReturnStmt>(s)) {
    *out += pad + "return" + (ret->getRetValue() ? " " + Expr(ret->getRetValue()) : std::string()) + ";\n";
    return;
  }
  if (llvm::isa<clang::BreakStmt>(s)) {
    *out += pad + "break;\n";
    return;
  }
  if (llvm::isa<clang::ContinueStmt>(s)) {
    *out += pad + "continue;\n";
    return;
  }
  if (const auto* stmt = llvm::dyn_cast<clang::IfStmt>(s)) {
    if (stmt->getConditionVariable() || stmt->getInit()) Fail(loc, "a declaration in an if condition");
    *out += pad + "if " + Cond(stmt->getCond()) + " ";
    Block(stmt->getThen(), indent, out);
    if (stmt->getElse()) {
      *out += " else ";
      Block(stmt->getElse(), indent, out);
    }
    *out += "\n";
    return;
  }
  if (const auto* stmt = llvm::dyn_cast<clang::WhileStmt>(s)) {
    if (stmt->getConditionVariable()) Fail(loc, "a declaration in a while condition");
    *out += pad + "while " + Cond(stmt->getCond()) + " ";
    Block(stmt->getBody(), indent, out);
    *out += "\n";
    return;
  }
  if (const auto* stmt = llvm::dyn_cast<clang::DoStmt>(s)) {
    *out += pad + "do ";
    Block(stmt->getBody(), indent, out);
    *out += " while " + Cond(stmt->getCond()) + ";\n";
    return;
  }
  if (const auto* stmt = llvm::dyn_cast<clang::ForStmt>(s)) {
    if (stmt->getConditionVariable()) Fail(loc, "a declaration in a for condition");
    // { init; for (; cond; inc) body }: C's init may declare several variables or be any expression.
    *out += pad + "{\n";
    if (stmt->getInit()) Stmt(stmt->getInit(), indent + 1, out);
    *out += pad + "  for (; " + (stmt->getCond() ? Cond(stmt->getCond()) : std::string("true")) + "; " +
            (stmt->getInc() ? Expr(stmt->getInc()) : std::string()) + ") ";
    Block(stmt->getBody(), indent + 1, out);
    *out += "\n" + pad + "}\n";
    return;
  }
  if (const auto* stmt = llvm::dyn_cast<clang::SwitchStmt>(s)) {
    if (stmt->getConditionVariable() || stmt->getInit()) Fail(loc, "a declaration in a switch");
    const clang::Expr* cond = stmt->getCond();
    const Lane lane = LaneOf(cond->getType());
    if (!lane.ok || lane.bits > 32 || lane.is_float)
      Fail(loc, "a switch over '" + cond->getType().getAsString() + "'");
    *out += pad + "switch (" + Expr(cond) + ") {\n";
    const auto* body = llvm::dyn_cast<clang::CompoundStmt>(stmt->getBody());
    if (!body) Fail(loc, "a switch whose body is not a block");
    for (const clang::Stmt* child : body->body()) {
      const clang::Stmt* current = child;
      while (true) {
        if (const auto* c = llvm::dyn_cast<clang::CaseStmt>(current)) {
          if (c->getRHS()) Fail(c->getBeginLoc(), "a case range");
          clang::Expr::EvalResult value;
          if (!c->getLHS()->EvaluateAsInt(value, context_)) Fail(c->getBeginLoc(), "a non-constant case");
          *out += pad + "  case " + IntLiteral(value.Val.getInt(), lane) + ":\n";
          current = c->getSubStmt();
        } else if (const auto* d = llvm::dyn_cast<clang::DefaultStmt>(current)) {
          *out += pad + "  default:\n";
          current = d->getSubStmt();
        } else {
          break;
        }
      }
      Stmt(current, indent + 2, out);
    }
    *out += pad + "}\n";
    return;
  }
  if (llvm::isa<clang::CaseStmt>(s) || llvm::isa<clang::DefaultStmt>(s))
    Fail(loc, "a case label inside a nested statement");
  if (llvm::isa<clang::GotoStmt>(s) || llvm::isa<clang::LabelStmt>(s)) Fail(loc, "goto");
  Fail(loc, std::string("the statement kind '") + s->getStmtClassName() + "'");
}

}  // namespace compiler
}  // namespace kiln
