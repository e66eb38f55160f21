// Areas "Batches" (several launches recorded and submitted together, in order; submitted again), "Fences"
// (wait, poll with timeout 0, failures carried by the fence) and "Concurrency" (several threads launching and
// submitting at once).
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "tools/cts/cts.h"

namespace kiln {
namespace cts {
namespace {

// The three-step pipeline every batch test records: c = mad(a, b); d = mad(c, a); sum(d) when reductions
// exist. Each launch reads what the previous one wrote.
class BatchTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!Dut().hal().batch_create) GTEST_SKIP() << "the driver has no batches (batch_create is NULL)";
    ASSERT_TRUE(LoadModule("cts_types", &ref_types_, &dut_types_));
    kernel_ = ModuleFile::Open("cts_types", nullptr)->KernelIndex("mad_int");
  }

  struct Pipeline {
    std::unique_ptr<Script> script;
    std::unique_ptr<Buffer> a, b, c, d;
  };
  static constexpr uint32_t kDims[3] = {64, 8, 2};
  static constexpr uint64_t kBytes = 64 * 8 * 2 * 4;

  Pipeline MakePipeline(const Side& side, uint32_t seed) {
    Pipeline p;
    p.script = std::make_unique<Script>(side, side.driver == &Reference() ? ref_types_ : dut_types_);
    p.a = std::make_unique<Buffer>(side, kBytes);
    p.b = std::make_unique<Buffer>(side, kBytes);
    p.c = std::make_unique<Buffer>(side, kBytes);
    p.d = std::make_unique<Buffer>(side, kBytes);
    std::vector<uint8_t> a = PatternBytes(kBytes, seed), b = PatternBytes(kBytes, seed + 1);
    for (size_t i = 0; i < kBytes; i += 4) {  // small ints, so nothing overflows
      a[i + 1] = b[i + 1] = a[i + 2] = b[i + 2] = a[i + 3] = b[i + 3] = 0;
    }
    EXPECT_TRUE(p.script->ok() && p.a->ok() && p.b->ok() && p.c->ok() && p.d->ok());
    EXPECT_TRUE(p.a->Write(a.data(), kBytes) && p.b->Write(b.data(), kBytes));
    return p;
  }

  // Records the two dependent launches into `batch`.
  void Record(const Side& side, KilnHalBatch* batch, Pipeline& p) {
    views_[0] = DenseView(*p.a, 4, kDims[0], kDims[1]);
    views_[1] = DenseView(*p.b, 4, kDims[0], kDims[1]);
    views_[2] = DenseView(*p.c, 4, kDims[0], kDims[1]);
    views_[3] = DenseView(*p.c, 4, kDims[0], kDims[1]);
    views_[4] = DenseView(*p.a, 4, kDims[0], kDims[1]);
    views_[5] = DenseView(*p.d, 4, kDims[0], kDims[1]);
    KilnHalForEachDesc first = ForEach(kernel_, kDims, &views_[0], 2, &views_[2]);
    KilnHalForEachDesc second = ForEach(kernel_, kDims, &views_[3], 2, &views_[5]);
    CTS_ASSERT_OK(side, side.hal().batch_record_for_each(batch, p.script->get(), &first));
    CTS_ASSERT_OK(side, side.hal().batch_record_for_each(batch, p.script->get(), &second));
  }

  // The same two launches, one at a time, on the reference.
  std::vector<uint8_t> ReferenceResult(uint32_t seed) {
    Pipeline p = MakePipeline(ref(), seed);
    KilnHalBufferView in1[2] = {DenseView(*p.a, 4, kDims[0], kDims[1]),
                                DenseView(*p.b, 4, kDims[0], kDims[1])};
    KilnHalBufferView out1 = DenseView(*p.c, 4, kDims[0], kDims[1]);
    KilnHalBufferView in2[2] = {out1, in1[0]};
    KilnHalBufferView out2 = DenseView(*p.d, 4, kDims[0], kDims[1]);
    KilnHalForEachDesc first = ForEach(kernel_, kDims, in1, 2, &out1);
    KilnHalForEachDesc second = ForEach(kernel_, kDims, in2, 2, &out2);
    EXPECT_EQ(Reference().hal().launch_for_each(p.script->get(), &first), kKilnOk);
    EXPECT_EQ(Reference().hal().launch_for_each(p.script->get(), &second), kKilnOk);
    return p.d->Read();
  }

  // Waits for `fence` without blocking forever: polls with timeout 0, then waits in short slices.
  ::testing::AssertionResult WaitDone(KilnHalFence* fence, KilnStatus* out_status) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool done = false;
    while (std::chrono::steady_clock::now() < deadline) {
      *out_status = Dut().hal().fence_wait(fence, 10 * 1000 * 1000, &done);
      if (done) return ::testing::AssertionSuccess();
      if (*out_status != kKilnOk) {
        return ::testing::AssertionFailure()
               << "fence_wait returned " << StatusName(*out_status) << " before the batch was done";
      }
    }
    return ::testing::AssertionFailure() << "the fence did not signal within 60 s";
  }

  KilnHalModule* ref_types_ = nullptr;
  KilnHalModule* dut_types_ = nullptr;
  int kernel_ = -1;
  KilnHalBufferView views_[6];
};
constexpr uint32_t BatchTest::kDims[3];

class Batches : public BatchTest {};

TEST_P(Batches, DependentLaunchesRunInOrder) {
  const std::vector<uint8_t> want = ReferenceResult(100);
  Pipeline p = MakePipeline(dut(), 100);
  KilnHalBatch* batch = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_create(dut().device(), &batch));
  Record(dut(), batch, p);
  KilnHalFence* fence = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_submit(batch, &fence));
  bool done = false;
  EXPECT_EQ(Dut().hal().fence_wait(fence, UINT64_MAX, &done), kKilnOk) << Dut().services().LastError();
  EXPECT_TRUE(done) << "fence_wait(UINT64_MAX) returned before the batch was done";
  EXPECT_EQ(Dut().hal().fence_destroy(fence), kKilnOk);
  EXPECT_EQ(Dut().hal().batch_destroy(batch), kKilnOk);
  EXPECT_TRUE(CellsMatch(want, p.d->Read(), CellLayout{kKilnInt32, 1, 4}, kDims, "driver vs reference"));
}

// A batch runs again after its fence signalled, on the inputs as they are then.
TEST_P(Batches, SubmitTwice) {
  Pipeline p = MakePipeline(dut(), 200);
  KilnHalBatch* batch = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_create(dut().device(), &batch));
  Record(dut(), batch, p);
  for (uint32_t round = 0; round < 2; ++round) {
    SCOPED_TRACE("submission " + std::to_string(round + 1));
    if (round == 1) {  // new inputs, as ReferenceResult(201) makes them
      Pipeline fresh = MakePipeline(ref(), 201);
      std::vector<uint8_t> a = fresh.a->Read(), b = fresh.b->Read();
      ASSERT_TRUE(p.a->Write(a.data(), kBytes) && p.b->Write(b.data(), kBytes));
    }
    KilnHalFence* fence = nullptr;
    CTS_ASSERT_OK(dut(), Dut().hal().batch_submit(batch, &fence));
    KilnStatus status;
    ASSERT_TRUE(WaitDone(fence, &status));
    EXPECT_EQ(status, kKilnOk) << Dut().services().LastError();
    EXPECT_EQ(Dut().hal().fence_destroy(fence), kKilnOk);
    EXPECT_TRUE(CellsMatch(ReferenceResult(200 + round), p.d->Read(), CellLayout{kKilnInt32, 1, 4}, kDims,
                           "driver vs reference"));
  }
  EXPECT_EQ(Dut().hal().batch_destroy(batch), kKilnOk);
}

TEST_P(Batches, EmptyBatch) {
  KilnHalBatch* batch = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_create(dut().device(), &batch));
  KilnHalFence* fence = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_submit(batch, &fence));
  KilnStatus status;
  EXPECT_TRUE(WaitDone(fence, &status));
  EXPECT_EQ(status, kKilnOk);
  EXPECT_EQ(Dut().hal().fence_destroy(fence), kKilnOk);
  EXPECT_EQ(Dut().hal().batch_destroy(batch), kKilnOk);
}

// A reduction recorded after the launches sees their output.
TEST_P(Batches, ReductionAfterLaunches) {
  if (!Dut().hal().batch_record_reduce) GTEST_SKIP() << "batch_record_reduce is NULL";
  KilnHalModule *ref_reduce, *dut_reduce;
  ASSERT_TRUE(LoadModule("cts_reduce", &ref_reduce, &dut_reduce));
  const int addint = ModuleFile::Open("cts_reduce", nullptr)->ReductionIndex("addint");
  if (const std::string why = DutUnsupportedReductionReason(dut_reduce, addint); !why.empty()) {
    GTEST_SKIP() << "reduction addint: " << why;
  }
  const std::vector<uint8_t> d = ReferenceResult(300);
  int64_t host = 0;
  for (size_t i = 0; i < d.size(); i += 4) {
    int32_t v;
    memcpy(&v, &d[i], 4);
    host += v;
  }
  Pipeline p = MakePipeline(dut(), 300);
  Script sum_script(dut(), dut_reduce);
  ASSERT_TRUE(sum_script.ok());
  KilnHalBatch* batch = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_create(dut().device(), &batch));
  Record(dut(), batch, p);
  const KilnHalBufferView view = DenseView(*p.d, 4, kDims[0], kDims[1]);
  KilnHalReduceDesc desc{};
  desc.struct_size = sizeof(desc);
  desc.reduction_index = addint;
  desc.dim_x = kDims[0];
  desc.dim_y = kDims[1];
  desc.dim_z = kDims[2];
  desc.num_inputs = 1;
  desc.inputs = &view;
  int32_t result = -1;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_record_reduce(batch, sum_script.get(), &desc, 4, &result));
  KilnHalFence* fence = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_submit(batch, &fence));
  KilnStatus status;
  ASSERT_TRUE(WaitDone(fence, &status));
  EXPECT_EQ(status, kKilnOk) << Dut().services().LastError();
  EXPECT_EQ(Dut().hal().fence_destroy(fence), kKilnOk);
  EXPECT_EQ(Dut().hal().batch_destroy(batch), kKilnOk);
  EXPECT_EQ(result, static_cast<int32_t>(host)) << "the recorded reduction did not see the launches' output";
}

// A launch that fails while the batch runs (a kernel reading past its allocation) fails the fence with a
// message; recording checks what it can up front.
TEST_P(Batches, FailureCarriedByFence) {
  KilnHalModule *ref_script, *dut_script;
  ASSERT_TRUE(LoadModule("cts_script", &ref_script, &dut_script));
  if (!Dut().hal().script_bind_allocation) GTEST_SKIP() << "script_bind_allocation is NULL";
  std::shared_ptr<ModuleFile> file = ModuleFile::Open("cts_script", nullptr);
  ASSERT_NE(file, nullptr);
  if (std::string why = DutScriptRefusedReason(dut_script, file->desc()->num_kernels); !why.empty())
    GTEST_SKIP() << why;
  if (std::string why = DutUnsupportedReason(dut_script, file->KernelIndex("lookup")); !why.empty())
    GTEST_SKIP() << "kernel lookup: " << why;
  Script s(dut(), dut_script);
  Buffer lookup(dut(), 40), out(dut(), 400);
  ASSERT_TRUE(s.ok() && lookup.ok() && out.ok());
  const KilnHalBufferView view = DenseView(lookup, 4, 10, 1);
  CTS_ASSERT_OK(dut(),
                Dut().hal().script_bind_allocation(s.get(), "gLookup", &view, kKilnFloat32, 1, 10, 0, 0));
  const KilnHalBufferView output = DenseView(out, 4, 100, 1);
  const uint32_t dims[3] = {100, 1, 1};
  KilnHalForEachDesc desc =
      ForEach(ModuleFile::Open("cts_script", nullptr)->KernelIndex("lookup"), dims, nullptr, 0, &output);
  KilnHalBatch* batch = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_create(dut().device(), &batch));
  // Caught at record time: a kernel index past the end.
  KilnHalForEachDesc bad = desc;
  bad.kernel_index = 1000;
  CTS_EXPECT_FAILS(Dut(), Dut().hal().batch_record_for_each(batch, s.get(), &bad));
  CTS_ASSERT_OK(dut(), Dut().hal().batch_record_for_each(batch, s.get(), &desc));
  const size_t before = Dut().services().ErrorCount();
  KilnHalFence* fence = nullptr;
  KilnStatus submit = Dut().hal().batch_submit(batch, &fence);
  if (submit == kKilnOk) {
    KilnStatus status;
    ASSERT_TRUE(WaitDone(fence, &status));
    EXPECT_TRUE(
        FailsWithMessage(Dut(), status, before, "fence_wait on a batch whose launch reads out of range"));
    EXPECT_EQ(Dut().hal().fence_destroy(fence), kKilnOk);
  } else {
    EXPECT_TRUE(FailsWithMessage(Dut(), submit, before, "batch_submit of a launch that reads out of range"));
  }
  EXPECT_EQ(Dut().hal().batch_destroy(batch), kKilnOk);
}

INSTANTIATE_TEST_SUITE_P(Device, Batches, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

// ---- Fences
// -------------------------------------------------------------------------------------------------

class Fences : public BatchTest {};

// Polling with timeout 0 never blocks and eventually reports done, with the work complete.
TEST_P(Fences, PollWithTimeoutZero) {
  const std::vector<uint8_t> want = ReferenceResult(400);
  Pipeline p = MakePipeline(dut(), 400);
  KilnHalBatch* batch = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_create(dut().device(), &batch));
  for (int i = 0; i < 8; ++i) Record(dut(), batch, p);  // a longer batch, so a poll may find it running
  KilnHalFence* fence = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_submit(batch, &fence));
  bool done = false;
  uint64_t polls = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done && std::chrono::steady_clock::now() < deadline) {
    const auto start = std::chrono::steady_clock::now();
    KilnStatus status = Dut().hal().fence_wait(fence, 0, &done);
    ASSERT_EQ(status, kKilnOk) << Dut().services().LastError();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << "fence_wait(0) blocked";
    ++polls;
    if (!done) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  EXPECT_TRUE(done) << "the fence did not signal within 60 s of polling";
  EXPECT_EQ(Dut().hal().fence_destroy(fence), kKilnOk);
  EXPECT_EQ(Dut().hal().batch_destroy(batch), kKilnOk);
  EXPECT_TRUE(CellsMatch(want, p.d->Read(), CellLayout{kKilnInt32, 1, 4}, kDims, "driver vs reference"));
  RecordProperty("polls", static_cast<int>(polls));
}

// A wait with a finite timeout reports done or not done, and once done stays done.
TEST_P(Fences, FiniteTimeoutAndRepeatedWaits) {
  Pipeline p = MakePipeline(dut(), 500);
  KilnHalBatch* batch = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_create(dut().device(), &batch));
  Record(dut(), batch, p);
  KilnHalFence* fence = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_submit(batch, &fence));
  bool done = false;
  EXPECT_EQ(Dut().hal().fence_wait(fence, 1000, &done), kKilnOk);  // 1 us: either answer is right
  EXPECT_EQ(Dut().hal().fence_wait(fence, UINT64_MAX, &done), kKilnOk);
  EXPECT_TRUE(done);
  for (int i = 0; i < 3; ++i) {
    done = false;
    EXPECT_EQ(Dut().hal().fence_wait(fence, 0, &done), kKilnOk);
    EXPECT_TRUE(done) << "a signalled fence reported not done";
  }
  EXPECT_EQ(Dut().hal().fence_destroy(fence), kKilnOk);
  EXPECT_EQ(Dut().hal().batch_destroy(batch), kKilnOk);
}

// fence_destroy without a wait first waits for the batch, so its results are there afterwards.
TEST_P(Fences, DestroyWaitsForCompletion) {
  const std::vector<uint8_t> want = ReferenceResult(600);
  Pipeline p = MakePipeline(dut(), 600);
  KilnHalBatch* batch = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_create(dut().device(), &batch));
  Record(dut(), batch, p);
  KilnHalFence* fence = nullptr;
  CTS_ASSERT_OK(dut(), Dut().hal().batch_submit(batch, &fence));
  EXPECT_EQ(Dut().hal().fence_destroy(fence), kKilnOk);
  EXPECT_TRUE(CellsMatch(want, p.d->Read(), CellLayout{kKilnInt32, 1, 4}, kDims, "driver vs reference"));
  EXPECT_EQ(Dut().hal().batch_destroy(batch), kKilnOk);
}

INSTANTIATE_TEST_SUITE_P(Device, Fences, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

// ---- Concurrency
// --------------------------------------------------------------------------------------------

class Concurrency : public BatchTest {};

// Four threads, each with its own script and buffers, launching directly and through batches at once.
TEST_P(Concurrency, ThreadsLaunchAndSubmit) {
  constexpr int kThreads = 4, kRounds = 6;
  std::vector<std::vector<uint8_t>> want(kThreads);
  for (int t = 0; t < kThreads; ++t) want[t] = ReferenceResult(700 + t);
  std::vector<Pipeline> pipelines;
  for (int t = 0; t < kThreads; ++t) pipelines.push_back(MakePipeline(dut(), 700 + t));
  std::vector<std::string> problems(kThreads);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      Pipeline& p = pipelines[t];
      const KilnHalDriver& hal = Dut().hal();
      KilnHalBufferView in1[2] = {DenseView(*p.a, 4, kDims[0], kDims[1]),
                                  DenseView(*p.b, 4, kDims[0], kDims[1])};
      KilnHalBufferView out1 = DenseView(*p.c, 4, kDims[0], kDims[1]);
      KilnHalBufferView in2[2] = {out1, in1[0]};
      KilnHalBufferView out2 = DenseView(*p.d, 4, kDims[0], kDims[1]);
      KilnHalForEachDesc first = ForEach(kernel_, kDims, in1, 2, &out1);
      KilnHalForEachDesc second = ForEach(kernel_, kDims, in2, 2, &out2);
      for (int round = 0; round < kRounds && problems[t].empty(); ++round) {
        if (round % 2 == 0) {
          if (hal.launch_for_each(p.script->get(), &first) != kKilnOk ||
              hal.launch_for_each(p.script->get(), &second) != kKilnOk) {
            problems[t] = "launch_for_each failed in round " + std::to_string(round);
          }
          continue;
        }
        KilnHalBatch* batch = nullptr;
        KilnHalFence* fence = nullptr;
        bool done = false;
        if (hal.batch_create(dut().device(), &batch) != kKilnOk ||
            hal.batch_record_for_each(batch, p.script->get(), &first) != kKilnOk ||
            hal.batch_record_for_each(batch, p.script->get(), &second) != kKilnOk ||
            hal.batch_submit(batch, &fence) != kKilnOk ||
            hal.fence_wait(fence, UINT64_MAX, &done) != kKilnOk || !done) {
          problems[t] = "batch failed in round " + std::to_string(round);
        }
        if (fence) hal.fence_destroy(fence);
        if (batch) hal.batch_destroy(batch);
      }
    });
  }
  go.store(true);
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(problems[t].empty()) << "thread " << t << ": " << problems[t] << ": "
                                     << Dut().services().LastError();
    EXPECT_TRUE(CellsMatch(want[t], pipelines[t].d->Read(), CellLayout{kKilnInt32, 1, 4}, kDims,
                           ("thread " + std::to_string(t) + ": driver vs reference").c_str()));
  }
}

// Threads creating and destroying scripts and buffers of one module while others launch.
TEST_P(Concurrency, CreateDestroyWhileLaunching) {
  constexpr int kThreads = 3;
  std::vector<std::string> problems(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const KilnHalDriver& hal = Dut().hal();
      for (int round = 0; round < 5 && problems[t].empty(); ++round) {
        KilnHalScript* script = nullptr;
        KilnHalBuffer* buffer = nullptr;
        KilnHalBufferDesc desc{sizeof(KilnHalBufferDesc), 0, 64 * 4, nullptr};
        if (hal.script_create(dut_types_, nullptr, &script) != kKilnOk ||
            hal.buffer_create(dut().device(), &desc, &buffer) != kKilnOk) {
          problems[t] = "create failed in round " + std::to_string(round);
        } else {
          KilnHalBufferView view{};
          view.struct_size = sizeof(view);
          view.element_size = 4;
          view.buffer = buffer;
          view.stride_x = 4;
          view.stride_y = view.stride_z = 256;
          KilnHalBufferView inputs[2] = {view, view};
          const uint32_t dims[3] = {64, 1, 1};
          KilnHalForEachDesc launch = ForEach(kernel_, dims, inputs, 2, &view);
          std::vector<int32_t> zeros(64, 0), back(64, -1);
          if (hal.buffer_write(buffer, 0, zeros.data(), 256) != kKilnOk ||
              hal.launch_for_each(script, &launch) != kKilnOk ||
              hal.buffer_read(buffer, 0, 256, back.data()) != kKilnOk) {
            problems[t] = "launch failed in round " + std::to_string(round);
          } else {
            for (int x = 0; x < 64 && problems[t].empty(); ++x) {
              if (back[x] != x) problems[t] = "cell " + std::to_string(x) + " is " + std::to_string(back[x]);
            }
          }
        }
        if (buffer) hal.buffer_destroy(buffer);
        if (script) hal.script_destroy(script);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(problems[t].empty()) << "thread " << t << ": " << problems[t] << ": "
                                     << Dut().services().LastError();
  }
}

INSTANTIATE_TEST_SUITE_P(Device, Concurrency, ::testing::ValuesIn(DeviceIndices()), DeviceParamName);

}  // namespace
}  // namespace cts
}  // namespace kiln
