// A fixed pool of worker threads that split launches into slices. The thread that starts a job works on it
// too, so a job always progresses even when every worker is busy with other jobs (or when a kernel launches a
// nested job from inside a worker).
#ifndef KILN_BACKENDS_CPU_THREAD_POOL_H_
#define KILN_BACKENDS_CPU_THREAD_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {
namespace cpu {

class ThreadPool {
 public:
  // `num_threads` counts the caller: a pool of N has N - 1 workers.
  explicit ThreadPool(uint32_t num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Participants in a job: workers are slots 0 .. num_threads - 2, the caller is num_threads - 1. Per-slot
  // state (reduction accumulators) needs this many entries.
  uint32_t num_slots() const { return static_cast<uint32_t>(workers_.size()) + 1; }

  // Calls fn(slice, slot) once for every slice in [0, num_slices) and returns when all calls have returned.
  // Slices are handed out through an atomic counter; one slot never runs two slices of the same job at once.
  void Run(uint32_t num_slices, const std::function<void(uint32_t slice, uint32_t slot)>& fn);

 private:
  struct Job;
  void WorkerLoop(uint32_t slot);
  static bool RunOneSlice(Job& job, uint32_t slot);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> jobs_;
  bool stopping_ = false;
};

}  // namespace cpu
}  // namespace kiln

#endif  // KILN_BACKENDS_CPU_THREAD_POOL_H_
