// libFuzzer target for the .kmod reader (formats/kmod). Each input is tried twice: as a module file on its
// own, and as a list of byte edits applied to a valid built-in module, which reaches the structural checks
// behind the verifier far sooner than mutating from nothing would.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "formats/kmod/module.h"

namespace {

kiln::KernelTypeDesc Float(uint32_t lanes) {
  kiln::KernelTypeDesc t;
  t.kind = kiln::KernelTypeKind::kScalar;
  t.element_type = kKilnFloat32;
  t.vector_size = lanes;
  t.size = 4 * (lanes == 3 ? 4 : lanes);
  t.alignment = t.size;
  return t;
}

std::vector<uint8_t> BuildValidModule() {
  kiln::KernelModuleDesc m;
  m.compiler_version = "fuzz";
  m.source_name = "fuzz.rs";
  kiln::KernelDesc k;
  k.name = "k";
  k.expand_symbol = "__kiln_expand_k";
  k.signature = kiln::kKernelSigIn | kiln::kKernelSigOut | kiln::kKernelSigKernel;
  k.inputs = {Float(4), Float(1)};
  k.output = Float(2);
  m.kernels.push_back(k);
  kiln::GlobalDesc g;
  g.name = "g";
  g.type.kind = kiln::KernelTypeKind::kStruct;
  g.type.name = "S";
  g.type.size = 8;
  g.type.alignment = 4;
  g.type.fields.push_back({"a", 0, Float(1)});
  g.type.fields.push_back({"b", 4, Float(1)});
  g.size = 8;
  g.alignment = 4;
  g.default_value.assign(8, 1);
  m.globals.push_back(g);
  kiln::InvokableDesc f;
  f.name = "f";
  f.symbol = "__kiln_invoke_f";
  f.params.push_back({"x", Float(1), 0});
  f.args_size = 4;
  f.args_alignment = 4;
  m.invokables.push_back(f);
  kiln::ReductionDesc r;
  r.name = "r";
  r.accumulator = "acc";
  r.init_symbol = "__kiln_reduce_r_init";
  r.accum_symbol = "__kiln_reduce_r_accum";
  r.combine_symbol = "__kiln_reduce_r_combine";
  r.out_symbol = "__kiln_reduce_r_out";
  r.accumulator_type = Float(1);
  r.accumulator_size = 4;
  r.accumulator_alignment = 4;
  r.inputs = {Float(1)};
  r.result = Float(1);
  m.reductions.push_back(r);
  m.payloads.push_back({kiln::kPayloadTargetLlvmBitcode, {1, 2, 3, 4}});
  m.imports = {"__kiln_rt_debug"};
  std::vector<uint8_t> bytes;
  std::string error;
  if (!kiln::WriteKernelModule(m, &bytes, &error)) __builtin_trap();
  return bytes;
}

void Read(const uint8_t* data, size_t size) {
  kiln::KernelModuleDesc desc;
  std::string error;
  if (kiln::ReadKernelModule(data, size, &desc, &error)) {
    // Whatever the reader accepts must describe and re-serialize cleanly.
    (void)kiln::DescribeKernelModule(desc);
    std::vector<uint8_t> again;
    if (!kiln::WriteKernelModule(desc, &again, &error)) __builtin_trap();
  } else if (error.empty()) {
    __builtin_trap();  // a refusal must say why
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<uint8_t> valid = BuildValidModule();
  Read(data, size);
  // Edits: (offset high, offset low, value) triples, plus the first byte choosing a truncation.
  std::vector<uint8_t> edited = valid;
  for (size_t i = 0; i + 3 <= size; i += 3) {
    const size_t offset = ((static_cast<size_t>(data[i]) << 8) | data[i + 1]) % edited.size();
    edited[offset] = data[i + 2];
  }
  if (size % 3 == 1) edited.resize(edited.size() - data[size - 1] % edited.size());
  Read(edited.data(), edited.size());
  return 0;
}
