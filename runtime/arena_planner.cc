// Memory planning (arena_planner.h): offsets in one arena, reused where lifetimes do not overlap.

#include "runtime/arena_planner.h"

#include <algorithm>
#include <numeric>

namespace kiln {
namespace {

size_t AlignUp(size_t value, size_t alignment) { return (value + alignment - 1) / alignment * alignment; }

}  // namespace

ArenaPlan PlanArena(const std::vector<ArenaRequest>& requests, size_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by earlier first use, then index, so the plan is deterministic.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
    if (requests[a].first_use != requests[b].first_use) return requests[a].first_use < requests[b].first_use;
    return a < b;
  });

  struct Placed {
    size_t offset, end;
    int first_use, last_use;
  };
  std::vector<Placed> placed;  // kept sorted by offset
  for (size_t index : order) {
    const ArenaRequest& r = requests[index];
    const size_t size = AlignUp(std::max<size_t>(r.bytes, 1), alignment);
    plan.naive_bytes += size;
    size_t candidate = 0;
    for (const Placed& p : placed) {
      const bool lifetimes_overlap = !(p.last_use < r.first_use || r.last_use < p.first_use);
      if (!lifetimes_overlap) continue;
      if (candidate + size <= p.offset) break;  // fits in the gap before p
      candidate = std::max(candidate, AlignUp(p.end, alignment));
    }
    plan.offsets[index] = candidate;
    plan.arena_bytes = std::max(plan.arena_bytes, candidate + size);
    Placed entry{candidate, candidate + size, r.first_use, r.last_use};
    placed.insert(std::upper_bound(placed.begin(), placed.end(), entry,
                                   [](const Placed& a, const Placed& b) { return a.offset < b.offset; }),
                  entry);
  }
  return plan;
}

}  // namespace kiln
