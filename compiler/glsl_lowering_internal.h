// What the files of the GPU lowering share: the lowering of one kernel (KernelLowering, its members defined
// by topic in glsl_*.cc) and the state every kernel of a script must agree on (ScriptLowering).
#ifndef KILN_COMPILER_GLSL_LOWERING_INTERNAL_H_
#define KILN_COMPILER_GLSL_LOWERING_INTERNAL_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "clang/AST/APValue.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "compiler/glsl_types.h"
#include "compiler/script_info.h"

namespace kiln {
namespace compiler {

// ---- The GLSL helper library (glsl_builtins.cc): emitted into a shader only when used ----

struct LibraryEntry {
  const char* name;
  const char* deps;  // space-separated
  const char* text;
};

const LibraryEntry* FindLibrary(const std::string& name);

// The scalar helpers that take and return floats get per-component vector overloads.
extern const std::set<std::string> kComponentwise;

std::string VectorOverloads(const std::string& name, int arity);

// ---- Script globals on the GPU ----

struct GlobalSlot {
  int row = -1;        // index into GpuLowering::globals
  std::string member;  // GLSL member declaration inside the global block (without offset)
  std::string read;    // GLSL expression for the value (register form)
  uint32_t offset = 0;
  bool allocation = false;      // rs_allocation or a pointer global
  int allocation_index = -1;    // k: binding 10 + k
  clang::QualType pointee;      // pointer globals: the element type
  clang::QualType struct_type;  // struct globals: the type whose GLSL struct the read constructs
  std::string why_not;          // non-empty: the global has no GPU form
};

// ---- The lowering of one kernel ----

class Failure {};  // thrown inside a kernel's lowering, caught at its top (never leaves the GPU lowering)

class ScriptLowering;

class KernelLowering {
 public:
  KernelLowering(ScriptLowering* script, clang::ASTContext& context) : script_(script), context_(context) {}

  bool Lower(const clang::FunctionDecl* kernel, const KernelDesc& desc, const KernelInfo& info,
             GpuKernelLowering* out);
  // The functions a reduction's pragma names; all but `accumulator` may be NULL.
  struct ReductionFunctions {
    const clang::FunctionDecl* initializer = nullptr;
    const clang::FunctionDecl* accumulator = nullptr;
    const clang::FunctionDecl* combiner = nullptr;
    const clang::FunctionDecl* outconverter = nullptr;
  };
  bool LowerReduction(const ReductionDesc& desc, const ReductionInfo& info, const ReductionFunctions& fns,
                      GpuReductionLowering* out);
  const std::string& reason() const { return reason_; }

 private:
  std::string Assemble(const std::string& what, clang::SourceLocation loc, const std::vector<Storage>& inputs,
                       size_t views, const std::string& preamble, const std::string& bindings,
                       const std::string& main);
  Storage ElementStorage(clang::QualType type, const char* role, clang::SourceLocation loc);
  // Records the extensions and device features a buffer of `storage` needs.
  void NoteStorage(const Storage& storage);
  std::string Argument(ArgKind kind, const clang::ParmVarDecl* param,
                       const std::vector<clang::QualType>& input_types, const std::vector<Storage>& storages,
                       const std::string& pad, size_t* input, std::string* main);
  uint32_t Std430Size(clang::QualType type, uint32_t* align, clang::SourceLocation loc);
  void StoreBytes(clang::QualType type, const std::string& value, const std::string& offset, int depth,
                  int indent, clang::SourceLocation loc, std::string* out);
  [[noreturn]] void Fail(clang::SourceLocation loc, const std::string& what);
  std::string Where(clang::SourceLocation loc) const;

  std::string Type(clang::QualType type, clang::SourceLocation loc);
  std::string Declare(clang::QualType type, const std::string& name, clang::SourceLocation loc);
  std::string Zero(clang::QualType type, clang::SourceLocation loc);
  std::string StructName(const clang::RecordDecl* record, clang::SourceLocation loc);
  std::string ValueLiteral(const clang::APValue& value, clang::QualType type, clang::SourceLocation loc);
  std::string Wrap(const std::string& text, clang::QualType type);
  std::string MatrixCall(const clang::CallExpr* e, bool get);
  std::string SampleCall(const clang::CallExpr* e);
  std::string Convert(const std::string& text, clang::QualType from, clang::QualType to,
                      clang::SourceLocation loc);
  std::string ToBool(const std::string& text, clang::QualType type, clang::SourceLocation loc);

  std::string Expr(const clang::Expr* e);
  std::string Cond(const clang::Expr* e);
  std::string Cast(const clang::CastExpr* e);
  std::string Binary(const clang::BinaryOperator* e);
  std::string Unary(const clang::UnaryOperator* e);
  std::string Call(const clang::CallExpr* e);
  std::string InitList(const clang::InitListExpr* e, clang::QualType type);
  std::string VarRef(const clang::VarDecl* var, clang::SourceLocation loc);
  std::string LocalName(const clang::VarDecl* var);
  std::string FunctionName(const clang::FunctionDecl* fd, clang::SourceLocation loc);
  void LowerFunction(const clang::FunctionDecl* fd);
  void CheckWritable(const clang::Expr* target, clang::SourceLocation loc);
  std::string PointerRead(const clang::VarDecl* var, const clang::Expr* index, clang::SourceLocation loc);
  std::string Allocation(const clang::Expr* arg, clang::SourceLocation loc, GlobalSlot** slot);
  std::string AllocationAccessor(GlobalSlot* slot, const clang::VarDecl* var, clang::QualType element,
                                 bool write, clang::SourceLocation loc);
  void Use(const std::string& library);
  void UseGlobal(const clang::VarDecl* var);

  void Stmt(const clang::Stmt* s, int indent, std::string* out);
  void Block(const clang::Stmt* s, int indent, std::string* out);
  void VarDecl(const clang::VarDecl* var, int indent, std::string* out);

  ScriptLowering* script_;
  clang::ASTContext& context_;
  std::string reason_;
  bool needs_int64_ = false;
  bool needs_8bit_ = false;
  bool needs_16bit_ = false;
  bool needs_allocation_info_ = false;
  bool reduction_ = false;    // lowering a reduction (dim.w is its group count, not a random seed)
  bool needs_fault_ = false;  // an allocation access can fault: declare the fault record (binding 27)
  std::set<const clang::VarDecl*> pointer_params_;  // pointer parameters lowered to in/inout parameters
  // root()'s usrData and the local pointers initialized from it (`const P* p = (const P*)usrData;`). The
  // launch's usrData bytes are a uint word array at binding 28 (kiln/spirv_abi.h), with their size: reads
  // through it (*p, p->f, p[i], p[i].f[j]) become word reads, tests against NULL test the size.
  std::set<const clang::VarDecl*> usr_params_;
  bool uses_usr_ = false;  // declare binding 28
  // Where an lvalue lies in usrData's bytes: `offset` bytes past word `base` (a uint expression, "" for 0).
  struct UsrPlace {
    std::string base;
    uint32_t offset = 0;
  };
  bool IsUsrPointer(const clang::Expr* e);
  bool UsrPlaceOf(const clang::Expr* e, UsrPlace* place);
  void UsrIndex(const clang::Expr* index, clang::QualType element, UsrPlace* place);
  // The value of `e` when it tests usrData (`usrData == NULL`, `usrData != 0`, `!usrData`, `usrData` as a
  // condition); false when `e` is not such a test.
  bool UsrNullTest(const clang::Expr* e, std::string* value);
  // The GLSL name of a pointer parameter that `e` names, or "" when `e` is not one.
  std::string PointerParam(const clang::Expr* e) {
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
    const auto* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
    return var && pointer_params_.count(var) ? locals_.at(var) : std::string();
  }

  std::map<const clang::FunctionDecl*, std::string> function_names_;
  std::set<const clang::FunctionDecl*> lowering_;
  std::vector<std::string> function_text_;  // in dependency order
  std::map<const clang::RecordDecl*, std::string> struct_names_;
  std::vector<std::string> struct_text_;
  std::vector<std::string> library_order_;
  std::set<std::string> library_;
  std::map<const clang::VarDecl*, std::string> locals_;
  int local_counter_ = 0;
  std::set<const clang::VarDecl*> globals_used_;
  std::map<const clang::VarDecl*, std::string> constants_;  // file-scope constants: name -> definition
  std::vector<std::string> constant_text_;
  struct AllocationUse {
    std::string storage_type;
    bool write = false;
  };
  std::map<int, AllocationUse> allocations_;      // by allocation index
  std::map<std::string, std::string> accessors_;  // name -> text
  std::vector<std::string> accessor_order_;
  const clang::FunctionDecl* kernel_ = nullptr;
  // The script's call into the prelude being lowered, for reasons that arise inside the prelude.
  clang::SourceLocation user_site_;
  std::string user_callee_;
};

class ScriptLowering {
 public:
  ScriptLowering(clang::ASTContext& context, ScriptInfo* info) : context_(context), info_(info) {}

  void Run();

  clang::ASTContext& context() { return context_; }
  KernelPrecision precision() const { return info_->module.precision; }
  bool IsWritten(const clang::VarDecl* var) const { return written_.count(var->getCanonicalDecl()) != 0; }
  GlobalSlot* FindGlobal(const clang::VarDecl* var) {
    auto it = globals_.find(var->getCanonicalDecl());
    return it == globals_.end() ? nullptr : &it->second;
  }
  void NoteGlobalRead() { reads_globals_ = true; }
  bool ClaimAllocationUnit(const GlobalSlot& slot, uint32_t unit, std::string* why);
  std::string StructName(const clang::RecordDecl* record);
  bool IsPrelude(clang::SourceLocation loc) const;
  // The register value of `type` stored at `offset` bytes into a uint word array: `words[i]`, or `words(i)`
  // when `call` (an accessor function), i being `base + offset / 4` when `base` (a uint word index) is given.
  bool WordRead(clang::QualType type, uint32_t offset, const std::string& words, std::string* out,
                std::string* why, const std::string& base = std::string(), bool call = false);

 private:
  void CollectDecls();
  void LayOutGlobals();
  bool TypeName(clang::QualType type, std::string* out, std::string* why);

  clang::ASTContext& context_;
  ScriptInfo* info_;
  std::set<const clang::VarDecl*> written_;
  std::map<std::string, const clang::FunctionDecl*> functions_;
  std::map<std::string, const clang::VarDecl*> vars_;
  std::map<const clang::VarDecl*, GlobalSlot> globals_;
  std::map<int, uint32_t> allocation_units_;  // global row -> unit size
  std::map<const clang::RecordDecl*, std::string> struct_names_;
  uint32_t block_size_ = 0;
  bool reads_globals_ = false;
};

}  // namespace compiler
}  // namespace kiln

#endif  // KILN_COMPILER_GLSL_LOWERING_INTERNAL_H_
