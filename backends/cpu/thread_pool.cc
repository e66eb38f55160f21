// The CPU driver's worker pool (thread_pool.h): how a launch is sliced and how its threads meet at the end.

#include "backends/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>

namespace kiln {
namespace cpu {

struct ThreadPool::Job {
  const std::function<void(uint32_t, uint32_t)>* fn;
  uint32_t num_slices;
  std::atomic<uint32_t> next{0};
  std::atomic<uint32_t> finished{0};
  std::mutex mutex;
  std::condition_variable all_finished;
};

ThreadPool::ThreadPool(uint32_t num_threads) {
  uint32_t workers = num_threads > 1 ? num_threads - 1 : 0;
  workers_.reserve(workers);
  for (uint32_t slot = 0; slot < workers; ++slot) workers_.emplace_back([this, slot] { WorkerLoop(slot); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

bool ThreadPool::RunOneSlice(Job& job, uint32_t slot) {
  uint32_t slice = job.next.fetch_add(1, std::memory_order_relaxed);
  if (slice >= job.num_slices) return false;
  (*job.fn)(slice, slot);
  if (job.finished.fetch_add(1, std::memory_order_acq_rel) + 1 == job.num_slices) {
    // Taking the lock orders this notify after the waiter's predicate check.
    std::lock_guard<std::mutex> lock(job.mutex);
    job.all_finished.notify_all();
  }
  return true;
}

void ThreadPool::WorkerLoop(uint32_t slot) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (stopping_) return;
    std::shared_ptr<Job> job = jobs_.front();
    lock.unlock();
    while (RunOneSlice(*job, slot)) {
    }
    lock.lock();
    // Every slice has been claimed: nobody else needs to see this job.
    auto it = std::find(jobs_.begin(), jobs_.end(), job);
    if (it != jobs_.end()) jobs_.erase(it);
  }
}

void ThreadPool::Run(uint32_t num_slices, const std::function<void(uint32_t, uint32_t)>& fn) {
  if (num_slices == 0) return;
  const uint32_t caller_slot = num_slots() - 1;
  if (num_slices == 1 || workers_.empty()) {
    for (uint32_t slice = 0; slice < num_slices; ++slice) fn(slice, caller_slot);
    return;
  }
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->num_slices = num_slices;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(job);
  }
  if (num_slices - 1 >= workers_.size()) {
    wake_.notify_all();
  } else {
    for (uint32_t i = 0; i + 1 < num_slices; ++i) wake_.notify_one();
  }
  while (RunOneSlice(*job, caller_slot)) {
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(jobs_.begin(), jobs_.end(), job);
    if (it != jobs_.end()) jobs_.erase(it);
  }
  std::unique_lock<std::mutex> lock(job->mutex);
  job->all_finished.wait(lock, [&] { return job->finished.load(std::memory_order_acquire) == num_slices; });
}

}  // namespace cpu
}  // namespace kiln
