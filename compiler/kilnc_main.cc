// kilnc: compiles a RenderScript-style kernel source (.rs) into a Kiln kernel module (.kmod).
//
//   kilnc SRC.rs [-o OUT.kmod] [-I dir] [-D name[=value]] [-O0..-O3] [--emit-llvm] [--print-reflection]
//         [--emit-glsl DIR] [--verbose]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "compiler/compiler.h"

namespace {

void PrintUsage(std::ostream& os) {
  os << "usage: kilnc SRC.rs [-o OUT.kmod] [-I dir] [-D name[=value]] [-O0|-O1|-O2|-O3]\n"
        "             [--emit-llvm] [--emit-glsl DIR] [--print-reflection] [--verbose]\n"
        "  -o FILE             output path (default: SRC with the extension .kmod, or .ll with --emit-llvm)\n"
        "  -I DIR              add DIR to the #include search path\n"
        "  -D NAME[=VALUE]     define a preprocessor macro\n"
        "  -O0..-O3            optimization level (default -O2; vectorization is left to the CPU driver)\n"
        "  --emit-llvm         write the final LLVM IR as text instead of a module\n"
        "  --emit-glsl DIR     also write each GPU kernel's GLSL (its SPIR-V's source) to DIR/<kernel>.comp,\n"
        "                      and each GPU reduction's to DIR/<reduction>.reduce.comp\n"
        "  --print-reflection  print the module's reflection to stdout\n"
        "  --verbose           report the steps, which kernels stay on the CPU and why, and the\n"
        "                      generated entry points, to stderr\n"
        "  --version           print the compiler version\n";
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return !in.bad();
}

bool WriteFile(const std::string& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  kiln::CompileOptions options;
  std::string input, output, glsl_dir;
  bool emit_llvm = false, print_reflection = false, verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (arg.size() > std::strlen(flag)) return argv[i] + std::strlen(flag);
      if (i + 1 < argc) return argv[++i];
      std::cerr << "kilnc: error: " << flag << " needs a value\n";
      std::exit(2);
    };
    if (arg == "-h" || arg == "--help") {
      PrintUsage(std::cout);
      return 0;
    } else if (arg == "--version") {
      std::cout << kiln::CompilerVersion() << "\n";
      return 0;
    } else if (arg.rfind("-o", 0) == 0) {
      output = value("-o");
    } else if (arg.rfind("-I", 0) == 0) {
      options.include_dirs.push_back(value("-I"));
    } else if (arg.rfind("-D", 0) == 0) {
      options.defines.push_back(value("-D"));
    } else if (arg.size() == 3 && arg[0] == '-' && arg[1] == 'O' && arg[2] >= '0' && arg[2] <= '3') {
      options.opt_level = arg[2] - '0';
    } else if (arg == "--emit-llvm") {
      emit_llvm = true;
    } else if (arg == "--emit-glsl" || arg.rfind("--emit-glsl=", 0) == 0) {
      if (arg.size() > std::strlen("--emit-glsl=")) {
        glsl_dir = arg.substr(std::strlen("--emit-glsl="));
      } else if (i + 1 < argc) {
        glsl_dir = argv[++i];
      } else {
        std::cerr << "kilnc: error: --emit-glsl needs a directory\n";
        return 2;
      }
    } else if (arg == "--print-reflection") {
      print_reflection = true;
    } else if (arg == "--verbose" || arg == "-v") {
      verbose = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "kilnc: error: unknown option '" << arg << "'\n";
      PrintUsage(std::cerr);
      return 2;
    } else if (input.empty()) {
      input = arg;
    } else {
      std::cerr << "kilnc: error: more than one input file ('" << input << "' and '" << arg << "')\n";
      return 2;
    }
  }
  if (input.empty()) {
    std::cerr << "kilnc: error: no input file\n";
    PrintUsage(std::cerr);
    return 2;
  }
  if (output.empty()) {
    const size_t dot = input.find_last_of('.');
    const size_t slash = input.find_last_of('/');
    const std::string stem = (dot != std::string::npos && (slash == std::string::npos || dot > slash))
                                 ? input.substr(0, dot)
                                 : input;
    output = stem + (emit_llvm ? ".ll" : ".kmod");
  }
  std::string source;
  if (!ReadFile(input, &source)) {
    std::cerr << "kilnc: error: cannot read '" << input << "': " << std::strerror(errno) << "\n";
    return 1;
  }
  options.keep_ir_text = emit_llvm;
  const auto start = std::chrono::steady_clock::now();
  kiln::CompileResult result;
  kiln::CompileKernelSource(source, input, options, &result);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cerr << result.diagnostics;
  if (!result.ok) return 1;
  if (verbose) {
    std::cerr << "kilnc: " << input << ": " << result.module.kernels.size() << " kernel(s), "
              << result.module.reductions.size() << " reduction(s), " << result.module.invokables.size()
              << " invokable(s), " << result.module.globals.size() << " global(s); HAL "
              << result.module.hal_level.ToString() << "; compiled in " << ms << " ms\n";
    if (result.kernel_glsl.empty()) {
      std::cerr << "kilnc: no GPU lowering in this build: every kernel runs on the CPU only\n";
    }
    for (size_t i = 0; i < result.kernel_glsl.size() && i < result.module.kernels.size(); ++i) {
      const kiln::KernelDesc& k = result.module.kernels[i];
      if (k.cpu_only_reasons.empty()) {
        std::cerr << "kilnc: kernel " << k.name << ": GPU form (SPIR-V)\n";
      }
      for (const std::string& reason : k.cpu_only_reasons) {
        std::cerr << "kilnc: kernel " << k.name << ": CPU-only: " << reason << "\n";
      }
    }
    for (size_t i = 0; i < result.reduction_glsl.size() && i < result.module.reductions.size(); ++i) {
      const kiln::ReductionDesc& r = result.module.reductions[i];
      if (r.cpu_only_reasons.empty()) {
        std::cerr << "kilnc: reduction " << r.name << ": GPU form (SPIR-V, two-pass workgroup reduction)\n";
      }
      for (const std::string& reason : r.cpu_only_reasons) {
        std::cerr << "kilnc: reduction " << r.name << ": CPU-only: " << reason << "\n";
      }
    }
    for (const std::string& note : result.gpu_notes) std::cerr << "kilnc: " << note << "\n";
    std::cerr << "kilnc: generated entry points:\n" << result.entry_point_source;
  }
  if (!glsl_dir.empty()) {
    if (result.kernel_glsl.empty()) {
      std::cerr << "kilnc: warning: --emit-glsl: this kilnc was built without GPU lowering\n";
    }
    // Kernels as <name>.comp, reductions as <name>.reduce.comp (a kernel and a reduction may share a name).
    std::vector<std::pair<std::string, const std::string*>> shaders;
    for (size_t i = 0; i < result.kernel_glsl.size() && i < result.module.kernels.size(); ++i)
      shaders.push_back({result.module.kernels[i].name + ".comp", &result.kernel_glsl[i]});
    for (size_t i = 0; i < result.reduction_glsl.size() && i < result.module.reductions.size(); ++i)
      shaders.push_back({result.module.reductions[i].name + ".reduce.comp", &result.reduction_glsl[i]});
    for (const auto& [file, glsl] : shaders) {
      const std::string& text = *glsl;
      if (text.empty()) continue;
      const std::string path = glsl_dir + "/" + file;
      if (!WriteFile(path, text.data(), text.size())) {
        std::cerr << "kilnc: error: cannot write '" << path << "': " << std::strerror(errno) << "\n";
        return 1;
      }
      if (verbose) std::cerr << "kilnc: wrote " << path << "\n";
    }
  }
  if (print_reflection) std::cout << kiln::DescribeKernelModule(result.module);
  const bool written =
      emit_llvm ? WriteFile(output, result.llvm_ir.data(), result.llvm_ir.size())
                : WriteFile(output, reinterpret_cast<const char*>(result.kmod.data()), result.kmod.size());
  if (!written) {
    std::cerr << "kilnc: error: cannot write '" << output << "': " << std::strerror(errno) << "\n";
    return 1;
  }
  if (verbose) std::cerr << "kilnc: wrote " << output << "\n";
  return 0;
}
