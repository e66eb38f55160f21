// Reading, validating and writing .kmod kernel modules. See module.h and kmod.fbs.
#include "formats/kmod/module.h"

#include <cstring>
#include <set>
#include <sstream>
#include <utility>

#include "kmod_generated.h"

namespace kiln {
namespace {

namespace fb = ::kiln::kmod;

// Struct types nest; anything deeper than this is a corrupt or hostile module, not a real script.
constexpr int kMaxTypeDepth = 16;
// No real element, global or argument block comes near this; it keeps size arithmetic far from overflow.
constexpr uint32_t kMaxObjectSize = 1u << 28;

bool IsKnownScalarType(KilnType type) {
  switch (type) {
    case kKilnFloat16:
    case kKilnFloat32:
    case kKilnFloat64:
    case kKilnInt8:
    case kKilnInt16:
    case kKilnInt32:
    case kKilnInt64:
    case kKilnUInt8:
    case kKilnUInt16:
    case kKilnUInt32:
    case kKilnUInt64:
    case kKilnBool:
      return true;
    default:
      return false;
  }
}

bool IsPowerOfTwo(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

bool IsIdentifier(const std::string& name) {
  if (name.empty() || name.size() > 1024) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

const char* KindName(KernelTypeKind kind) {
  switch (kind) {
    case KernelTypeKind::kVoid:
      return "void";
    case KernelTypeKind::kScalar:
      return "scalar";
    case KernelTypeKind::kStruct:
      return "struct";
    case KernelTypeKind::kPointer:
      return "pointer";
    case KernelTypeKind::kAllocation:
      return "allocation";
    case KernelTypeKind::kObject:
      return "object";
  }
  return "unknown";
}

// ---- Structural validation, shared by the reader and the writer ----

class Validator {
 public:
  explicit Validator(std::string* error) : error_(error) {}

  bool Module(const KernelModuleDesc& m) {
    if (m.format_version == 0 || m.format_version > kKernelModuleFormatVersion) {
      return Fail("module format version " + std::to_string(m.format_version) +
                  " is not supported (this runtime reads versions 1 to " +
                  std::to_string(kKernelModuleFormatVersion) + "); recompile the script with this kilnc");
    }
    if (kMaxSupportedHalLevel < m.hal_level) {
      return Fail("module needs HAL level " + m.hal_level.ToString() + ", this runtime supports up to " +
                  kMaxSupportedHalLevel.ToString());
    }
    if (m.abi_version != KILN_KERNEL_ABI_VERSION) {
      return Fail("module was generated for kernel ABI version " + std::to_string(m.abi_version) +
                  ", this runtime implements version " + std::to_string(KILN_KERNEL_ABI_VERSION));
    }
    if (!m.source_checksum.empty() && m.source_checksum.size() != 32) {
      return Fail("header: source checksum has " + std::to_string(m.source_checksum.size()) +
                  " bytes, expected a 32-byte SHA-256");
    }
    std::set<std::string> symbols;  // every name the payloads define, across kinds
    for (size_t i = 0; i < m.kernels.size(); ++i) {
      if (!Kernel(m, m.kernels[i], "kernel " + std::to_string(i), &symbols)) return false;
    }
    for (size_t i = 0; i < m.globals.size(); ++i) {
      if (!Global(m.globals[i], "global " + std::to_string(i), &symbols)) return false;
    }
    for (size_t i = 0; i < m.invokables.size(); ++i) {
      if (!Invokable(m, m.invokables[i], "invokable " + std::to_string(i), &symbols)) return false;
    }
    for (size_t i = 0; i < m.reductions.size(); ++i) {
      if (!Reduction(m, m.reductions[i], "reduction " + std::to_string(i), &symbols)) return false;
    }
    if (m.payloads.empty()) return Fail("module has no code payload");
    std::set<std::string> targets;
    for (size_t i = 0; i < m.payloads.size(); ++i) {
      const PayloadDesc& p = m.payloads[i];
      const std::string where = "payload " + std::to_string(i);
      if (p.target.empty()) return Fail(where + ": empty target name");
      if (!targets.insert(p.target).second) return Fail(where + ": duplicate target '" + p.target + "'");
      if (p.data.empty()) return Fail(where + " ('" + p.target + "'): no data");
    }
    for (size_t i = 0; i < m.imports.size(); ++i) {
      if (!IsIdentifier(m.imports[i])) {
        return Fail("import " + std::to_string(i) + ": '" + m.imports[i] + "' is not a symbol name");
      }
    }
    return true;
  }

 private:
  bool Fail(const std::string& message) {
    *error_ = message;
    return false;
  }

  bool Name(const std::string& name, const std::string& where, std::set<std::string>* symbols) {
    if (!IsIdentifier(name)) return Fail(where + ": '" + name + "' is not a valid name");
    if (!symbols->insert(name).second) return Fail(where + ": duplicate name '" + name + "'");
    return true;
  }

  bool Symbol(const std::string& symbol, const std::string& expected, const std::string& where) {
    if (symbol != expected) {
      return Fail(where + ": entry point is '" + symbol + "', expected '" + expected + "'");
    }
    return true;
  }

  // Each name must be a reflected pointer global, once: the runtime looks them up to refuse a launch while
  // one is unbound, and a name it cannot find would make that check silently pass (or refuse every launch).
  bool PointerGlobals(const std::vector<std::string>& names, const KernelModuleDesc& m,
                      const std::string& where) {
    std::set<std::string> seen;
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string pwhere = where + " pointer global " + std::to_string(i) + " '" + names[i] + "'";
      const GlobalDesc* g = m.FindGlobal(names[i]);
      if (g == nullptr) return Fail(pwhere + ": the module has no global of that name");
      if (!g->is_pointer()) {
        return Fail(pwhere + ": the global is " +
                    (g->is_allocation ? "an rs_allocation" : "not an allocation") +
                    ", not a pointer bound to one");
      }
      if (!seen.insert(names[i]).second) return Fail(pwhere + ": listed twice");
    }
    return true;
  }

  bool Level(const HalLevel& level, const KernelModuleDesc& m, const std::string& where) {
    if (m.hal_level < level) {
      return Fail(where + ": needs HAL level " + level.ToString() + ", above the module's " +
                  m.hal_level.ToString());
    }
    return true;
  }

  bool Type(const KernelTypeDesc& t, const std::string& where, int depth = 0) {
    if (depth > kMaxTypeDepth)
      return Fail(where + ": types nest deeper than " + std::to_string(kMaxTypeDepth));
    if (t.size > kMaxObjectSize)
      return Fail(where + ": type size " + std::to_string(t.size) + " is too large");
    switch (t.kind) {
      case KernelTypeKind::kVoid:
        return true;
      case KernelTypeKind::kScalar:
      case KernelTypeKind::kPointer:
        if (t.kind == KernelTypeKind::kPointer && t.element_type == kKilnNoType) break;  // void* or struct*
        if (!IsKnownScalarType(t.element_type)) {
          return Fail(where + ": unknown element type " + std::to_string(static_cast<int>(t.element_type)));
        }
        if (t.vector_size < 1 || t.vector_size > 4) {
          return Fail(where + ": vector size " + std::to_string(t.vector_size) + " (must be 1 to 4)");
        }
        break;
      case KernelTypeKind::kStruct:
        for (size_t i = 0; i < t.fields.size(); ++i) {
          const KernelFieldDesc& f = t.fields[i];
          const std::string fwhere = where + " field " + std::to_string(i) + " '" + f.name + "'";
          if (!Type(f.type, fwhere, depth + 1)) return false;
          if (f.offset > t.size || f.type.size > t.size - f.offset) {
            return Fail(fwhere + ": offset " + std::to_string(f.offset) + " + size " +
                        std::to_string(f.type.size) + " exceeds the struct's " + std::to_string(t.size));
          }
        }
        break;
      case KernelTypeKind::kAllocation:
      case KernelTypeKind::kObject:
        break;
      default:
        return Fail(where + ": unknown type kind " + std::to_string(static_cast<int>(t.kind)));
    }
    if (t.kind != KernelTypeKind::kPointer || t.size != 0) {
      if (t.size == 0) return Fail(where + ": " + KindName(t.kind) + " type of size 0");
      if (!IsPowerOfTwo(t.alignment)) {
        return Fail(where + ": alignment " + std::to_string(t.alignment) + " is not a power of two");
      }
    }
    return true;
  }

  bool Kernel(const KernelModuleDesc& m, const KernelDesc& k, std::string where,
              std::set<std::string>* symbols) {
    if (!Name(k.name, where, symbols)) return false;
    where += " '" + k.name + "'";
    if (!Symbol(k.expand_symbol, "__kiln_expand_" + k.name, where)) return false;
    const uint32_t known = kKernelSigIn | kKernelSigOut | kKernelSigUsr | kKernelSigX | kKernelSigY |
                           kKernelSigKernel | kKernelSigZ | kKernelSigCtxt;
    if (k.signature & ~known) return Fail(where + ": unknown signature bits " + std::to_string(k.signature));
    if (k.inputs.size() > KILN_KERNEL_MAX_INPUTS) {
      return Fail(where + ": " + std::to_string(k.inputs.size()) + " inputs, at most " +
                  std::to_string(KILN_KERNEL_MAX_INPUTS) + " are allowed");
    }
    if (((k.signature & kKernelSigIn) != 0) != !k.inputs.empty()) {
      return Fail(where + ": the In signature bit disagrees with its " + std::to_string(k.inputs.size()) +
                  " inputs");
    }
    if (((k.signature & kKernelSigOut) != 0) != (k.output.kind != KernelTypeKind::kVoid)) {
      return Fail(where + ": the Out signature bit disagrees with its output type");
    }
    if (k.root_style == ((k.signature & kKernelSigKernel) != 0)) {
      return Fail(where + ": root-style flag disagrees with the Kernel signature bit");
    }
    if (k.root_style && k.inputs.size() > 1)
      return Fail(where + ": a root-style kernel has at most one input");
    if (!k.root_style && (k.signature & kKernelSigUsr))
      return Fail(where + ": only root() kernels take usrData");
    // RS_KERNEL kernels may have neither (they run over a launch-option range); root() kernels may not.
    if (k.root_style && k.inputs.empty() && k.output.kind == KernelTypeKind::kVoid) {
      return Fail(where + ": a root-style kernel has neither inputs nor an output");
    }
    for (size_t i = 0; i < k.inputs.size(); ++i) {
      if (!Type(k.inputs[i], where + " input " + std::to_string(i))) return false;
      if (k.inputs[i].kind == KernelTypeKind::kVoid && !k.root_style) {
        return Fail(where + " input " + std::to_string(i) + ": void input");
      }
    }
    if (!Type(k.output, where + " output")) return false;
    if (!Level(k.hal_level, m, where)) return false;
    return PointerGlobals(k.pointer_globals, m, where);
  }

  bool Global(const GlobalDesc& g, std::string where, std::set<std::string>* symbols) {
    if (!Name(g.name, where, symbols)) return false;
    where += " '" + g.name + "'";
    if (!Type(g.type, where)) return false;
    if (g.size == 0 || g.size > kMaxObjectSize) return Fail(where + ": size " + std::to_string(g.size));
    if (!IsPowerOfTwo(g.alignment)) {
      return Fail(where + ": alignment " + std::to_string(g.alignment) + " is not a power of two");
    }
    if (!g.default_value.empty() && g.default_value.size() != g.size) {
      return Fail(where + ": default value has " + std::to_string(g.default_value.size()) +
                  " bytes, the global " + std::to_string(g.size));
    }
    return true;
  }

  bool Invokable(const KernelModuleDesc& m, const InvokableDesc& f, std::string where,
                 std::set<std::string>* symbols) {
    if (!Name(f.name, where, symbols)) return false;
    where += " '" + f.name + "'";
    if (!Symbol(f.symbol, "__kiln_invoke_" + f.name, where)) return false;
    if (!IsPowerOfTwo(f.args_alignment)) return Fail(where + ": argument alignment is not a power of two");
    if (f.args_size > kMaxObjectSize) return Fail(where + ": argument block too large");
    uint32_t end = 0;
    for (size_t i = 0; i < f.params.size(); ++i) {
      const ParamDesc& p = f.params[i];
      const std::string pwhere = where + " parameter " + std::to_string(i) + " '" + p.name + "'";
      if (!Type(p.type, pwhere)) return false;
      if (p.type.kind == KernelTypeKind::kVoid) return Fail(pwhere + ": void parameter");
      if (p.offset < end || p.offset % p.type.alignment != 0 || p.offset > f.args_size ||
          p.type.size > f.args_size - p.offset) {
        return Fail(pwhere + ": offset " + std::to_string(p.offset) + " does not fit the " +
                    std::to_string(f.args_size) + "-byte argument block in order and aligned");
      }
      end = p.offset + p.type.size;
    }
    return Level(f.hal_level, m, where) && PointerGlobals(f.pointer_globals, m, where);
  }

  bool Reduction(const KernelModuleDesc& m, const ReductionDesc& r, std::string where,
                 std::set<std::string>* symbols) {
    if (!Name(r.name, where, symbols)) return false;
    where += " '" + r.name + "'";
    const std::string prefix = "__kiln_reduce_" + r.name;
    if (!Symbol(r.init_symbol, prefix + "_init", where) ||
        !Symbol(r.accum_symbol, prefix + "_accum", where) ||
        !Symbol(r.combine_symbol, prefix + "_combine", where) ||
        !Symbol(r.out_symbol, prefix + "_out", where)) {
      return false;
    }
    if (r.accumulator.empty()) return Fail(where + ": no accumulator function");
    if (r.accumulator_size == 0 || r.accumulator_size > kMaxObjectSize) {
      return Fail(where + ": accumulator size " + std::to_string(r.accumulator_size));
    }
    if (!IsPowerOfTwo(r.accumulator_alignment))
      return Fail(where + ": accumulator alignment is not a power of two");
    if (r.inputs.empty() || r.inputs.size() > KILN_KERNEL_MAX_INPUTS) {
      return Fail(where + ": " + std::to_string(r.inputs.size()) + " inputs (must be 1 to " +
                  std::to_string(KILN_KERNEL_MAX_INPUTS) + ")");
    }
    if (r.signature & ~(kKernelSigX | kKernelSigY | kKernelSigZ | kKernelSigCtxt)) {
      return Fail(where + ": signature bits other than X, Y, Z, Ctxt");
    }
    if (!Type(r.accumulator_type, where + " accumulator")) return false;
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      if (!Type(r.inputs[i], where + " input " + std::to_string(i))) return false;
    }
    if (!Type(r.result, where + " result")) return false;
    if (r.result.kind == KernelTypeKind::kVoid) return Fail(where + ": void result");
    return Level(r.hal_level, m, where) && PointerGlobals(r.pointer_globals, m, where);
  }

  std::string* error_;
};

// ---- FlatBuffers -> desc ----

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

HalLevel Level(const fb::HalLevel* level) {
  HalLevel out;
  if (level) {
    out.major = level->major();
    out.minor = level->minor();
  }
  return out;
}

bool ReadType(const fb::Type* t, KernelTypeDesc* out, const std::string& where, std::string* error,
              int depth = 0) {
  if (!t) {
    *error = where + ": missing type";
    return false;
  }
  if (depth > kMaxTypeDepth) {
    *error = where + ": types nest deeper than " + std::to_string(kMaxTypeDepth);
    return false;
  }
  out->kind = static_cast<KernelTypeKind>(t->kind());
  // Checked before the cast: a KilnType outside its enumerators' range is undefined behaviour to hold.
  if (t->element_type() < 0 || t->element_type() > kKilnInt4) {
    *error = where + ": unknown element type " + std::to_string(t->element_type());
    return false;
  }
  out->element_type = static_cast<KilnType>(t->element_type());
  out->vector_size = t->vector_size();
  out->size = t->size();
  out->alignment = t->alignment();
  out->name = Str(t->name());
  out->array_size = t->array_size();
  out->fields.clear();
  if (t->fields()) {
    for (const fb::Field* f : *t->fields()) {
      if (!f) continue;
      KernelFieldDesc field;
      field.name = Str(f->name());
      field.offset = f->offset();
      if (!ReadType(f->type(), &field.type, where + " field '" + field.name + "'", error, depth + 1))
        return false;
      out->fields.push_back(std::move(field));
    }
  }
  return true;
}

bool ReadTypes(const flatbuffers::Vector<flatbuffers::Offset<fb::Type>>* types,
               std::vector<KernelTypeDesc>* out, const std::string& where, std::string* error) {
  out->clear();
  if (!types) return true;
  for (flatbuffers::uoffset_t i = 0; i < types->size(); ++i) {
    KernelTypeDesc t;
    if (!ReadType(types->Get(i), &t, where + " " + std::to_string(i), error)) return false;
    out->push_back(std::move(t));
  }
  return true;
}

std::vector<std::string> Strings(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (v) {
    for (const flatbuffers::String* s : *v) out.push_back(Str(s));
  }
  return out;
}

template <typename T>
std::vector<uint8_t> Bytes(const flatbuffers::Vector<T>* v) {
  if (!v) return {};
  return std::vector<uint8_t>(v->data(), v->data() + v->size());
}

bool Convert(const fb::Module* m, KernelModuleDesc* out, std::string* error) {
  const fb::Header* h = m->header();
  if (!h) {
    *error = "module has no header";
    return false;
  }
  *out = KernelModuleDesc();
  out->format_version = h->format_version();
  // Checked before anything else so that a newer module gets the version message, not a confusing one about
  // a field it uses differently.
  if (out->format_version > kKernelModuleFormatVersion) {
    *error = "module format version " + std::to_string(out->format_version) +
             " is newer than this runtime supports (" + std::to_string(kKernelModuleFormatVersion) +
             "); update the runtime or recompile the script with a matching kilnc";
    return false;
  }
  out->compiler_version = Str(h->compiler_version());
  out->source_name = Str(h->source_name());
  out->source_checksum = Bytes(h->source_checksum());
  out->hal_level = Level(h->hal_level());
  out->abi_version = h->abi_version();
  out->package_name = Str(m->package_name());
  if (m->precision() > fb::Precision::MAX) {
    *error = "unknown precision " + std::to_string(static_cast<int>(m->precision()));
    return false;
  }
  out->precision = static_cast<KernelPrecision>(m->precision());
  out->has_init = m->has_init();
  if (m->kernels()) {
    for (flatbuffers::uoffset_t i = 0; i < m->kernels()->size(); ++i) {
      const fb::Kernel* k = m->kernels()->Get(i);
      const std::string where = "kernel " + std::to_string(i);
      KernelDesc d;
      d.name = Str(k->name());
      d.expand_symbol = Str(k->expand_symbol());
      d.signature = k->signature();
      if (!ReadTypes(k->inputs(), &d.inputs, where + " '" + d.name + "' input", error)) return false;
      if (k->output() && !ReadType(k->output(), &d.output, where + " output", error)) return false;
      d.root_style = k->root_style();
      d.hal_level = Level(k->hal_level());
      d.cpu_only_reasons = Strings(k->cpu_only_reasons());
      d.pointer_globals = Strings(k->pointer_globals());
      out->kernels.push_back(std::move(d));
    }
  }
  if (m->globals()) {
    for (flatbuffers::uoffset_t i = 0; i < m->globals()->size(); ++i) {
      const fb::Global* g = m->globals()->Get(i);
      GlobalDesc d;
      d.name = Str(g->name());
      if (!ReadType(g->type(), &d.type, "global " + std::to_string(i) + " '" + d.name + "'", error))
        return false;
      d.size = g->size();
      d.alignment = g->alignment();
      d.default_value = Bytes(g->default_value());
      d.is_const = g->is_const();
      d.is_allocation = g->is_allocation();
      d.is_static = g->is_static();
      if (d.is_static && (d.is_const || d.is_allocation)) {
        *error = "global " + std::to_string(i) + " '" + d.name + "': a static global is never const or an allocation";
        return false;
      }
      if (g->accessed_as()) {
        for (flatbuffers::uoffset_t k = 0; k < g->accessed_as()->size(); ++k) {
          const int type = g->accessed_as()->Get(k);
          if (type <= kKilnNoType || type > kKilnInt4) {  // checked before the cast, as in ReadType
            *error = "global " + std::to_string(i) + " '" + d.name + "': accessed as unknown element type " +
                     std::to_string(type);
            return false;
          }
          d.accessed_as.push_back(static_cast<KilnType>(type));
        }
      }
      out->globals.push_back(std::move(d));
    }
  }
  if (m->invokables()) {
    for (flatbuffers::uoffset_t i = 0; i < m->invokables()->size(); ++i) {
      const fb::Invokable* f = m->invokables()->Get(i);
      InvokableDesc d;
      d.name = Str(f->name());
      d.symbol = Str(f->symbol());
      if (f->params()) {
        for (flatbuffers::uoffset_t j = 0; j < f->params()->size(); ++j) {
          const fb::Param* p = f->params()->Get(j);
          ParamDesc pd;
          pd.name = Str(p->name());
          pd.offset = p->offset();
          if (!ReadType(p->type(), &pd.type, "invokable '" + d.name + "' parameter " + std::to_string(j),
                        error)) {
            return false;
          }
          d.params.push_back(std::move(pd));
        }
      }
      d.args_size = f->args_size();
      d.args_alignment = f->args_alignment();
      d.hal_level = Level(f->hal_level());
      d.pointer_globals = Strings(f->pointer_globals());
      out->invokables.push_back(std::move(d));
    }
  }
  if (m->reductions()) {
    for (flatbuffers::uoffset_t i = 0; i < m->reductions()->size(); ++i) {
      const fb::Reduction* r = m->reductions()->Get(i);
      ReductionDesc d;
      d.name = Str(r->name());
      const std::string where = "reduction " + std::to_string(i) + " '" + d.name + "'";
      d.initializer = Str(r->initializer());
      d.accumulator = Str(r->accumulator());
      d.combiner = Str(r->combiner());
      d.outconverter = Str(r->outconverter());
      d.init_symbol = Str(r->init_symbol());
      d.accum_symbol = Str(r->accum_symbol());
      d.combine_symbol = Str(r->combine_symbol());
      d.out_symbol = Str(r->out_symbol());
      if (!ReadType(r->accumulator_type(), &d.accumulator_type, where + " accumulator", error)) return false;
      d.accumulator_size = r->accumulator_size();
      d.accumulator_alignment = r->accumulator_alignment();
      if (!ReadTypes(r->inputs(), &d.inputs, where + " input", error)) return false;
      if (!ReadType(r->result(), &d.result, where + " result", error)) return false;
      d.signature = r->signature();
      d.hal_level = Level(r->hal_level());
      d.cpu_only_reasons = Strings(r->cpu_only_reasons());
      d.pointer_globals = Strings(r->pointer_globals());
      out->reductions.push_back(std::move(d));
    }
  }
  if (m->payloads()) {
    for (const fb::Payload* p : *m->payloads()) {
      PayloadDesc d;
      d.target = Str(p->target());
      d.data = Bytes(p->data());
      out->payloads.push_back(std::move(d));
    }
  }
  if (m->imports()) {
    for (const flatbuffers::String* s : *m->imports()) out->imports.push_back(Str(s));
  }
  return true;
}

// ---- desc -> FlatBuffers ----

flatbuffers::Offset<fb::Type> WriteType(flatbuffers::FlatBufferBuilder& b, const KernelTypeDesc& t) {
  std::vector<flatbuffers::Offset<fb::Field>> fields;
  for (const KernelFieldDesc& f : t.fields) {
    auto type = WriteType(b, f.type);
    fields.push_back(fb::CreateField(b, b.CreateString(f.name), f.offset, type));
  }
  auto name = b.CreateString(t.name);
  auto fields_vec = fields.empty() ? 0 : b.CreateVector(fields);
  return fb::CreateType(b, static_cast<fb::TypeKind>(t.kind), static_cast<int32_t>(t.element_type),
                        t.vector_size, t.size, t.alignment, name, fields_vec, t.array_size);
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Type>>> WriteTypes(
    flatbuffers::FlatBufferBuilder& b, const std::vector<KernelTypeDesc>& types) {
  std::vector<flatbuffers::Offset<fb::Type>> out;
  for (const KernelTypeDesc& t : types) out.push_back(WriteType(b, t));
  return b.CreateVector(out);
}

fb::HalLevel Level(const HalLevel& l) { return fb::HalLevel(l.major, l.minor); }

// "    pointer globals: gA, gB\n", or nothing when there are none.
std::string PointerGlobalsLine(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string line = "    pointer globals:";
  for (size_t i = 0; i < names.size(); ++i) line += (i ? ", " : " ") + names[i];
  return line + "\n";
}

// The kernel language's name of a lane type, as in its accessors' names (rsGetElementAt_uchar).
std::string LaneName(KilnType type) {
  switch (type) {
    case kKilnFloat32: return "float";
    case kKilnFloat64: return "double";
    case kKilnFloat16: return "half";
    case kKilnInt8: return "char";
    case kKilnUInt8: return "uchar";
    case kKilnInt16: return "short";
    case kKilnUInt16: return "ushort";
    case kKilnInt32: return "int";
    case kKilnUInt32: return "uint";
    case kKilnInt64: return "long";
    case kKilnUInt64: return "ulong";
    case kKilnBool: return "bool";
    default: return "type " + std::to_string(static_cast<int>(type));
  }
}

std::string TypeLine(const KernelTypeDesc& t) {
  std::ostringstream s;
  s << KernelTypeName(t) << " (";
  // A vector is a scalar kind with lanes: float4 reads "vector of 4 lanes", not "scalar".
  if (t.kind == KernelTypeKind::kScalar && t.vector_size > 1) {
    s << "vector of " << t.vector_size << " lanes";
  } else {
    s << KindName(t.kind);
  }
  if (t.array_size) s << " array of " << t.array_size;
  s << ", size " << t.size << ", align " << t.alignment << ")";
  return s.str();
}

}  // namespace

std::string KernelTypeName(const KernelTypeDesc& type) {
  if (!type.name.empty()) return type.name;
  if (type.kind == KernelTypeKind::kVoid) return "void";
  return std::string(KindName(type.kind));
}

const KernelDesc* KernelModuleDesc::FindKernel(const std::string& name) const {
  for (const KernelDesc& k : kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}
const GlobalDesc* KernelModuleDesc::FindGlobal(const std::string& name) const {
  for (const GlobalDesc& g : globals) {
    if (g.name == name) return &g;
  }
  return nullptr;
}
const InvokableDesc* KernelModuleDesc::FindInvokable(const std::string& name) const {
  for (const InvokableDesc& f : invokables) {
    if (f.name == name) return &f;
  }
  return nullptr;
}
const ReductionDesc* KernelModuleDesc::FindReduction(const std::string& name) const {
  for (const ReductionDesc& r : reductions) {
    if (r.name == name) return &r;
  }
  return nullptr;
}
const PayloadDesc* KernelModuleDesc::FindPayload(const std::string& target) const {
  for (const PayloadDesc& p : payloads) {
    if (p.target == target) return &p;
  }
  return nullptr;
}

bool ReadKernelModule(const uint8_t* data, size_t size, KernelModuleDesc* out, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  if (!out) {
    *error = "ReadKernelModule: no output";
    return false;
  }
  if (!data && size != 0) {
    *error = "ReadKernelModule: null data";
    return false;
  }
  // Layout: a 4-byte size prefix, the 4-byte root offset, then the identifier.
  constexpr size_t kMinSize = 12;
  if (size < kMinSize) {
    *error = "kernel module is truncated: " + std::to_string(size) + " bytes, a module has at least " +
             std::to_string(kMinSize);
    return false;
  }
  if (std::memcmp(data + 8, kKernelModuleIdentifier, 4) != 0) {
    std::string found;
    for (int i = 0; i < 4; ++i) {
      const char c = static_cast<char>(data[8 + i]);
      found +=
          (c >= 32 && c < 127) ? std::string(1, c) : "\\x" + std::to_string(static_cast<int>(data[8 + i]));
    }
    *error = "not a kernel module: file identifier at offset 8 is '" + found + "', expected 'KMOD'";
    return false;
  }
  const uint32_t declared = flatbuffers::ReadScalar<uint32_t>(data);
  if (declared > size - 4) {
    *error = "kernel module is truncated: its size prefix says " + std::to_string(declared) +
             " bytes follow, but only " + std::to_string(size - 4) + " do";
    return false;
  }
  flatbuffers::Verifier::Options options;
  options.max_depth = 2 * kMaxTypeDepth + 16;
  flatbuffers::Verifier verifier(data, declared + 4, options);
  if (!fb::VerifySizePrefixedModuleBuffer(verifier)) {
    *error =
        "kernel module is corrupt: FlatBuffers verification failed (" + std::to_string(size) + "-byte file)";
    return false;
  }
  const fb::Module* module = fb::GetSizePrefixedModule(data);
  if (!Convert(module, out, error)) return false;
  return Validator(error).Module(*out);
}

bool WriteKernelModule(const KernelModuleDesc& m, std::vector<uint8_t>* out, std::string* error) {
  std::string scratch;
  if (!error) error = &scratch;
  if (!Validator(error).Module(m)) {
    *error = "refusing to write an invalid module: " + *error;
    return false;
  }
  flatbuffers::FlatBufferBuilder b(1024 + (m.payloads.empty() ? 0 : m.payloads[0].data.size()));
  auto header_checksum = b.CreateVector(m.source_checksum);
  const fb::HalLevel module_level = Level(m.hal_level);
  auto header =
      fb::CreateHeader(b, m.format_version, b.CreateString(m.compiler_version), b.CreateString(m.source_name),
                       header_checksum, &module_level, m.abi_version);
  std::vector<flatbuffers::Offset<fb::Kernel>> kernels;
  for (const KernelDesc& k : m.kernels) {
    auto name = b.CreateString(k.name);
    auto symbol = b.CreateString(k.expand_symbol);
    auto inputs = WriteTypes(b, k.inputs);
    auto output = WriteType(b, k.output);
    const fb::HalLevel level = Level(k.hal_level);
    auto reasons = b.CreateVectorOfStrings(k.cpu_only_reasons);
    auto pointers = b.CreateVectorOfStrings(k.pointer_globals);
    kernels.push_back(fb::CreateKernel(b, name, symbol, k.signature, inputs, output, k.root_style, &level,
                                       reasons, pointers));
  }
  std::vector<flatbuffers::Offset<fb::Global>> globals;
  for (const GlobalDesc& g : m.globals) {
    auto name = b.CreateString(g.name);
    auto type = WriteType(b, g.type);
    auto value = b.CreateVector(g.default_value);
    const std::vector<int32_t> accessed(g.accessed_as.begin(), g.accessed_as.end());
    auto accessed_as = accessed.empty() ? 0 : b.CreateVector(accessed);
    globals.push_back(fb::CreateGlobal(b, name, type, g.size, g.alignment, value, g.is_const, g.is_allocation,
                                       accessed_as, g.is_static));
  }
  std::vector<flatbuffers::Offset<fb::Invokable>> invokables;
  for (const InvokableDesc& f : m.invokables) {
    std::vector<flatbuffers::Offset<fb::Param>> params;
    for (const ParamDesc& p : f.params) {
      auto pname = b.CreateString(p.name);
      auto ptype = WriteType(b, p.type);
      params.push_back(fb::CreateParam(b, pname, ptype, p.offset));
    }
    auto name = b.CreateString(f.name);
    auto symbol = b.CreateString(f.symbol);
    auto params_vec = b.CreateVector(params);
    const fb::HalLevel level = Level(f.hal_level);
    auto pointers = b.CreateVectorOfStrings(f.pointer_globals);
    invokables.push_back(
        fb::CreateInvokable(b, name, symbol, params_vec, f.args_size, f.args_alignment, &level, pointers));
  }
  std::vector<flatbuffers::Offset<fb::Reduction>> reductions;
  for (const ReductionDesc& r : m.reductions) {
    auto name = b.CreateString(r.name);
    auto initializer = b.CreateString(r.initializer);
    auto accumulator = b.CreateString(r.accumulator);
    auto combiner = b.CreateString(r.combiner);
    auto outconverter = b.CreateString(r.outconverter);
    auto init_symbol = b.CreateString(r.init_symbol);
    auto accum_symbol = b.CreateString(r.accum_symbol);
    auto combine_symbol = b.CreateString(r.combine_symbol);
    auto out_symbol = b.CreateString(r.out_symbol);
    auto accum_type = WriteType(b, r.accumulator_type);
    auto inputs = WriteTypes(b, r.inputs);
    auto result = WriteType(b, r.result);
    const fb::HalLevel level = Level(r.hal_level);
    auto reasons = b.CreateVectorOfStrings(r.cpu_only_reasons);
    auto pointers = b.CreateVectorOfStrings(r.pointer_globals);
    reductions.push_back(fb::CreateReduction(b, name, initializer, accumulator, combiner, outconverter,
                                             init_symbol, accum_symbol, combine_symbol, out_symbol,
                                             accum_type, r.accumulator_size, r.accumulator_alignment, inputs,
                                             result, r.signature, &level, reasons, pointers));
  }
  std::vector<flatbuffers::Offset<fb::Payload>> payloads;
  for (const PayloadDesc& p : m.payloads) {
    auto target = b.CreateString(p.target);
    // Bitcode readers want 4-byte aligned input; align the vector's data generously.
    b.ForceVectorAlignment(p.data.size(), 1, 16);
    auto data = b.CreateVector(p.data);
    payloads.push_back(fb::CreatePayload(b, target, data));
  }
  auto package = b.CreateString(m.package_name);
  auto kernels_vec = b.CreateVector(kernels);
  auto globals_vec = b.CreateVector(globals);
  auto invokables_vec = b.CreateVector(invokables);
  auto reductions_vec = b.CreateVector(reductions);
  auto payloads_vec = b.CreateVector(payloads);
  auto imports = b.CreateVectorOfStrings(m.imports);
  auto root =
      fb::CreateModule(b, header, package, static_cast<fb::Precision>(m.precision), m.has_init, kernels_vec,
                       globals_vec, invokables_vec, reductions_vec, payloads_vec, imports);
  fb::FinishSizePrefixedModuleBuffer(b, root);
  out->assign(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  return true;
}

std::string DescribeKernelModule(const KernelModuleDesc& m) {
  std::ostringstream s;
  s << "module " << (m.source_name.empty() ? "<unnamed>" : m.source_name) << "\n";
  s << "  format " << m.format_version << ", abi " << m.abi_version << ", hal " << m.hal_level.ToString()
    << ", compiler '" << m.compiler_version << "'\n";
  if (!m.package_name.empty()) s << "  package " << m.package_name << "\n";
  static const char* kPrecision[] = {"full", "relaxed", "imprecise"};
  s << "  precision " << kPrecision[static_cast<int>(m.precision) % 3] << "\n";
  if (m.has_init) s << "  init() runs at creation\n";
  for (const KernelDesc& k : m.kernels) {
    s << "  kernel " << k.name << (k.root_style ? " (root style)" : "") << " sig 0x" << std::hex
      << k.signature << std::dec << " hal " << k.hal_level.ToString() << "\n";
    for (size_t i = 0; i < k.inputs.size(); ++i) s << "    in" << i << ": " << TypeLine(k.inputs[i]) << "\n";
    if (k.has_output()) s << "    out: " << TypeLine(k.output) << "\n";
    for (const std::string& reason : k.cpu_only_reasons) s << "    cpu-only: " << reason << "\n";
    s << PointerGlobalsLine(k.pointer_globals);
  }
  for (const GlobalDesc& g : m.globals) {
    s << "  global " << g.name << ": " << TypeLine(g.type) << (g.is_const ? " const" : "")
      << (g.is_allocation ? " allocation" : "") << (g.is_static ? " static" : "") << " default [";
    // Enough bytes to recognize a value; big arrays would drown the rest.
    constexpr size_t kShownBytes = 32;
    for (size_t i = 0; i < g.default_value.size() && i < kShownBytes; ++i) {
      static const char* kHex = "0123456789abcdef";
      s << (i ? " " : "") << kHex[g.default_value[i] >> 4] << kHex[g.default_value[i] & 15];
    }
    if (g.default_value.size() > kShownBytes) s << " ... (" << g.default_value.size() << " bytes)";
    s << "]";
    for (size_t i = 0; i < g.accessed_as.size(); ++i)
      s << (i ? ", " : " accessed as ") << LaneName(g.accessed_as[i]);
    s << "\n";
  }
  for (const InvokableDesc& f : m.invokables) {
    s << "  invokable " << f.name << " args " << f.args_size << " bytes align " << f.args_alignment << "\n";
    for (const ParamDesc& p : f.params)
      s << "    " << p.name << " @" << p.offset << ": " << TypeLine(p.type) << "\n";
    s << PointerGlobalsLine(f.pointer_globals);
  }
  for (const ReductionDesc& r : m.reductions) {
    s << "  reduction " << r.name << " accumulator " << TypeLine(r.accumulator_type) << " result "
      << TypeLine(r.result) << "\n";
    s << "    functions: init=" << (r.initializer.empty() ? "-" : r.initializer) << " accum=" << r.accumulator
      << " combine=" << (r.combiner.empty() ? "-" : r.combiner)
      << " out=" << (r.outconverter.empty() ? "-" : r.outconverter) << "\n";
    for (size_t i = 0; i < r.inputs.size(); ++i) s << "    in" << i << ": " << TypeLine(r.inputs[i]) << "\n";
    for (const std::string& reason : r.cpu_only_reasons) s << "    cpu-only: " << reason << "\n";
    s << PointerGlobalsLine(r.pointer_globals);
  }
  for (const PayloadDesc& p : m.payloads)
    s << "  payload " << p.target << ": " << p.data.size() << " bytes\n";
  for (const std::string& i : m.imports) s << "  import " << i << "\n";
  return s.str();
}

}  // namespace kiln
