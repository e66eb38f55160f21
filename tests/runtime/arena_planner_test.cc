// The arena planner: no two live tensors overlap, and memory is reused (runtime/arena_planner.h).

#include "runtime/arena_planner.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln {
namespace {

bool Overlap(const ArenaRequest& a, size_t oa, const ArenaRequest& b, size_t ob) {
  const bool time = !(a.last_use < b.first_use || b.last_use < a.first_use);
  const bool space = oa < ob + std::max<size_t>(b.bytes, 1) && ob < oa + std::max<size_t>(a.bytes, 1);
  return time && space;
}

void ExpectValid(const std::vector<ArenaRequest>& requests, const ArenaPlan& plan, size_t alignment) {
  ASSERT_EQ(plan.offsets.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0u) << "request " << i;
    EXPECT_LE(plan.offsets[i] + requests[i].bytes, plan.arena_bytes) << "request " << i;
    for (size_t j = i + 1; j < requests.size(); ++j) {
      EXPECT_FALSE(Overlap(requests[i], plan.offsets[i], requests[j], plan.offsets[j]))
          << "requests " << i << " and " << j << " share memory while both alive";
    }
  }
  EXPECT_LE(plan.arena_bytes, plan.naive_bytes);
}

TEST(ArenaPlanner, ChainReusesMemory) {
  // a -> op0 -> b -> op1 -> c -> op2 -> d: a and c can share, b and d can share.
  std::vector<ArenaRequest> requests = {{1000, 0, 0}, {1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}};
  ArenaPlan plan = PlanArena(requests, 64);
  ExpectValid(requests, plan, 64);
  EXPECT_EQ(plan.naive_bytes, 4u * 1024);
  EXPECT_EQ(plan.arena_bytes, 2u * 1024);
}

TEST(ArenaPlanner, AllAliveNeedsTheSum) {
  std::vector<ArenaRequest> requests = {{100, 0, 5}, {200, 0, 5}, {300, 0, 5}};
  ArenaPlan plan = PlanArena(requests, 64);
  ExpectValid(requests, plan, 64);
  EXPECT_EQ(plan.arena_bytes, 128u + 256 + 320);
}

TEST(ArenaPlanner, EmptyAndZeroSized) {
  EXPECT_EQ(PlanArena({}, 64).arena_bytes, 0u);
  std::vector<ArenaRequest> requests = {{0, 0, 1}, {0, 0, 1}};
  ArenaPlan plan = PlanArena(requests, 64);
  ExpectValid(requests, plan, 64);
}

TEST(ArenaPlanner, RandomGraphsNeverOverlap) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<ArenaRequest> requests(1 + rng() % 40);
    for (auto& r : requests) {
      r.bytes = rng() % 5000;
      r.first_use = static_cast<int>(rng() % 20);
      r.last_use = r.first_use + static_cast<int>(rng() % 6);
    }
    ArenaPlan plan = PlanArena(requests, 64);
    ExpectValid(requests, plan, 64);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace kiln
