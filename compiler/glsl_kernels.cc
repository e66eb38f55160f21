// The compute shader of a forEach kernel, and the parts of every shader that kernels and reductions share:
// the buffers and launch block around `main`, the element storage of inputs and outputs, and main's
// arguments.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "compiler/glsl_lowering_internal.h"
#include "kiln/spirv_abi.h"

namespace kiln {
namespace compiler {

bool KernelLowering::Lower(const clang::FunctionDecl* kernel, const KernelDesc& desc, const KernelInfo& info,
                           GpuKernelLowering* out) {
  kernel_ = kernel;
  try {
    const size_t num_inputs = desc.inputs.size();
    const bool has_output = desc.has_output();
    // The element types, from the parameters (info.args is parallel to them): by value for RS_KERNEL, the
    // pointees of root()'s in and out pointers.
    std::vector<clang::QualType> input_types;
    clang::QualType output_type = kernel->getReturnType();
    if (info.args.size() != kernel->getNumParams())
      Fail(kernel->getLocation(), "internal: kernel arguments disagree");
    for (unsigned i = 0; i < kernel->getNumParams(); ++i) {
      const clang::QualType type = kernel->getParamDecl(i)->getType();
      if (info.args[i] == ArgKind::kInput) input_types.push_back(type);
      if (info.args[i] == ArgKind::kInputPtr)
        input_types.push_back(type->getPointeeType().getUnqualifiedType());
      if (info.args[i] == ArgKind::kOutputPtr) output_type = type->getPointeeType().getUnqualifiedType();
    }
    if (input_types.size() != num_inputs) Fail(kernel->getLocation(), "internal: kernel inputs disagree");
    for (unsigned i = 0; i < kernel->getNumParams(); ++i) {
      if (info.args[i] == ArgKind::kUsrData) usr_params_.insert(kernel->getParamDecl(i));
    }
    std::vector<Storage> storages;
    std::vector<clang::QualType> element_types = input_types;
    if (has_output) element_types.push_back(output_type);
    for (size_t i = 0; i < element_types.size(); ++i) {
      const bool is_output = has_output && i == element_types.size() - 1;
      storages.push_back(ElementStorage(element_types[i], is_output ? "the output's " : "an input's ",
                                        kernel->getLocation()));
      out->unit_sizes[is_output ? KILN_KERNEL_MAX_INPUTS : i] = storages.back().unit;
    }
    if (!element_types.empty()) Use("kiln_index");  // a kernel with neither inputs nor output has no views
    const std::string kernel_name = FunctionName(kernel, kernel->getLocation());

    // main(): the bounds guard, the loads, the call and the store.
    std::string main =
        "void main() {\n"
        "  uvec3 p = gl_GlobalInvocationID + kiln.origin.xyz;\n"
        "  if (any(greaterThanEqual(p, kiln.dim.xyz))) return;\n";
    const std::string out_element = "b_out[kiln_index(" + std::to_string(num_inputs) + "u, p)]";
    if (desc.root_style && has_output) {
      // root() writes through its out pointer, maybe not on every path: start from the element's value.
      main += "  " + Type(output_type, kernel->getLocation()) +
              " result = " + Fill(storages.back().load, out_element) + ";\n";
    }
    std::string call = kernel_name + "(";
    size_t input = 0;
    bool first = true;
    for (unsigned i = 0; i < kernel->getNumParams(); ++i) {
      const clang::ParmVarDecl* param = kernel->getParamDecl(i);
      if (info.args[i] == ArgKind::kContext || info.args[i] == ArgKind::kUsrData) continue;
      const std::string value =
          info.args[i] == ArgKind::kOutputPtr
              ? std::string("result")
              : Argument(info.args[i], param, input_types, storages, "  ", &input, &main);
      call += (first ? "" : ", ") + value;
      first = false;
    }
    call += ")";
    if (has_output && !desc.root_style) {
      main += "  " + Type(output_type, kernel->getLocation()) + " result = " + call + ";\n";
    } else {
      main += "  " + call + ";\n";
    }
    if (has_output) main += "  " + out_element + " = " + Fill(storages.back().store, "result") + ";\n";
    main += "}\n";

    std::string bindings;
    if (has_output) {
      bindings += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_OUTPUT_BINDING) + ", std430) " +
                  (desc.root_style ? "" : "writeonly ") + "buffer Out { " + storages.back().type +
                  " b_out[]; };\n";
    }
    if (uses_usr_) {
      bindings += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_USR_BINDING) +
                  ", std430) readonly buffer KilnUsr { uint kiln_usr_size; uint kiln_usr[]; };\n"
                  "uint kiln_usr_word(uint i) { return i < (kiln_usr_size + 3u) / 4u ? kiln_usr[i] : 0u; }\n";
    }
    storages.resize(num_inputs);
    const std::string glsl = Assemble("kernel '" + desc.name + "'", kernel->getLocation(), storages,
                                      num_inputs + (has_output ? 1 : 0), "", bindings, main);
    out->glsl = glsl;
    out->cpu_only_reason.clear();
    return true;
  } catch (const Failure&) {
    return false;
  }
}

// What main() passes for a kernel's or accumulator's parameter of `kind` at cell p: a coordinate, or the next
// input (*input), loaded through its view into a local declared in `main` at `pad`.
std::string KernelLowering::Argument(ArgKind kind, const clang::ParmVarDecl* param,
                                     const std::vector<clang::QualType>& input_types,
                                     const std::vector<Storage>& storages, const std::string& pad,
                                     size_t* input, std::string* main) {
  if (kind == ArgKind::kX || kind == ArgKind::kY || kind == ArgKind::kZ) {
    const std::string coordinate =
        std::string("p.") + (kind == ArgKind::kX ? "x" : (kind == ArgKind::kY ? "y" : "z"));
    return LaneOf(param->getType()).is_signed ? "int(" + coordinate + ")" : coordinate;
  }
  if (kind != ArgKind::kInput && kind != ArgKind::kInputPtr) {
    Fail(param->getLocation(), "parameter '" + param->getNameAsString() + "'");
  }
  const size_t i = (*input)++;
  const std::string local = "in" + std::to_string(i);
  *main +=
      pad + Type(input_types[i], param->getLocation()) + " " + local + " = " +
      Fill(storages[i].load, "b_in" + std::to_string(i) + "[kiln_index(" + std::to_string(i) + "u, p)]") +
      ";\n";
  return local;
}

// The shader around `main`: extensions, the launch block, structs, the buffers, constants, the helper
// library, allocation accessors and the lowered functions (callee first). `preamble` comes before the launch
// block, `bindings` after the inputs' buffers.
std::string KernelLowering::Assemble(const std::string& what, clang::SourceLocation loc,
                                     const std::vector<Storage>& inputs, size_t views,
                                     const std::string& preamble, const std::string& bindings,
                                     const std::string& main) {
  std::string glsl = "#version 450\n";
  glsl += "// Generated by kilnc from " + Where(loc) + ", " + what + " (kiln/spirv_abi.h version " +
          std::to_string(KILN_SPIRV_ABI_VERSION) + ").\n";
  if (needs_int64_) glsl += "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
  if (needs_8bit_) glsl += "#extension GL_EXT_shader_8bit_storage : require\n";
  if (needs_16bit_) glsl += "#extension GL_EXT_shader_16bit_storage : require\n";
  if (needs_8bit_ || needs_16bit_) {
    // Conversions to and from 8/16-bit storage types are arithmetic-type constructors in glslang.
    glsl += "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n";
    glsl += "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n";
  }
  glsl += "layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n";
  glsl += preamble;
  glsl += "layout(push_constant, std430) uniform KilnLaunch {\n  uvec4 dim;\n  uvec4 origin;\n";
  if (views > 0) glsl += "  uvec4 view[" + std::to_string(views) + "];\n";
  glsl += "} kiln;\n";
  if (needs_allocation_info_) {
    glsl +=
        "struct KilnAllocationInfo {\n  uint dim_x, dim_y, dim_z, element_size, offset, stride_y, "
        "stride_z, unit_size;\n};\n";
  }
  for (const std::string& text : struct_text_) glsl += text;
  if (!globals_used_.empty()) {
    std::vector<std::pair<uint32_t, std::string>> members;
    for (const clang::VarDecl* var : globals_used_) {
      const GlobalSlot* slot = script_->FindGlobal(var);
      members.push_back({slot->offset, slot->member});
    }
    std::sort(members.begin(), members.end());
    glsl += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_GLOBALS_BINDING) +
            ", std430) readonly buffer KilnGlobals {\n";
    for (const auto& m : members)
      glsl += "  layout(offset = " + std::to_string(m.first) + ") " + m.second + ";\n";
    glsl += "};\n";
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    glsl += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_FIRST_INPUT_BINDING + i) +
            ", std430) readonly buffer In" + std::to_string(i) + " { " + inputs[i].type + " b_in" +
            std::to_string(i) + "[]; };\n";
  }
  glsl += bindings;
  for (const auto& entry : allocations_) {
    glsl += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_FIRST_ALLOCATION_BINDING + entry.first) +
            ", std430) " + (entry.second.write ? "" : "readonly ") + "buffer A" +
            std::to_string(entry.first) + " { " + entry.second.storage_type + " a" +
            std::to_string(entry.first) + "[]; };\n";
  }
  for (const std::string& text : constant_text_) glsl += text;
  for (const std::string& name : library_order_) glsl += FindLibrary(name)->text;
  for (const std::string& name : library_order_) {
    if (kComponentwise.count(name) && library_.count(name + "#vec")) {
      const std::string text = FindLibrary(name)->text;
      const size_t open = text.find('('), close = text.find(')');
      const int arity = static_cast<int>(std::count(text.begin() + open, text.begin() + close, ',')) + 1;
      glsl += VectorOverloads(name, arity);
    }
  }
  if (needs_fault_) {
    // The first fault of the launch wins; its details are written once, by the invocation that set the code.
    glsl +=
        "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_FAULT_BINDING) +
        ", std430) buffer KilnFault { uint kiln_fault[8]; };\n"
        "void kiln_fault_report(uint code, uint allocation, uint x, uint y, uint z, uint size) {\n"
        "  if (atomicCompSwap(kiln_fault[0], 0u, code) != 0u) return;\n"
        "  kiln_fault[1] = allocation;\n  kiln_fault[2] = x;\n  kiln_fault[3] = y;\n  kiln_fault[4] = z;\n"
        "  kiln_fault[5] = size;\n}\n";
  }
  for (const std::string& name : accessor_order_) glsl += accessors_.at(name);
  for (const std::string& text : function_text_) glsl += text;  // appended callee-first
  return glsl + main;
}

void KernelLowering::NoteStorage(const Storage& storage) {
  needs_8bit_ = needs_8bit_ || storage.needs_8bit;
  needs_16bit_ = needs_16bit_ || storage.needs_16bit;
}

// How an input, output or result element of `type` sits in its buffer; `role` starts the reason when it has
// no GPU layout.
Storage KernelLowering::ElementStorage(clang::QualType type, const char* role, clang::SourceLocation loc) {
  Storage storage;
  std::string why;
  if (!StorageFor(type, context_, &storage, &why)) Fail(loc, role + why);
  NoteStorage(storage);
  for (const char* helper : {"kiln_unpack_u8", "kiln_unpack_i8", "kiln_pack_8", "kiln_unpack_u16",
                             "kiln_unpack_i16", "kiln_pack_16"}) {
    if (storage.load.find(helper) != std::string::npos || storage.store.find(helper) != std::string::npos) {
      Use(helper);
    }
  }
  return storage;
}

}  // namespace compiler
}  // namespace kiln
