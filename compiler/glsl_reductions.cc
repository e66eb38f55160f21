// A reduction's compute shader: the two-pass workgroup reduction of kiln/spirv_abi.h ("Reductions"), built
// around the script's accumulator, combiner and outconverter.
#include <algorithm>
#include <string>
#include <vector>

#include "clang/AST/RecordLayout.h"
#include "compiler/glsl_lowering_internal.h"
#include "kiln/spirv_abi.h"

namespace kiln {
namespace compiler {

// Bytes and alignment of a register type in an std430 buffer (what the partials buffer holds): 8- and 16-bit
// integers and bools are 32-bit there, as in registers.
uint32_t KernelLowering::Std430Size(clang::QualType type, uint32_t* align, clang::SourceLocation loc) {
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  Type(t, loc);  // fails for what GLSL cannot hold
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    uint32_t element_align = 1;
    const uint32_t element = Std430Size(array->getElementType(), &element_align, loc);
    *align = element_align;
    const uint64_t total = uint64_t{(element + element_align - 1) / element_align * element_align} *
                           array->getSize().getZExtValue();
    if (total > (1u << 20)) Fail(loc, "an accumulator of more than 1 MiB");
    return static_cast<uint32_t>(total);
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    uint32_t offset = 0, max_align = 1;
    for (const clang::FieldDecl* field : record->getDecl()->getDefinition()->fields()) {
      uint32_t field_align = 1;
      const uint32_t size = Std430Size(field->getType(), &field_align, loc);
      offset = (offset + field_align - 1) / field_align * field_align + size;
      max_align = std::max(max_align, field_align);
    }
    *align = max_align;
    return (offset + max_align - 1) / max_align * max_align;
  }
  const Lane lane = LaneOf(t);
  const uint32_t scalar = lane.bits == 64 ? 8 : 4;
  *align = scalar * (lane.count == 1 ? 1 : (lane.count == 2 ? 2 : 4));
  return scalar * lane.count;
}

// Code that ORs the C bytes of `value` (of `type`, at byte `offset`, an expression) into the uint words `w`.
void KernelLowering::StoreBytes(clang::QualType type, const std::string& value, const std::string& offset,
                                int depth, int indent, clang::SourceLocation loc, std::string* out) {
  const std::string pad(indent * 2, ' ');
  const clang::QualType t = type.getCanonicalType().getUnqualifiedType();
  if (const auto* array = context_.getAsConstantArrayType(t)) {
    const std::string i = "i" + std::to_string(depth);
    const uint64_t size = context_.getTypeSizeInChars(array->getElementType()).getQuantity();
    *out += pad + "for (uint " + i + " = 0u; " + i + " < " + std::to_string(array->getSize().getZExtValue()) +
            "u; ++" + i + ") {\n";
    StoreBytes(array->getElementType(), value + "[" + i + "]",
               "(" + offset + " + " + i + " * " + std::to_string(size) + "u)", depth + 1, indent + 1, loc,
               out);
    *out += pad + "}\n";
    return;
  }
  if (const auto* record = t->getAs<clang::RecordType>()) {
    const clang::RecordDecl* decl = record->getDecl()->getDefinition();
    const clang::ASTRecordLayout& layout = context_.getASTRecordLayout(decl);
    for (const clang::FieldDecl* field : decl->fields()) {
      const uint64_t field_offset = layout.getFieldOffset(field->getFieldIndex()) / 8;
      StoreBytes(field->getType(), value + ".f_" + field->getNameAsString(),
                 "(" + offset + " + " + std::to_string(field_offset) + "u)", depth, indent, loc, out);
    }
    return;
  }
  const Lane lane = LaneOf(t);
  if (!lane.ok || lane.is_half) Fail(loc, "a result of type '" + type.getAsString() + "'");
  const unsigned bytes = lane.bits / 8;
  for (unsigned k = 0; k < lane.count; ++k) {
    const std::string v = lane.count == 1 ? value : value + "." + "xyzw"[k];
    const std::string at = "(" + offset + " + " + std::to_string(k * bytes) + "u)";
    if (lane.bits == 64) {
      const std::string words =
          lane.is_float ? "unpackDouble2x32(" + v + ")" : "unpackUint2x32(uint64_t(" + v + "))";
      *out += pad + "{ uvec2 u = " + words + "; w[" + at + " / 4u] = u.x; w[" + at + " / 4u + 1u] = u.y; }\n";
    } else if (lane.bits == 32) {
      *out += pad + "w[" + at +
              " / 4u] = " + (lane.is_float ? "floatBitsToUint(" + v + ")" : "uint(" + v + ")") + ";\n";
    } else {
      const std::string bits = lane.is_bool
                                   ? "(" + v + " ? 1u : 0u)"
                                   : "(uint(" + v + ") & " + (lane.bits == 8 ? "255u" : "65535u") + ")";
      *out += pad + "w[" + at + " / 4u] |= " + bits + " << (8u * (" + at + " % 4u));\n";
    }
  }
}

bool KernelLowering::LowerReduction(const ReductionDesc& desc, const ReductionInfo& info,
                                    const ReductionFunctions& fns, GpuReductionLowering* out) {
  const clang::FunctionDecl* accumulator = fns.accumulator;
  kernel_ = accumulator;
  reduction_ = true;
  try {
    const clang::SourceLocation loc = accumulator->getLocation();
    if (accumulator->getNumParams() != info.accumulator_args.size() + 1)
      Fail(loc, "internal: the accumulator's arguments disagree");
    const clang::QualType accum_type =
        accumulator->getParamDecl(0)->getType()->getPointeeType().getUnqualifiedType();
    const clang::QualType result_type =
        fns.outconverter ? fns.outconverter->getParamDecl(0)->getType()->getPointeeType().getUnqualifiedType()
                         : accum_type;
    const uint64_t result_size = context_.getTypeSizeInChars(result_type).getQuantity();
    if (result_size != desc.result.size)
      Fail(loc, "internal: the result's size disagrees with the reflection");
    // Inputs: the accumulator's by-value parameters after the accumulator.
    std::vector<clang::QualType> input_types;
    for (size_t i = 0; i < info.accumulator_args.size(); ++i) {
      if (info.accumulator_args[i] == ArgKind::kInput)
        input_types.push_back(accumulator->getParamDecl(i + 1)->getType());
    }
    if (input_types.size() != desc.inputs.size()) Fail(loc, "internal: the reduction's inputs disagree");
    std::vector<Storage> storages;
    for (size_t i = 0; i < input_types.size(); ++i) {
      storages.push_back(ElementStorage(input_types[i], "an input's ", loc));
      out->unit_sizes[i] = storages.back().unit;
    }
    uint32_t accum_align = 1;
    const uint32_t accum_size = Std430Size(accum_type, &accum_align, loc);
    out->accumulator_stride = (accum_size + accum_align - 1) / accum_align * accum_align;
    out->result_words = static_cast<uint32_t>((result_size + 3) / 4);
    Use("kiln_index");
    const std::string accum_fn = FunctionName(accumulator, loc);
    const std::string init_fn =
        fns.initializer ? FunctionName(fns.initializer, fns.initializer->getLocation()) : "";
    const std::string combine_fn =
        fns.combiner ? FunctionName(fns.combiner, fns.combiner->getLocation()) : accum_fn;  // RS: no combiner
    const std::string out_fn =
        fns.outconverter ? FunctionName(fns.outconverter, fns.outconverter->getLocation()) : "";

    // Helpers: the initial value, the combine step, and the store of the result's C bytes.
    std::string helpers;
    helpers +=
        "void kiln_init(out " + Declare(accum_type, "a", loc) + ") {\n  a = " + Zero(accum_type, loc) + ";\n";
    if (!init_fn.empty()) helpers += "  " + init_fn + "(a);\n";
    helpers += "}\n";
    helpers += "void kiln_combine(inout " + Declare(accum_type, "a", loc) + ", in " +
               Declare(accum_type, "b", loc) + ") {\n  " + combine_fn + "(a, b);\n}\n";
    helpers += "void kiln_store(in " + Declare(result_type, "r", loc) + ") {\n";
    helpers += "  uint w[" + std::to_string(out->result_words) + "];\n";
    helpers += "  for (uint i = 0u; i < " + std::to_string(out->result_words) + "u; ++i) w[i] = 0u;\n";
    StoreBytes(result_type, "r", "0u", 0, 1, loc, &helpers);
    helpers +=
        "  for (uint i = 0u; i < " + std::to_string(out->result_words) + "u; ++i) b_out[i] = w[i];\n}\n";

    // Pass 0 accumulates cells into one partial per workgroup; pass 1 combines the partials into the result.
    std::string main = helpers;
    main += "void main() {\n  uint lid = gl_LocalInvocationID.x;\n";
    main += "  " + Declare(accum_type, "acc", loc) + ";\n  kiln_init(acc);\n";
    main += "  if (KILN_PASS == 0u) {\n";
    main += "    uint total = kiln.dim.x * kiln.dim.y * kiln.dim.z;\n";
    main += "    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n";
    main += "    for (uint c = gl_GlobalInvocationID.x; c < total; c += step) {\n";
    main +=
        "      uvec3 p = uvec3(c % kiln.dim.x, (c / kiln.dim.x) % kiln.dim.y, c / (kiln.dim.x * "
        "kiln.dim.y));\n";
    std::string call = accum_fn + "(acc";
    size_t input = 0;
    for (size_t i = 0; i < info.accumulator_args.size(); ++i) {
      if (info.accumulator_args[i] == ArgKind::kContext) continue;
      call += ", " + Argument(info.accumulator_args[i], accumulator->getParamDecl(i + 1), input_types,
                              storages, "      ", &input, &main);
    }
    main += "      " + call + ");\n    }\n";
    main += "  } else {\n";
    main +=
        "    for (uint i = lid; i < kiln.dim.w; i += gl_WorkGroupSize.x) kiln_combine(acc, "
        "kiln_partials[i].v);\n";
    main += "  }\n";
    main += "  kiln_shared[lid].v = acc;\n  barrier();\n";
    main += "  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {\n";
    main += "    if (lid < s) {\n";
    main += "      " + Declare(accum_type, "mine", loc) + " = kiln_shared[lid].v;\n";
    main += "      kiln_combine(mine, kiln_shared[lid + s].v);\n";
    main += "      kiln_shared[lid].v = mine;\n    }\n    barrier();\n  }\n";
    main += "  if (lid == 0u) {\n";
    main += "    if (KILN_PASS == 0u) {\n      kiln_partials[gl_WorkGroupID.x].v = kiln_shared[0].v;\n";
    main += "    } else {\n";
    if (out_fn.empty()) {
      main += "      kiln_store(kiln_shared[0].v);\n";
    } else {
      main += "      " + Declare(result_type, "r", loc) + " = " + Zero(result_type, loc) + ";\n";
      main += "      " + out_fn + "(r, kiln_shared[0].v);\n      kiln_store(r);\n";
    }
    main += "    }\n  }\n}\n";

    const std::string preamble = "layout(constant_id = " + std::to_string(KILN_SPIRV_SPEC_REDUCE_PASS) +
                                 ") const uint KILN_PASS = 0u;\n";
    std::string bindings = "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_RESULT_BINDING) +
                           ", std430) writeonly buffer Out { uint b_out[]; };\n";
    bindings += "struct KilnAccum {\n  " + Declare(accum_type, "v", loc) + ";\n};\n";
    bindings += "layout(set = 0, binding = " + std::to_string(KILN_SPIRV_PARTIALS_BINDING) +
                ", std430) buffer KilnPartials { KilnAccum kiln_partials[]; };\n";
    bindings += "shared KilnAccum kiln_shared[gl_WorkGroupSize.x];\n";
    out->glsl =
        Assemble("reduction '" + desc.name + "'", loc, storages, storages.size(), preamble, bindings, main);
    out->cpu_only_reason.clear();
    return true;
  } catch (const Failure&) {
    return false;
  }
}

}  // namespace compiler
}  // namespace kiln
