// kilnc compiled in-process: reflection, generated entry points in the bitcode, pragmas, reductions,
// invokables, globals with defaults, and the module round trip.
#include "compiler/compiler.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "formats/kmod/module.h"

namespace kiln {
namespace {

// A kernel of tests/compiler/kernels, or the Atan example's (examples/atan/atan_op.rs).
std::string ReadKernel(const std::string& name) {
  const std::string path = std::string(KILN_SOURCE_DIR) +
                           (name == "atan_op.rs" ? "/examples/atan/" : "/tests/compiler/kernels/") + name;
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

CompileResult Compile(const std::string& source, const std::string& filename = "test.rs",
                      CompileOptions options = CompileOptions()) {
  CompileResult result;
  CompileKernelSource(source, filename, options, &result);
  return result;
}

CompileResult CompileKernelFile(const std::string& name) {
  CompileOptions options;
  options.keep_ir_text = true;
  return Compile(ReadKernel(name), name, options);
}

// The module's CPU payload, parsed and verified.
std::unique_ptr<llvm::Module> LoadBitcode(const KernelModuleDesc& module, llvm::LLVMContext* context) {
  const PayloadDesc* payload = module.FindPayload(kPayloadTargetLlvmBitcode);
  if (!payload) {
    ADD_FAILURE() << "no llvm-bc payload";
    return nullptr;
  }
  llvm::StringRef bytes(reinterpret_cast<const char*>(payload->data.data()), payload->data.size());
  auto parsed = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bytes, "payload"), *context);
  if (!parsed) {
    ADD_FAILURE() << "bitcode does not parse: " << llvm::toString(parsed.takeError());
    return nullptr;
  }
  std::string errors;
  llvm::raw_string_ostream os(errors);
  EXPECT_FALSE(llvm::verifyModule(**parsed, &os)) << os.str();
  return std::move(*parsed);
}

// Checks an exported entry point: defined, external, returning void, with the given parameter types.
void ExpectEntryPoint(const llvm::Module& module, const std::string& name,
                      const std::vector<std::string>& params) {
  const llvm::Function* f = module.getFunction(name);
  ASSERT_NE(f, nullptr) << name << " missing";
  EXPECT_FALSE(f->isDeclaration()) << name;
  EXPECT_EQ(f->getLinkage(), llvm::GlobalValue::ExternalLinkage) << name;
  EXPECT_TRUE(f->getReturnType()->isVoidTy()) << name;
  ASSERT_EQ(f->arg_size(), params.size()) << name;
  for (size_t i = 0; i < params.size(); ++i) {
    std::string type;
    llvm::raw_string_ostream os(type);
    f->getArg(static_cast<unsigned>(i))->getType()->print(os);
    EXPECT_EQ(os.str(), params[i]) << name << " parameter " << i;
  }
  // The driver compiles for its host; a pinned CPU would keep it at baseline x86-64.
  EXPECT_FALSE(f->hasFnAttribute("target-cpu")) << name;
  EXPECT_FALSE(f->hasFnAttribute("target-features")) << name;
}

const std::vector<std::string> kExpandParams = {"ptr", "i32", "i32", "i32", "i32"};

TEST(CompilerTest, AtanOpEndToEnd) {
  CompileResult result = CompileKernelFile("atan_op.rs");
  ASSERT_TRUE(result.ok) << result.diagnostics;
  const KernelModuleDesc& m = result.module;
  EXPECT_EQ(m.package_name, "com.example");
  EXPECT_EQ(m.source_name, "atan_op.rs");
  EXPECT_EQ(m.source_checksum.size(), 32u);
  EXPECT_EQ(m.hal_level, (HalLevel{1, 0}));
  ASSERT_EQ(m.kernels.size(), 1u);
  const KernelDesc& k = m.kernels[0];
  EXPECT_EQ(k.name, "atan_op");
  EXPECT_EQ(k.expand_symbol, "__kiln_expand_atan_op");
  EXPECT_EQ(k.signature, kKernelSigIn | kKernelSigOut | kKernelSigKernel);
  EXPECT_FALSE(k.root_style);
  ASSERT_EQ(k.inputs.size(), 1u);
  EXPECT_EQ(k.inputs[0].kind, KernelTypeKind::kScalar);
  EXPECT_EQ(k.inputs[0].element_type, kKilnFloat32);
  EXPECT_EQ(k.inputs[0].vector_size, 1u);
  EXPECT_EQ(k.output.element_type, kKilnFloat32);
  ASSERT_EQ(m.globals.size(), 1u);
  EXPECT_EQ(m.globals[0].name, "offset");
  EXPECT_TRUE(m.globals[0].settable());
  EXPECT_EQ(m.globals[0].default_value, std::vector<uint8_t>(4, 0));
  EXPECT_TRUE(m.imports.empty());

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = LoadBitcode(m, &context);
  ASSERT_TRUE(ir);
  ExpectEntryPoint(*ir, "__kiln_expand_atan_op", kExpandParams);
  // atan comes from the math library, inlined: nothing external is left to call.
  for (const llvm::Function& f : *ir) {
    if (f.isDeclaration()) {
      EXPECT_TRUE(f.isIntrinsic()) << "unexpected external " << f.getName().str();
    }
  }
  // The kernel itself is internal (inlined into the expanded loop), the global keeps its name.
  const llvm::Function* kernel = ir->getFunction("atan_op");
  EXPECT_TRUE(kernel == nullptr || kernel->hasInternalLinkage());
  ASSERT_NE(ir->getNamedGlobal("offset"), nullptr);
  EXPECT_FALSE(ir->getNamedGlobal("offset")->hasInternalLinkage());
  // Vectorizing is the driver's job.
  EXPECT_EQ(result.llvm_ir.find("<4 x float>"), std::string::npos);

  // The serialized module reads back to the same description.
  KernelModuleDesc read;
  std::string error;
  ASSERT_TRUE(ReadKernelModule(result.kmod.data(), result.kmod.size(), &read, &error)) << error;
  EXPECT_EQ(DescribeKernelModule(read), DescribeKernelModule(m));
  EXPECT_EQ(read.payloads[0].data, m.payloads[0].data);
  EXPECT_EQ(read.source_checksum, m.source_checksum);
}

TEST(CompilerTest, GreyscaleUchar4AndConstGlobal) {
  CompileResult result = CompileKernelFile("greyscale.rs");
  ASSERT_TRUE(result.ok) << result.diagnostics;
  const KernelModuleDesc& m = result.module;
  EXPECT_EQ(m.precision, KernelPrecision::kRelaxed);
  ASSERT_EQ(m.kernels.size(), 1u);
  const KernelDesc& k = m.kernels[0];
  ASSERT_EQ(k.inputs.size(), 1u);
  EXPECT_EQ(k.inputs[0].element_type, kKilnUInt8);
  EXPECT_EQ(k.inputs[0].vector_size, 4u);
  EXPECT_EQ(k.inputs[0].size, 4u);
  EXPECT_EQ(k.output.element_type, kKilnUInt8);
  EXPECT_EQ(k.output.vector_size, 4u);
  const GlobalDesc* weights = m.FindGlobal("kLumaWeights");
  ASSERT_NE(weights, nullptr);
  EXPECT_TRUE(weights->is_const);
  EXPECT_FALSE(weights->settable());
  EXPECT_EQ(weights->size, 16u);  // a float3 occupies a float4
  // The reflection dump calls a vector type a vector, with its lanes.
  const std::string described = DescribeKernelModule(m);
  EXPECT_NE(described.find("uchar4 (vector of 4 lanes, size 4, align 4)"), std::string::npos) << described;
  EXPECT_EQ(described.find("4 (scalar"), std::string::npos) << described;
  ASSERT_EQ(weights->default_value.size(), 16u);
  float values[4];
  std::memcpy(values, weights->default_value.data(), sizeof(values));
  EXPECT_FLOAT_EQ(values[0], 0.299f);
  EXPECT_FLOAT_EQ(values[1], 0.587f);
  EXPECT_FLOAT_EQ(values[2], 0.114f);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = LoadBitcode(m, &context);
  ASSERT_TRUE(ir);
  ExpectEntryPoint(*ir, "__kiln_expand_greyscale", kExpandParams);
  // uchar4 elements are split into lanes: the driver's loop vectorizer rejects loops over LLVM vector types.
  EXPECT_NE(result.llvm_ir.find("__kiln_expand_greyscale"), std::string::npos);
  EXPECT_EQ(result.llvm_ir.find("load <4 x i8>"), std::string::npos) << result.llvm_ir;
  EXPECT_EQ(result.llvm_ir.find("store <4 x i8>"), std::string::npos) << result.llvm_ir;
}

TEST(CompilerTest, Reductions) {
  CompileResult result = CompileKernelFile("sum_reduce.rs");
  ASSERT_TRUE(result.ok) << result.diagnostics;
  const KernelModuleDesc& m = result.module;
  EXPECT_TRUE(m.kernels.empty());
  EXPECT_TRUE(m.invokables.empty()) << "reduction functions are not invokables";
  ASSERT_EQ(m.reductions.size(), 2u);

  const ReductionDesc* add = m.FindReduction("addint");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->accumulator, "addintAccum");
  EXPECT_TRUE(add->initializer.empty());
  EXPECT_TRUE(add->combiner.empty());
  EXPECT_EQ(add->accumulator_size, 4u);
  EXPECT_EQ(add->accumulator_type.element_type, kKilnInt32);
  ASSERT_EQ(add->inputs.size(), 1u);
  EXPECT_EQ(add->inputs[0].element_type, kKilnInt32);
  EXPECT_EQ(add->result.element_type, kKilnInt32);
  EXPECT_EQ(add->signature, 0u);

  const ReductionDesc* mm = m.FindReduction("minmax");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->initializer, "mmInit");
  EXPECT_EQ(mm->combiner, "mmCombine");
  EXPECT_EQ(mm->outconverter, "mmOut");
  EXPECT_EQ(mm->accumulator_type.kind, KernelTypeKind::kStruct);
  EXPECT_EQ(mm->accumulator_size, 12u);
  EXPECT_EQ(mm->accumulator_alignment, 4u);
  ASSERT_EQ(mm->accumulator_type.fields.size(), 3u);
  EXPECT_EQ(mm->accumulator_type.fields[1].name, "max_value");
  EXPECT_EQ(mm->accumulator_type.fields[1].offset, 4u);
  EXPECT_EQ(mm->accumulator_type.fields[2].type.element_type, kKilnUInt32);
  EXPECT_EQ(mm->result.element_type, kKilnFloat32);
  EXPECT_EQ(mm->result.vector_size, 2u);
  EXPECT_EQ(mm->signature, kKernelSigX);

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = LoadBitcode(m, &context);
  ASSERT_TRUE(ir);
  for (const char* name : {"addint", "minmax"}) {
    const std::string prefix = std::string("__kiln_reduce_") + name;
    ExpectEntryPoint(*ir, prefix + "_init", {"ptr"});
    ExpectEntryPoint(*ir, prefix + "_accum", {"ptr", "ptr", "i32", "i32", "i32", "i32"});
    ExpectEntryPoint(*ir, prefix + "_combine", {"ptr", "ptr"});
    ExpectEntryPoint(*ir, prefix + "_out", {"ptr", "ptr"});
  }
}

TEST(CompilerTest, ScriptStateGlobalsInvokablesInitAndRoot) {
  CompileResult result = CompileKernelFile("script_state.rs");
  ASSERT_TRUE(result.ok) << result.diagnostics;
  const KernelModuleDesc& m = result.module;
  EXPECT_TRUE(m.has_init);
  EXPECT_EQ(m.FindInvokable("init"), nullptr);
  EXPECT_EQ(m.FindGlobal("sHidden"), nullptr) << "static globals are not reflected";

  const GlobalDesc* scale = m.FindGlobal("gScale");
  ASSERT_NE(scale, nullptr);
  float f = 0;
  ASSERT_EQ(scale->default_value.size(), 4u);
  std::memcpy(&f, scale->default_value.data(), 4);
  EXPECT_EQ(f, 2.5f);
  const GlobalDesc* counter = m.FindGlobal("gCounter");
  ASSERT_NE(counter, nullptr) << "a tentative definition is a global too";
  EXPECT_EQ(counter->default_value, std::vector<uint8_t>(4, 0));
  const GlobalDesc* limit = m.FindGlobal("kLimit");
  ASSERT_NE(limit, nullptr);
  EXPECT_TRUE(limit->is_const);
  EXPECT_EQ(limit->default_value, (std::vector<uint8_t>{42, 0, 0, 0}));
  const GlobalDesc* params = m.FindGlobal("gParams");
  ASSERT_NE(params, nullptr);
  EXPECT_EQ(params->type.kind, KernelTypeKind::kStruct);
  EXPECT_EQ(params->type.name, "Params");
  ASSERT_EQ(params->type.fields.size(), 3u);
  EXPECT_EQ(params->type.fields[2].name, "tint");
  EXPECT_EQ(params->type.fields[2].offset, 8u);
  EXPECT_EQ(params->type.fields[2].type.vector_size, 4u);
  ASSERT_EQ(params->default_value.size(), 12u);
  float gain;
  int32_t bias;
  std::memcpy(&gain, params->default_value.data(), 4);
  std::memcpy(&bias, params->default_value.data() + 4, 4);
  EXPECT_EQ(gain, 1.5f);
  EXPECT_EQ(bias, -3);
  EXPECT_EQ(params->default_value[8], 1);
  EXPECT_EQ(params->default_value[11], 4);
  const GlobalDesc* lookup = m.FindGlobal("gLookup");
  ASSERT_NE(lookup, nullptr);
  EXPECT_EQ(lookup->type.kind, KernelTypeKind::kAllocation);
  EXPECT_TRUE(lookup->is_allocation);
  const GlobalDesc* bound = m.FindGlobal("gBound");
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(bound->type.kind, KernelTypeKind::kPointer);
  EXPECT_EQ(bound->type.element_type, kKilnFloat32);
  EXPECT_TRUE(bound->is_allocation);
  EXPECT_EQ(bound->size, 8u);

  const InvokableDesc* set_scale = m.FindInvokable("setScale");
  ASSERT_NE(set_scale, nullptr);
  ASSERT_EQ(set_scale->params.size(), 2u);
  EXPECT_EQ(set_scale->params[0].name, "scale");
  EXPECT_EQ(set_scale->params[0].offset, 0u);
  EXPECT_EQ(set_scale->params[1].offset, 4u);
  EXPECT_EQ(set_scale->args_size, 8u);
  const InvokableDesc* bump = m.FindInvokable("bump");
  ASSERT_NE(bump, nullptr);
  EXPECT_EQ(bump->args_size, 0u);

  const KernelDesc* root = m.FindKernel("root");
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->root_style);
  EXPECT_EQ(root->signature, kKernelSigIn | kKernelSigOut | kKernelSigUsr | kKernelSigX | kKernelSigY);
  const KernelDesc* scaled = m.FindKernel("scaled");
  ASSERT_NE(scaled, nullptr);
  EXPECT_EQ(scaled->signature, kKernelSigIn | kKernelSigOut | kKernelSigKernel | kKernelSigX);
  const KernelDesc* count = m.FindKernel("count_positive");
  ASSERT_NE(count, nullptr);
  EXPECT_FALSE(count->has_output());

  // rsDebug and rsGetElementAt_float reach the driver's services.
  EXPECT_EQ(m.imports, (std::vector<std::string>{"__kiln_rt_debug", "__kiln_rt_element_access_error"}));

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = LoadBitcode(m, &context);
  ASSERT_TRUE(ir);
  ExpectEntryPoint(*ir, "__kiln_invoke_init", {"ptr"});
  ExpectEntryPoint(*ir, "__kiln_invoke_setScale", {"ptr"});
  ExpectEntryPoint(*ir, "__kiln_invoke_bump", {"ptr"});
  ExpectEntryPoint(*ir, "__kiln_expand_root", kExpandParams);
  ExpectEntryPoint(*ir, "__kiln_expand_scaled", kExpandParams);
  ExpectEntryPoint(*ir, "__kiln_expand_count_positive", kExpandParams);
  for (const char* global : {"gScale", "gCounter", "kLimit", "gParams", "gLookup", "gBound"}) {
    EXPECT_NE(ir->getNamedGlobal(global), nullptr) << global;
  }
}

TEST(CompilerTest, AndroidStyleImageFilters) {
  CompileResult result = CompileKernelFile("image_filters.rs");
  ASSERT_TRUE(result.ok) << result.diagnostics;
  const KernelModuleDesc& m = result.module;
  EXPECT_EQ(m.precision, KernelPrecision::kRelaxed);
  // __attribute__((kernel)) and RS_KERNEL are the same thing.
  const KernelDesc* blur = m.FindKernel("blur");
  ASSERT_NE(blur, nullptr);
  EXPECT_EQ(blur->signature, kKernelSigIn | kKernelSigOut | kKernelSigKernel | kKernelSigX | kKernelSigY);
  const KernelDesc* tint = m.FindKernel("tint");
  ASSERT_NE(tint, nullptr);
  EXPECT_EQ(tint->signature, kKernelSigIn | kKernelSigOut | kKernelSigKernel | kKernelSigX | kKernelSigCtxt);
  EXPECT_EQ(tint->inputs[0].size, 16u);
  ASSERT_NE(m.FindKernel("histogram"), nullptr);
  ASSERT_NE(m.FindKernel("colorMatrix"), nullptr);
  const GlobalDesc* histogram = m.FindGlobal("gHistogram");
  ASSERT_NE(histogram, nullptr);
  EXPECT_EQ(histogram->type.array_size, 256u);
  EXPECT_EQ(histogram->type.element_type, kKilnUInt32);
  EXPECT_EQ(histogram->size, 1024u);
  const GlobalDesc* matrix = m.FindGlobal("gColorMatrix");
  ASSERT_NE(matrix, nullptr);
  EXPECT_EQ(matrix->type.kind, KernelTypeKind::kStruct);
  EXPECT_EQ(matrix->size, 64u);
  EXPECT_NE(m.FindInvokable("filter"), nullptr);
  EXPECT_EQ(m.imports, (std::vector<std::string>{"__kiln_rt_debug", "__kiln_rt_element_access_error",
                                                 "__kiln_rt_for_each"}));
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = LoadBitcode(m, &context);
  ASSERT_TRUE(ir);
  for (const char* name : {"blur", "histogram", "tint", "colorMatrix"}) {
    ExpectEntryPoint(*ir, std::string("__kiln_expand_") + name, kExpandParams);
  }
  ExpectEntryPoint(*ir, "__kiln_invoke_filter", {"ptr"});
}

TEST(CompilerTest, EveryRuntimeServiceIsImported) {
  CompileResult result = CompileKernelFile("runtime_api.rs");
  ASSERT_TRUE(result.ok) << result.diagnostics;
  EXPECT_EQ(result.module.imports,
            (std::vector<std::string>{"__kiln_rt_create_allocation", "__kiln_rt_debug",
                                      "__kiln_rt_element_access_error", "__kiln_rt_for_each",
                                      "__kiln_rt_localtime", "__kiln_rt_send_to_client", "__kiln_rt_time",
                                      "__kiln_rt_uptime_millis", "__kiln_rt_uptime_nanos"}));
  const KernelDesc* yuv = result.module.FindKernel("yuvToRgb");
  ASSERT_NE(yuv, nullptr);
  EXPECT_EQ(yuv->signature, kKernelSigOut | kKernelSigKernel | kKernelSigX | kKernelSigY);
  const KernelDesc* halves = result.module.FindKernel("halves");
  ASSERT_NE(halves, nullptr);
  ASSERT_EQ(halves->inputs.size(), 2u);
  EXPECT_EQ(halves->inputs[0].element_type, kKilnFloat16);
  EXPECT_EQ(halves->inputs[0].vector_size, 2u);
  EXPECT_EQ(halves->inputs[1].element_type, kKilnBool);
  EXPECT_EQ(result.module.FindGlobal("gElement")->type.kind, KernelTypeKind::kObject);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = LoadBitcode(result.module, &context);
  ASSERT_TRUE(ir);
  for (const char* name : {"inspect", "allocate", "run", "report"}) {
    ExpectEntryPoint(*ir, std::string("__kiln_invoke_") + name, {"ptr"});
  }
  // The runtime services are declared with exactly kernel_abi.h's prototypes.
  const llvm::Function* for_each = ir->getFunction("__kiln_rt_for_each");
  ASSERT_NE(for_each, nullptr);
  EXPECT_EQ(for_each->arg_size(), 4u);
  EXPECT_TRUE(for_each->getReturnType()->isIntegerTy(32));
}

TEST(CompilerTest, IncludesRootFormsReductionSpecialsAndStructArguments) {
  const std::string dir = ::testing::TempDir() + "/kilnc_include_test";
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  ASSERT_FALSE(error) << error.message();
  {
    std::ofstream header(dir + "/shared_types.rsh");
    header << "typedef struct Settings { float gain; double offset; char tag; } Settings;\n";
  }
  CompileOptions options;
  options.include_dirs = {dir};
  CompileResult result = Compile(
      "#pragma version(1)\n"
      "#pragma rs java_package_name(a.b)\n"
      "#include \"shared_types.rsh\"\n"
      "Settings gSettings;\n"
      "void configure(char mode, Settings settings, float3 axis) { gSettings = settings; }\n"
      "void root(uchar4* out, uint32_t x, uint32_t y) { *out = (uchar4){(uchar)x, (uchar)y, 0, 255}; }\n"
      "#pragma rs reduce(weighted) accumulator(weightedAccum) combiner(weightedCombine)\n"
      "static void weightedAccum(float* acc, float value, float weight, rs_kernel_context context, uint32_t "
      "x) {\n"
      "  *acc += value * weight;\n"
      "}\n"
      "static void weightedCombine(float* acc, const float* other) { *acc += *other; }\n",
      "includes.rs", options);
  ASSERT_TRUE(result.ok) << result.diagnostics;
  const KernelModuleDesc& m = result.module;
  const InvokableDesc* configure = m.FindInvokable("configure");
  ASSERT_NE(configure, nullptr);
  ASSERT_EQ(configure->params.size(), 3u);
  EXPECT_EQ(configure->params[0].offset, 0u);
  EXPECT_EQ(configure->params[1].offset, 8u);  // Settings is 8-aligned
  EXPECT_EQ(configure->params[1].type.size, 24u);
  EXPECT_EQ(configure->params[2].offset, 32u);  // float3: 16 bytes, 16-aligned
  EXPECT_EQ(configure->args_size, 48u);
  EXPECT_EQ(configure->args_alignment, 16u);
  const KernelDesc* root = m.FindKernel("root");
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->root_style);
  EXPECT_TRUE(root->inputs.empty());
  EXPECT_EQ(root->signature, kKernelSigOut | kKernelSigX | kKernelSigY);
  const ReductionDesc* weighted = m.FindReduction("weighted");
  ASSERT_NE(weighted, nullptr);
  EXPECT_EQ(weighted->inputs.size(), 2u);
  EXPECT_EQ(weighted->signature, kKernelSigCtxt | kKernelSigX);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = LoadBitcode(m, &context);
  ASSERT_TRUE(ir);
  ExpectEntryPoint(*ir, "__kiln_invoke_configure", {"ptr"});
  ExpectEntryPoint(*ir, "__kiln_expand_root", kExpandParams);
  ExpectEntryPoint(*ir, "__kiln_reduce_weighted_accum", {"ptr", "ptr", "i32", "i32", "i32", "i32"});
}

// A kernel's HAL level is the highest level among the functions it reaches; a module above what the runtime
// supports is refused at compile time rather than written.
TEST(CompilerTest, HalLevelPropagates) {
  CompileResult result = Compile(
      "#pragma version(1)\n"
      "#pragma rs java_package_name(a.b)\n"
      "static __attribute__((annotate(\"kiln_hal:1.3\"))) float future(float v) { return v; }\n"
      "static float helper(float v) { return future(v) + 1.0f; }\n"
      "float RS_KERNEL k(float in) { return helper(in); }\n");
  EXPECT_FALSE(result.ok);
  EXPECT_NE(
      result.diagnostics.find("test.rs:5:17: error: kernel 'k': needs HAL level 1.3 (through the functions "
                              "it calls), above the newest Kiln supports (1.0)"),
      std::string::npos)
      << result.diagnostics;
}

// RenderScript's graphics header is found and harmless; a kernel context named other than `context` is refused
// with RenderScript's rule, not as a pointer input.
TEST(CompilerTest, GraphicsHeaderAndContextName) {
  CompileResult result = Compile(
      "#pragma version(1)\n"
      "#pragma rs java_package_name(a.b)\n"
      "#include \"rs_graphics.rsh\"\n"
      "uint RS_KERNEL leading(uint in) { return clz(in); }\n");
  EXPECT_TRUE(result.ok) << result.diagnostics;
  result = Compile(
      "#pragma version(1)\n"
      "#pragma rs java_package_name(a.b)\n"
      "uint RS_KERNEL k(uint in, rs_kernel_context ctx) { return in + rsGetDimX(ctx); }\n");
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.diagnostics.find("test.rs:3:45: error: kernel 'k': the rs_kernel_context parameter 'ctx' must "
                                    "be named 'context', as RenderScript requires"),
            std::string::npos)
      << result.diagnostics;
}

TEST(CompilerTest, SpecialParametersAndManyInputs) {
  CompileResult result = Compile(
      "#pragma version(1)\n"
      "#pragma rs java_package_name(a.b)\n"
      "int RS_KERNEL coords(int a, rs_kernel_context context, uint32_t x, uint32_t y, uint32_t z) {\n"
      "  return a + (int)(x + y * rsGetDimX(context) + z);\n"
      "}\n"
      "float4 RS_KERNEL eight(float4 a, float4 b, float4 c, float4 d, float4 e, float4 f, float4 g, "
      "float4 h) {\n"
      "  return a + b + c + d + e + f + g + h;\n"
      "}\n"
      "uchar RS_KERNEL fill() { return 7; }\n"
      "typedef struct Pair { short a; double b; } Pair;\n"
      "Pair RS_KERNEL swap(Pair in, int y) { Pair out = {(short)-in.a, in.b * 2.0}; return out; }\n");
  ASSERT_TRUE(result.ok) << result.diagnostics;
  const KernelModuleDesc& m = result.module;
  const KernelDesc* coords = m.FindKernel("coords");
  ASSERT_NE(coords, nullptr);
  EXPECT_EQ(coords->signature, kKernelSigIn | kKernelSigOut | kKernelSigKernel | kKernelSigCtxt |
                                   kKernelSigX | kKernelSigY | kKernelSigZ);
  EXPECT_EQ(coords->inputs.size(), 1u);
  const KernelDesc* eight = m.FindKernel("eight");
  ASSERT_NE(eight, nullptr);
  EXPECT_EQ(eight->inputs.size(), 8u);
  const KernelDesc* fill = m.FindKernel("fill");
  ASSERT_NE(fill, nullptr);
  EXPECT_EQ(fill->signature, kKernelSigOut | kKernelSigKernel);
  EXPECT_TRUE(fill->inputs.empty());
  const KernelDesc* swap = m.FindKernel("swap");
  ASSERT_NE(swap, nullptr);
  EXPECT_EQ(swap->inputs[0].kind, KernelTypeKind::kStruct);
  EXPECT_EQ(swap->inputs[0].size, 16u);
  EXPECT_EQ(swap->signature, kKernelSigIn | kKernelSigOut | kKernelSigKernel | kKernelSigY);

  // The expanded loop has a contiguous fast path and a strided general path.
  EXPECT_NE(result.entry_point_source.find("__kiln_rows_eight"), std::string::npos);
  EXPECT_NE(result.entry_point_source.find("__builtin_memcpy(&__v7"), std::string::npos);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = LoadBitcode(m, &context);
  ASSERT_TRUE(ir);
  for (const char* name : {"coords", "eight", "fill", "swap"}) {
    ExpectEntryPoint(*ir, std::string("__kiln_expand_") + name, kExpandParams);
  }
}

TEST(CompilerTest, PragmasAndPreprocessorOptions) {
  CompileOptions options;
  options.defines = {"GAIN=3", "USE_GAIN"};
  CompileResult result = Compile(
      "#pragma version(1)\n"
      "#pragma rs java_package_name(org.kiln.tests.deep)\n"
      "#pragma rs_fp_imprecise\n"
      "#include <stdint.h>\n"
      "#ifdef USE_GAIN\n"
      "int32_t RS_KERNEL gain(int32_t in) { return in * GAIN; }\n"
      "#endif\n",
      "pragmas.rs", options);
  ASSERT_TRUE(result.ok) << result.diagnostics;
  EXPECT_EQ(result.module.package_name, "org.kiln.tests.deep");
  EXPECT_EQ(result.module.precision, KernelPrecision::kImprecise);
  EXPECT_NE(result.module.FindKernel("gain"), nullptr);
}

// The precision pragmas change how floating point is compiled, not just the reflection.
TEST(CompilerTest, PrecisionPragmasReachCodeGeneration) {
  const std::string kernel = "float RS_KERNEL k(float a, float b) { return a * b + a / b; }\n";
  struct Case {
    const char* pragma;
    const char* expected_flag;
  };
  for (const Case& c : {Case{"", "fmul float"}, Case{"#pragma rs_fp_relaxed\n", "fmul contract float"},
                        Case{"#pragma rs_fp_imprecise\n", "fmul fast float"}}) {
    CompileOptions options;
    options.keep_ir_text = true;
    options.opt_level = 0;
    CompileResult result = Compile(std::string("#pragma version(1)\n") + c.pragma + kernel, "fp.rs", options);
    ASSERT_TRUE(result.ok) << result.diagnostics;
    EXPECT_NE(result.llvm_ir.find(c.expected_flag), std::string::npos) << c.pragma << result.llvm_ir;
  }
}

TEST(CompilerTest, RsForEachOfOwnKernel) {
  CompileResult result = Compile(
      "#pragma version(1)\n"
      "#pragma rs java_package_name(a.b)\n"
      "rs_allocation gIn, gOut;\n"
      "float RS_KERNEL twice(float in) { return in * 2.0f; }\n"
      "void run() { rsForEach(twice, gIn, gOut); }\n");
  ASSERT_TRUE(result.ok) << result.diagnostics;
  EXPECT_NE(result.module.FindInvokable("run"), nullptr);
  EXPECT_EQ(result.module.imports, (std::vector<std::string>{"__kiln_rt_for_each"}));
}

// Each kernel, reduction and invokable lists the pointer globals its code may use, so that the runtime can
// refuse a launch while one is unbound: through static helpers, a reduction's functions and rsForEach, but
// not globals it never touches, rs_allocations, or a pointer it only compares with NULL.
TEST(CompilerTest, PointerGlobalsPerEntryPoint) {
  const std::string source =
      "#pragma version(1)\n"
      "#pragma rs java_package_name(a.b)\n"
      "float* gWeights;\n"
      "float* gBias;\n"
      "int* gCounts;\n"
      "float* gUnused;\n"
      "rs_allocation gTable, gIn, gOut;\n"
      "static float* sScratch;\n"
      "static float weight(uint32_t x) { return gWeights[x]; }\n"
      "static float twice_weight(uint32_t x) { return 2.0f * weight(x); }\n"
      "float RS_KERNEL scaled(float in, uint32_t x) { return in * twice_weight(x); }\n"
      "float RS_KERNEL biased(float in, uint32_t x) {\n"
      "  return in + gBias[x] + rsGetElementAt_float(gTable, x) + (sScratch ? sScratch[x] : 0.0f);\n"
      "}\n"
      "int RS_KERNEL has_bias(int in) { return gBias != NULL ? in : 0; }\n"
      "void RS_KERNEL count(uchar in) { rsAtomicInc(&gCounts[in & 3]); }\n"
      "#pragma rs reduce(total) accumulator(totalAccum) combiner(totalCombine)\n"
      "static void totalAccum(float* acc, float in, uint32_t x) { *acc += in * weight(x); }\n"
      "static void totalCombine(float* acc, const float* other) { *acc += *other; }\n"
      "#pragma rs reduce(plain) accumulator(plainAccum)\n"
      "static void plainAccum(int* acc, int in) { *acc += in; }\n"
      "void resetCounts(int n) { for (int i = 0; i < n; ++i) gCounts[i] = 0; }\n"
      "void launchScaled() { rsForEach(scaled, gIn, gOut); }\n"
      "void nothing() {}\n";
  using Names = std::vector<std::string>;
  for (int opt_level : {0, 2}) {
    SCOPED_TRACE("opt level " + std::to_string(opt_level));
    CompileOptions options;
    options.opt_level = opt_level;
    CompileResult result = Compile(source, "pointers.rs", options);
    ASSERT_TRUE(result.ok) << result.diagnostics;
    const KernelModuleDesc& m = result.module;
    ASSERT_NE(m.FindGlobal("gUnused"), nullptr);
    EXPECT_TRUE(m.FindGlobal("gUnused")->is_pointer());
    EXPECT_FALSE(m.FindGlobal("gTable")->is_pointer());
    for (const char* kernel : {"scaled", "biased", "has_bias", "count"})
      ASSERT_NE(m.FindKernel(kernel), nullptr);
    // Only through two static helpers.
    EXPECT_EQ(m.FindKernel("scaled")->pointer_globals, Names{"gWeights"});
    // gTable is an rs_allocation (checked by the driver), sScratch a static the host cannot bind.
    EXPECT_EQ(m.FindKernel("biased")->pointer_globals, Names{"gBias"});
    // Comparing the pointer with NULL never reads through it.
    EXPECT_EQ(m.FindKernel("has_bias")->pointer_globals, Names{});
    EXPECT_EQ(m.FindKernel("count")->pointer_globals, Names{"gCounts"});
    ASSERT_NE(m.FindReduction("total"), nullptr);
    EXPECT_EQ(m.FindReduction("total")->pointer_globals, Names{"gWeights"});
    EXPECT_EQ(m.FindReduction("plain")->pointer_globals, Names{});
    ASSERT_NE(m.FindInvokable("resetCounts"), nullptr);
    EXPECT_EQ(m.FindInvokable("resetCounts")->pointer_globals, Names{"gCounts"});
    // rsForEach launches `scaled` by name, through the driver: its pointer globals count for the invokable.
    EXPECT_EQ(m.FindInvokable("launchScaled")->pointer_globals, Names{"gWeights"});
    EXPECT_EQ(m.FindInvokable("nothing")->pointer_globals, Names{});

    // The written module carries the lists, and the reflection dump shows them.
    KernelModuleDesc read;
    std::string error;
    ASSERT_TRUE(ReadKernelModule(result.kmod.data(), result.kmod.size(), &read, &error)) << error;
    EXPECT_EQ(read.FindKernel("scaled")->pointer_globals, Names{"gWeights"});
    EXPECT_EQ(read.FindReduction("total")->pointer_globals, Names{"gWeights"});
    EXPECT_EQ(read.FindInvokable("resetCounts")->pointer_globals, Names{"gCounts"});
    const std::string described = DescribeKernelModule(read);
    const size_t count = described.find("  kernel count ");
    ASSERT_NE(count, std::string::npos) << described;
    EXPECT_EQ(described.find("    pointer globals: gCounts\n", count),
              described.find("    pointer globals:", count))
        << described;
    EXPECT_EQ(described.find("gUnused\n"), std::string::npos) << described;
  }
}

// Pointer globals reached along several paths of helpers (one helper shared by two) are listed once each,
// sorted by name rather than in the order the code reaches them.
TEST(CompilerTest, PointerGlobalsSortedAcrossHelpers) {
  CompileResult result = Compile(
      "#pragma version(1)\n"
      "#pragma rs java_package_name(a.b)\n"
      "float* zLast;\n"
      "float* aFirst;\n"
      "static float last(uint32_t x) { return zLast[x]; }\n"
      "static float first(uint32_t x) { return aFirst[x] + last(x); }\n"
      "static float left(uint32_t x) { return last(x); }\n"
      "static float right(uint32_t x) { return first(x); }\n"
      "float RS_KERNEL both(float in, uint32_t x) { return in + left(x) + right(x); }\n"
      "float RS_KERNEL one(float in, uint32_t x) { return in + left(x); }\n");
  ASSERT_TRUE(result.ok) << result.diagnostics;
  ASSERT_NE(result.module.FindKernel("both"), nullptr);
  EXPECT_EQ(result.module.FindKernel("both")->pointer_globals, (std::vector<std::string>{"aFirst", "zLast"}));
  ASSERT_NE(result.module.FindKernel("one"), nullptr);
  EXPECT_EQ(result.module.FindKernel("one")->pointer_globals, (std::vector<std::string>{"zLast"}));
}

TEST(CompilerTest, OptimizationLevelsAllVerify) {
  const std::string source = ReadKernel("greyscale.rs");
  for (int level = 0; level <= 3; ++level) {
    CompileOptions options;
    options.opt_level = level;
    CompileResult result = Compile(source, "greyscale.rs", options);
    ASSERT_TRUE(result.ok) << "-O" << level << ": " << result.diagnostics;
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> ir = LoadBitcode(result.module, &context);
    ASSERT_TRUE(ir);
    ExpectEntryPoint(*ir, "__kiln_expand_greyscale", kExpandParams);
  }
}

}  // namespace
}  // namespace kiln
