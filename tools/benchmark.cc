// `kiln benchmark`: times a model the way LiteRT's benchmark_model does, with its flag names, so that the two
// can be run side by side on the same model.
//
//   kiln benchmark --graph=MODEL [--num_threads=N] [--num_runs=N] [--warmup_runs=N] [--min_secs=S]
//                  [--max_secs=S] [--input NAME=FILE.npy]... [--input_layer_value_files=NAME:FILE.npy,...]
//                  [--seed=N] [--enable_op_profiling=true] [--report_peak_memory_footprint=true]
//                  [--trace=FILE.json] [--reference_kernels=true] [--device=cpu|gpu|gpu-only|auto]
//                  [--driver=PATH] [--op NAME=MODULE.kmod:KERNEL]...
//
// It prints the time to create the interpreter and allocate tensors (init), the first inference, the warm-up
// runs, and the timed runs' min, average, median, max and standard deviation. --enable_op_profiling adds a
// table with one row per unit of work (a node, or a group of nodes run as one by XNNPACK or a driver):
// average ms, share of the total, and count. --trace writes Chrome's trace-event JSON (open it in Perfetto's
// UI), one slice per unit per timed run, each on its engine's track.
#include <malloc.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tools/cli.h"

namespace kiln {
namespace cli {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The process's resident memory, in bytes (Linux's /proc/self/status): in all, at its peak, and split into
// anonymous pages (heap, stacks, what was allocated) and file-backed ones (mapped files: the model, the
// libraries' code).
struct Resident {
  size_t now = 0, peak = 0, anon = 0, file = 0;
};

Resident ResidentMemory() {
  Resident r;
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return r;
  char line[256];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long kb = 0;
    if (std::sscanf(line, "VmRSS: %lu kB", &kb) == 1) r.now = kb * 1024;
    if (std::sscanf(line, "VmHWM: %lu kB", &kb) == 1) r.peak = kb * 1024;
    if (std::sscanf(line, "RssAnon: %lu kB", &kb) == 1) r.anon = kb * 1024;
    if (std::sscanf(line, "RssFile: %lu kB", &kb) == 1) r.file = kb * 1024;
  }
  std::fclose(f);
  return r;
}

// Bytes malloc has handed out and not had back, counting the large blocks it maps on their own.
size_t HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

// Resident bytes of the process's mappings of file `path` (/proc/self/smaps): the model file's pages.
size_t ResidentOfFile(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  if (real == nullptr) return 0;
  const std::string want = real;
  std::free(real);
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) return 0;
  size_t total = 0;
  bool in_file = false;
  char line[4096];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long begin = 0, end = 0;
    int name_at = 0;
    // A mapping's header: "begin-end perms offset dev inode   pathname".
    if (std::sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &begin, &end, &name_at) == 2 && name_at > 0) {
      std::string name = line + name_at;
      while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
      in_file = name == want;
      continue;
    }
    unsigned long kb = 0;
    if (in_file && std::sscanf(line, "Rss: %lu kB", &kb) == 1) total += kb * 1024;
  }
  std::fclose(f);
  return total;
}

size_t FileSize(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return 0;
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  std::fclose(f);
  return size > 0 ? static_cast<size_t>(size) : 0;
}

struct Stats {
  double min = 0, max = 0, mean = 0, median = 0, stddev = 0;
};

Stats Summarise(std::vector<double> values) {
  Stats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.max = values.back();
  const size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  for (double v : values) s.mean += v;
  s.mean /= n;
  for (double v : values) s.stddev += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(s.stddev / n);
  return s;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// One unit of work across the timed runs, for the op profile.
struct UnitProfile {
  int first = 0;
  int last = 0;
  std::string op;
  std::string engine;
  double total_ms = 0;
  int count = 0;
};

bool Truthy(const std::string& v) { return v.empty() || v == "true" || v == "1" || v == "yes"; }

void BenchmarkUsage(FILE* out) {
  std::fprintf(
      out,
      "usage: kiln benchmark --graph=MODEL [--num_threads=N] [--num_runs=N] [--warmup_runs=N]\n"
      "         [--min_secs=S] [--max_secs=S] [--input NAME=FILE.npy]...\n"
      "         [--input_layer_value_files=NAME:FILE.npy,...] [--seed=N] [--enable_op_profiling=true]\n"
      "         [--report_peak_memory_footprint=true] [--trace=FILE.json] [--reference_kernels=true]\n"
      "         [--device=cpu|gpu|gpu-only|auto] [--driver=PATH] [--op NAME=MODULE.kmod:KERNEL]...\n");
}

}  // namespace

int Benchmark(int argc, char** argv) {
  std::string graph, trace_path;
  SessionOptions options;
  std::vector<InputSpec> inputs;
  int num_runs = 50, warmup_runs = 1;
  double min_secs = 1.0, max_secs = 150.0;
  uint32_t seed = 0;
  bool op_profiling = false, report_memory = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    const size_t eq = arg.find('=');
    const bool has_value = eq != std::string::npos && arg.compare(0, 2, "--") == 0;
    if (has_value) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    // Flags that take a value accept both --flag=value and --flag value.
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kiln benchmark: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--graph") {
      graph = take();
    } else if (arg == "--num_threads") {
      options.threads = std::atoi(take().c_str());
    } else if (arg == "--num_runs") {
      num_runs = std::max(1, std::atoi(take().c_str()));
    } else if (arg == "--warmup_runs") {
      warmup_runs = std::max(1, std::atoi(take().c_str()));
    } else if (arg == "--min_secs") {
      min_secs = std::atof(take().c_str());
    } else if (arg == "--max_secs") {
      max_secs = std::atof(take().c_str());
    } else if (arg == "--seed") {
      seed = static_cast<uint32_t>(std::strtoul(take().c_str(), nullptr, 10));
    } else if (arg == "--input") {
      const std::string v = take();
      const size_t e = v.find('=');
      inputs.push_back(e == std::string::npos ? InputSpec{"", v}
                                              : InputSpec{v.substr(0, e), v.substr(e + 1)});
    } else if (arg == "--input_layer_value_files") {
      std::string list = take();
      for (size_t start = 0; start <= list.size();) {
        const size_t comma = std::min(list.find(',', start), list.size());
        const std::string item = list.substr(start, comma - start);
        const size_t colon = item.find(':');
        if (colon == std::string::npos) {
          std::fprintf(stderr, "kiln benchmark: --input_layer_value_files expects NAME:FILE, got '%s'\n",
                       item.c_str());
          return 2;
        }
        inputs.push_back({item.substr(0, colon), item.substr(colon + 1)});
        start = comma + 1;
      }
    } else if (arg == "--enable_op_profiling") {
      op_profiling = Truthy(has_value ? value : "");
    } else if (arg == "--report_peak_memory_footprint") {
      report_memory = Truthy(has_value ? value : "");
    } else if (arg == "--reference_kernels") {
      options.reference_kernels = Truthy(has_value ? value : "");
    } else if (arg == "--trace") {
      trace_path = take();
    } else if (arg == "--device") {
      const std::string v = take();
      if (v == "cpu") {
        options.device.policy = kKilnDeviceCpuOnly;
      } else if (v == "gpu") {
        options.device.policy = kKilnDevicePreferGpu;
      } else if (v == "gpu-only") {
        options.device.policy = kKilnDeviceGpuOnly;
      } else if (v == "auto") {
        options.device.policy = kKilnDeviceAuto;
      } else {
        std::fprintf(stderr, "kiln benchmark: --device expects cpu, gpu, gpu-only or auto, got '%s'\n",
                     v.c_str());
        return 2;
      }
    } else if (arg == "--driver") {
      options.device.driver = take();
    } else if (arg == "--op") {
      KernelOpSpec spec;
      if (!ParseKernelOpSpec(take(), &spec)) return 2;
      options.kernel_ops.push_back(spec);
    } else if (arg == "-h" || arg == "--help") {
      BenchmarkUsage(stdout);
      return 0;
    } else if (!arg.empty() && arg[0] != '-' && graph.empty()) {
      graph = arg;
    } else {
      std::fprintf(stderr, "kiln benchmark: unknown option '%s'\n", argv[i]);
      BenchmarkUsage(stderr);
      return 2;
    }
  }
  if (graph.empty()) {
    std::fprintf(stderr, "kiln benchmark: --graph is required\n");
    BenchmarkUsage(stderr);
    return 2;
  }
  options.profiling = op_profiling || !trace_path.empty();

  const Resident rss_start = ResidentMemory();
  const size_t heap_start = HeapInUse();
  const Clock::time_point init_start = Clock::now();
  std::unique_ptr<Session> session = Session::Open(graph, options);
  if (session == nullptr || !session->SetInputs(inputs, seed, false)) return 1;
  const double init_ms = MsSince(init_start);
  KilnInterpreter* interpreter = session->interpreter();
  const Resident rss_init = ResidentMemory();
  const size_t model_resident_init = ResidentOfFile(graph);
  const size_t heap_init = HeapInUse();

  std::printf("Graph: [%s]\n", Printable(graph.c_str()).c_str());
  std::printf("Num threads: [%d]%s\n", options.threads, options.threads < 0 ? " (-1: one per core)" : "");
  std::printf("Kernels: [%s]\n", options.reference_kernels ? "reference" : "fast path where supported");
  std::printf("Initialized session in %.3f ms.\n", init_ms);

  auto invoke = [&]() -> double {
    const Clock::time_point start = Clock::now();
    if (KilnInterpreterInvoke(interpreter) != kKilnOk) return -1;
    return MsSince(start);
  };
  std::vector<double> warmup;
  const Clock::time_point warmup_start = Clock::now();
  // At least --warmup_runs, and at least half a second (as LiteRT's warmup_min_secs), at most 1000 runs.
  while (static_cast<int>(warmup.size()) < warmup_runs ||
         (warmup.size() < 1000 && MsSince(warmup_start) < 500)) {
    const double ms = invoke();
    if (ms < 0) return 1;
    warmup.push_back(ms);
  }
  const Stats w = Summarise(warmup);
  std::printf("Warm-up: count=%zu first=%.3f ms min=%.3f ms avg=%.3f ms max=%.3f ms\n", warmup.size(),
              warmup[0], w.min, w.mean, w.max);

  std::vector<double> runs;
  std::map<std::pair<int, int>, UnitProfile> units;
  std::string trace;  // the timed runs' slices
  std::vector<std::string> tracks = {"interpreter"};
  auto track_of = [&](const std::string& engine) {
    auto it = std::find(tracks.begin(), tracks.end(), engine);
    if (it != tracks.end()) return static_cast<int>(it - tracks.begin());
    tracks.push_back(engine);
    return static_cast<int>(tracks.size() - 1);
  };
  const Clock::time_point runs_start = Clock::now();
  while ((static_cast<int>(runs.size()) < num_runs || MsSince(runs_start) < min_secs * 1000) &&
         MsSince(runs_start) < max_secs * 1000) {
    const double run_offset_us = std::chrono::duration<double, std::micro>(Clock::now() - runs_start).count();
    const double ms = invoke();
    if (ms < 0) return 1;
    runs.push_back(ms);
    if (!options.profiling) continue;
    char buf[512];
    if (!trace_path.empty()) {
      std::snprintf(
          buf, sizeof buf,
          "%s{\"name\":\"Invoke\",\"cat\":\"invoke\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,"
          "\"tid\":0,\"args\":{\"run\":%zu}}",
          trace.empty() ? "" : ",\n", run_offset_us, ms * 1000, runs.size() - 1);
      trace += buf;
    }
    for (int e = 0; e < KilnInterpreterGetProfileEventCount(interpreter); ++e) {
      KilnProfileEvent event;
      event.struct_size = sizeof(event);
      if (KilnInterpreterGetProfileEvent(interpreter, e, &event) != kKilnOk) continue;
      UnitProfile& unit = units[{event.first_node, event.last_node}];
      unit.first = event.first_node;
      unit.last = event.last_node;
      unit.op = event.op;
      unit.engine = event.engine;
      unit.total_ms += event.duration_ns / 1e6;
      ++unit.count;
      if (!trace_path.empty()) {
        const std::string nodes =
            event.first_node == event.last_node
                ? std::to_string(event.first_node)
                : std::to_string(event.first_node) + "-" + std::to_string(event.last_node);
        trace += ",\n{\"name\":" + JsonString(event.op) + ",\"cat\":" + JsonString(event.engine) +
                 ",\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(track_of(event.engine));
        std::snprintf(buf, sizeof buf, ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"nodes\":\"%s\",\"run\":%zu}}",
                      run_offset_us + event.start_ns / 1e3, event.duration_ns / 1e3, nodes.c_str(),
                      runs.size() - 1);
        trace += buf;
      }
    }
  }
  const Stats r = Summarise(runs);
  std::printf("Inference: count=%zu min=%.3f ms avg=%.3f ms median=%.3f ms max=%.3f ms stddev=%.3f ms\n",
              runs.size(), r.min, r.mean, r.median, r.max, r.stddev);
  std::printf(
      "Inference timings in us: Init: %.0f, First inference: %.0f, Warmup (avg): %.0f, Inference (avg): "
      "%.0f\n",
      init_ms * 1000, warmup[0] * 1000, w.mean * 1000, r.mean * 1000);

  if (op_profiling) {
    double total = 0;
    for (const auto& entry : units) total += entry.second.total_ms;
    std::printf("\nOperator profile (timed runs; a group of nodes run as one is one row):\n");
    std::printf("%-9s  %-17s  %10s  %7s  %6s  %s\n", "node(s)", "engine", "avg ms", "%", "count", "op");
    for (const auto& entry : units) {
      const UnitProfile& u = entry.second;
      const std::string nodes = u.first == u.last ? std::to_string(u.first)
                                                  : std::to_string(u.first) + "-" + std::to_string(u.last);
      std::printf("%-9s  %-17s  %10.4f  %6.2f%%  %6d  %s\n", nodes.c_str(), u.engine.c_str(),
                  u.total_ms / u.count, total > 0 ? 100 * u.total_ms / total : 0.0, u.count,
                  Printable(u.op.c_str()).c_str());
    }
    std::map<std::string, double> by_engine;
    for (const auto& entry : units) by_engine[entry.second.engine] += entry.second.total_ms;
    std::printf("By engine:");
    for (const auto& e : by_engine) {
      std::printf("  %s %.2f%%", e.first.c_str(), total > 0 ? 100 * e.second / total : 0.0);
    }
    std::printf("\n");
  }

  if (report_memory) {
    const Resident rss_end = ResidentMemory();
    size_t arena = 0, naive = 0;
    KilnInterpreterGetArenaStats(interpreter, &arena, &naive);
    std::printf("\nMemory footprint: model file %.3f MB, arena %.3f MB\n", FileSize(graph) / 1e6,
                arena / 1e6);
    // The heap the session holds after init: the arena, packed weights, folded constants, the interpreter's
    // own structures; resident memory adds the code and tables of the libraries init paged in.
    std::printf("Heap held after init: %.3f MB (model file plus arena: %.3f MB)\n",
                (heap_init - std::min(heap_init, heap_start)) / 1e6, (FileSize(graph) + arena) / 1e6);
    auto growth = [](size_t from, size_t to) { return to - std::min(to, from); };
    const size_t file_growth = growth(rss_start.file, rss_init.file);
    std::printf("Resident memory: at start %.3f MB, after init %.3f MB (+%.3f MB: anonymous +%.3f MB, the model "
                "file's pages %.3f MB, libraries' pages +%.3f MB), peak %.3f MB\n",
                rss_start.now / 1e6, rss_init.now / 1e6, growth(rss_start.now, rss_init.now) / 1e6,
                growth(rss_start.anon, rss_init.anon) / 1e6, model_resident_init / 1e6,
                (file_growth - std::min(file_growth, model_resident_init)) / 1e6, rss_end.peak / 1e6);
    // What the model itself keeps resident: the memory init allocated and the model file's pages (the pages of
    // weights packed at init are given back); the libraries' code is the process's, shared by every model.
    std::printf("Resident for the model: after init %.3f MB, after the runs %.3f MB (twice the model file plus "
                "the arena: %.3f MB)\n",
                (growth(rss_start.anon, rss_init.anon) + model_resident_init) / 1e6,
                (growth(rss_start.anon, rss_end.anon) + ResidentOfFile(graph)) / 1e6,
                (2 * FileSize(graph) + arena) / 1e6);
  }

  if (!trace_path.empty()) {
    std::FILE* f = std::fopen(trace_path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "kiln benchmark: cannot write %s: %s\n", trace_path.c_str(), std::strerror(errno));
      return 1;
    }
    std::fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    for (size_t t = 0; t < tracks.size(); ++t) {
      std::fprintf(f,
                   "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%zu,\"args\":{\"name\":%s}},\n",
                   t, JsonString(tracks[t]).c_str());
    }
    std::fprintf(f, "%s\n]}\n", trace.c_str());
    std::fclose(f);
    std::printf("Trace: %s (%zu timed runs; open it in https://ui.perfetto.dev)\n", trace_path.c_str(),
                runs.size());
  }
  return 0;
}

}  // namespace cli
}  // namespace kiln
