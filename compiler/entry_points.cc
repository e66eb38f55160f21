// Generates the C source of the entry points a driver calls (kiln/kernel_abi.h). Generating C rather than IR
// lets Clang apply the platform ABI to kernels that take and return vectors and structs by value.
#include <sstream>
#include <string>

#include "compiler/script_info.h"

namespace kiln {
namespace compiler {
namespace {

// How each input is addressed in a loop: typed and contiguous, or by byte stride.
enum class Access { kContiguous, kStrided };

// Emits the row setup shared by kernels and reduction accumulators: per input a byte pointer to element
// (0, y, z) and its x stride; for kernels with an output the same for it.
void EmitRowSetup(std::ostringstream& s, size_t num_inputs, bool has_output) {
  for (size_t i = 0; i < num_inputs; ++i) {
    s << "  const uint8_t* __in" << i << " = __launch->in[" << i
      << "] + (uint64_t)__y * __launch->in_stride_y[" << i << "] + (uint64_t)__z * __launch->in_stride_z["
      << i << "];\n";
    s << "  const uint64_t __sx" << i << " = __launch->in_stride_x[" << i << "];\n";
  }
  if (has_output) {
    s << "  uint8_t* __out = __launch->out + (uint64_t)__y * __launch->out_stride_y + (uint64_t)__z * "
         "__launch->out_stride_z;\n";
    s << "  const uint64_t __osx = __launch->out_stride_x;\n";
  }
}

// The condition under which every input and the output are contiguous arrays of naturally aligned elements.
std::string ContiguousCondition(const std::vector<std::string>& inputs, const std::string& output) {
  std::ostringstream c;
  const char* sep = "";
  for (size_t i = 0; i < inputs.size(); ++i) {
    c << sep << "__sx" << i << " == sizeof(" << inputs[i] << ") && (unsigned long)__in" << i
      << " % __alignof__(" << inputs[i] << ") == 0";
    sep = " && ";
  }
  if (!output.empty()) {
    c << sep << "__osx == sizeof(" << output << ") && (unsigned long)__out % __alignof__(" << output
      << ") == 0";
    sep = " && ";
  }
  if (*sep == '\0') return "1";
  return c.str();
}

// Declares __v<i> holding input i at __x (strided path: memcpy, as the element may be unaligned).
void EmitLoads(std::ostringstream& s, const std::vector<std::string>& inputs, Access access,
               const char* indent) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (access == Access::kContiguous) {
      s << indent << "const " << inputs[i] << " __v" << i << " = ((const " << inputs[i] << "*)__in" << i
        << ")[__x];\n";
    } else {
      s << indent << inputs[i] << " __v" << i << ";\n";
      s << indent << "__builtin_memcpy(&__v" << i << ", __in" << i << " + (uint64_t)__x * __sx" << i
        << ", sizeof(__v" << i << "));\n";
    }
  }
}

// The argument list for a call, per ArgKind, with inputs taken from __v<i> (or pointers for root()).
std::string CallArgs(const std::vector<ArgKind>& args, const std::vector<std::string>& inputs,
                     const std::string& output, Access access) {
  std::ostringstream c;
  size_t input = 0;
  const char* sep = "";
  for (ArgKind kind : args) {
    c << sep;
    sep = ", ";
    switch (kind) {
      case ArgKind::kInput:
        c << "__v" << input++;
        break;
      case ArgKind::kInputPtr:
        c << "(const " << inputs[input] << "*)(__in" << input << " + (uint64_t)__x * __sx" << input << ")";
        ++input;
        break;
      case ArgKind::kOutputPtr:
        c << "(" << output << "*)(__out + (uint64_t)__x * __osx)";
        break;
      case ArgKind::kUsrData:
        c << "__launch->usr_data";
        break;
      case ArgKind::kX:
        c << "__x";
        break;
      case ArgKind::kY:
        c << "__y";
        break;
      case ArgKind::kZ:
        c << "__z";
        break;
      case ArgKind::kContext:
        c << "__launch";
        break;
    }
  }
  (void)access;
  return c.str();
}

bool HasPointerArgs(const std::vector<ArgKind>& args) {
  for (ArgKind k : args) {
    if (k == ArgKind::kInputPtr || k == ArgKind::kOutputPtr) return true;
  }
  return false;
}

void EmitKernel(std::ostringstream& s, const KernelDesc& desc, const KernelInfo& info) {
  const std::string& out = info.output_type;
  const bool returns = desc.has_output() && !desc.root_style;
  const size_t n = info.input_types.size();
  if (!HasPointerArgs(info.args)) {
    // The fast path's loop, in its own function so that the output pointer can be `restrict`: Clang keeps
    // restrict only on parameters (as noalias, which survives inlining as scoped alias metadata). That tells
    // the optimizer that writing the output leaves script globals and inputs' other elements alone, so loads
    // of globals leave the loop and the driver's vectorizer needs no runtime alias checks against them.
    s << "static inline __attribute__((always_inline)) void __kiln_rows_" << desc.name
      << "(const KilnKernelLaunch* __launch, uint32_t __x_begin, uint32_t __x_end, uint32_t __y, uint32_t "
         "__z";
    for (size_t i = 0; i < n; ++i) s << ", const uint8_t* __in" << i;
    if (returns) s << ", " << out << "* restrict __o";
    s << ") {\n";
    s << "  for (uint32_t __x = __x_begin; __x < __x_end; ++__x) {\n";
    EmitLoads(s, info.input_types, Access::kContiguous, "    ");
    s << "    " << (returns ? "__o[__x] = " : "") << info.function << "("
      << CallArgs(info.args, info.input_types, out, Access::kContiguous) << ");\n";
    s << "  }\n}\n\n";
  }
  s << "void " << desc.expand_symbol
    << "(const KilnKernelLaunch* __launch, uint32_t __x_begin, uint32_t __x_end, uint32_t __y, uint32_t __z) "
       "{\n";
  EmitRowSetup(s, n, desc.has_output());
  if (HasPointerArgs(info.args)) {
    // root(): the kernel gets element pointers; there is nothing to specialize.
    s << "  for (uint32_t __x = __x_begin; __x < __x_end; ++__x) {\n";
    s << "    " << info.function << "(" << CallArgs(info.args, info.input_types, out, Access::kStrided)
      << ");\n";
    s << "  }\n}\n\n";
    return;
  }
  // Fast path: typed contiguous arrays, which the driver's loop vectorizer can widen for the host.
  s << "  if (" << ContiguousCondition(info.input_types, returns ? out : std::string()) << ") {\n";
  s << "    __kiln_rows_" << desc.name << "(__launch, __x_begin, __x_end, __y, __z";
  for (size_t i = 0; i < n; ++i) s << ", __in" << i;
  if (returns) s << ", (" << out << "*)__out";
  s << ");\n    return;\n  }\n";
  // General path: any strides, including 0 (broadcast), and unaligned elements.
  s << "  for (uint32_t __x = __x_begin; __x < __x_end; ++__x) {\n";
  EmitLoads(s, info.input_types, Access::kStrided, "    ");
  if (returns) {
    s << "    const " << out << " __r = " << info.function << "("
      << CallArgs(info.args, info.input_types, out, Access::kStrided) << ");\n";
    s << "    __builtin_memcpy(__out + (uint64_t)__x * __osx, &__r, sizeof(__r));\n";
  } else {
    s << "    " << info.function << "(" << CallArgs(info.args, info.input_types, out, Access::kStrided)
      << ");\n";
  }
  s << "  }\n}\n\n";
}

void EmitReduction(std::ostringstream& s, const ReductionDesc& desc, const ReductionInfo& info) {
  const std::string& acc = info.accumulator_type;
  s << "void " << desc.init_symbol << "(void* __accum) {\n";
  if (desc.initializer.empty()) {
    s << "  __builtin_memset(__accum, 0, sizeof(" << acc << "));\n";
  } else {
    s << "  " << acc << " __a;\n  __builtin_memset(&__a, 0, sizeof(__a));\n";
    s << "  " << desc.initializer << "(&__a);\n  __builtin_memcpy(__accum, &__a, sizeof(__a));\n";
  }
  s << "}\n\n";

  s << "void " << desc.combine_symbol << "(void* __accum, const void* __other);\n\n";

  // The accumulator lives in a local for the row so that it can stay in registers. On contiguous rows a small
  // accumulator is split into kLanes interleaved ones (each starting from the initializer's identity, joined by
  // the combiner at the end of the row): kLanes independent chains the optimizer can overlap or vectorise, where
  // one accumulator is a chain of dependent steps. RenderScript's rules (an identity initializer, an
  // associative and commutative combiner) make any such grouping valid, as they make the per-thread split valid.
  constexpr int kLanes = 8;
  s << "void " << desc.accum_symbol
    << "(const KilnKernelLaunch* __launch, void* __accum, uint32_t __x_begin, uint32_t __x_end, uint32_t "
       "__y, "
       "uint32_t __z) {\n";
  EmitRowSetup(s, info.input_types.size(), false);
  s << "  " << acc << " __a;\n  __builtin_memcpy(&__a, __accum, sizeof(__a));\n";
  const std::string args = CallArgs(info.accumulator_args, info.input_types, "", Access::kContiguous);
  s << "  if (" << ContiguousCondition(info.input_types, "") << ") {\n";
  s << "    uint32_t __xs = __x_begin;\n";
  s << "    if (sizeof(" << acc << ") <= 32 && __x_end - __x_begin >= " << 8 * kLanes << "u) {\n";
  s << "      " << acc << " __l[" << kLanes << "];\n";
  s << "      __builtin_memcpy(&__l[0], &__a, sizeof(__a));\n";
  s << "      for (int __k = 1; __k < " << kLanes << "; ++__k) " << desc.init_symbol << "(&__l[__k]);\n";
  s << "      for (; __xs + " << kLanes << "u <= __x_end; __xs += " << kLanes << "u) {\n";
  s << "#pragma clang loop unroll(full)\n";
  s << "        for (uint32_t __k = 0; __k < " << kLanes << "u; ++__k) {\n";
  s << "          const uint32_t __x = __xs + __k;\n";
  EmitLoads(s, info.input_types, Access::kContiguous, "          ");
  s << "          " << desc.accumulator << "(&__l[__k], " << args << ");\n";
  s << "        }\n      }\n";
  s << "      for (int __k = 1; __k < " << kLanes << "; ++__k) " << desc.combine_symbol << "(&__l[0], &__l[__k]);\n";
  s << "      __builtin_memcpy(&__a, &__l[0], sizeof(__a));\n";
  s << "    }\n";
  s << "    for (uint32_t __x = __xs; __x < __x_end; ++__x) {\n";
  EmitLoads(s, info.input_types, Access::kContiguous, "      ");
  s << "      " << desc.accumulator << "(&__a, " << args << ");\n";
  s << "    }\n  } else {\n";
  s << "    for (uint32_t __x = __x_begin; __x < __x_end; ++__x) {\n";
  EmitLoads(s, info.input_types, Access::kStrided, "      ");
  s << "      " << desc.accumulator << "(&__a, " << args << ");\n";
  s << "    }\n  }\n";
  s << "  __builtin_memcpy(__accum, &__a, sizeof(__a));\n}\n\n";

  s << "void " << desc.combine_symbol << "(void* __accum, const void* __other) {\n";
  s << "  " << acc << " __a, __b;\n";
  s << "  __builtin_memcpy(&__a, __accum, sizeof(__a));\n  __builtin_memcpy(&__b, __other, sizeof(__b));\n";
  if (desc.combiner.empty()) {
    // RenderScript's rule: without a combiner, the accumulator (with one input of the accumulator's type)
    // combines.
    s << "  " << desc.accumulator << "(&__a, __b);\n";
  } else {
    s << "  " << desc.combiner << "(&__a, &__b);\n";
  }
  s << "  __builtin_memcpy(__accum, &__a, sizeof(__a));\n}\n\n";

  s << "void " << desc.out_symbol << "(void* __result, const void* __accum) {\n";
  if (desc.outconverter.empty()) {
    s << "  __builtin_memcpy(__result, __accum, sizeof(" << acc << "));\n";
  } else {
    s << "  " << acc << " __a;\n  " << info.result_type << " __r;\n";
    s << "  __builtin_memcpy(&__a, __accum, sizeof(__a));\n  __builtin_memset(&__r, 0, sizeof(__r));\n";
    s << "  " << desc.outconverter << "(&__r, &__a);\n";
    s << "  __builtin_memcpy(__result, &__r, sizeof(__r));\n";
  }
  s << "}\n\n";
}

void EmitInvokable(std::ostringstream& s, const std::string& symbol, const InvokableInfo& info) {
  s << "void " << symbol << "(const void* __args) {\n";
  if (info.param_types.empty()) {
    s << "  (void)__args;\n  " << info.function << "();\n}\n\n";
    return;
  }
  // A struct has exactly the packed layout the reflection describes: declaration order, natural alignment.
  s << "  struct {\n";
  for (size_t i = 0; i < info.param_types.size(); ++i)
    s << "    " << info.param_types[i] << " a" << i << ";\n";
  s << "  } __a;\n  __builtin_memcpy(&__a, __args, sizeof(__a));\n";
  s << "  " << info.function << "(";
  for (size_t i = 0; i < info.param_types.size(); ++i) s << (i ? ", " : "") << "__a.a" << i;
  s << ");\n}\n\n";
}

}  // namespace

std::string GenerateEntryPoints(const ScriptInfo& info) {
  std::ostringstream s;
  s << "\n/* ---- entry points generated by kilnc (kiln/kernel_abi.h) ---- */\n";
  for (size_t i = 0; i < info.kernels.size(); ++i) EmitKernel(s, info.module.kernels[i], info.kernels[i]);
  for (size_t i = 0; i < info.reductions.size(); ++i) {
    EmitReduction(s, info.module.reductions[i], info.reductions[i]);
  }
  for (size_t i = 0; i < info.invokables.size(); ++i) {
    EmitInvokable(s, info.module.invokables[i].symbol, info.invokables[i]);
  }
  if (info.module.has_init) {
    InvokableInfo init;
    init.function = "init";
    EmitInvokable(s, "__kiln_invoke_init", init);
  }
  return s.str();
}

}  // namespace compiler
}  // namespace kiln
