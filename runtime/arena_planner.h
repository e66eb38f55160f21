// Memory planning for intermediate tensors: one arena, offsets reused by tensors whose lifetimes do not
// overlap.
#ifndef KILN_RUNTIME_ARENA_PLANNER_H_
#define KILN_RUNTIME_ARENA_PLANNER_H_

#include <cstddef>
#include <vector>

namespace kiln {

// One buffer to place: it must hold `bytes` from node `first_use` to node `last_use`, inclusive.
struct ArenaRequest {
  size_t bytes = 0;
  int first_use = 0;
  int last_use = 0;
};

struct ArenaPlan {
  std::vector<size_t> offsets;  // one per request, each a multiple of the alignment
  size_t arena_bytes = 0;       // the arena's total size
  size_t naive_bytes = 0;       // what one aligned buffer per request would take
};

// Greedy by size: the largest buffers are placed first, each at the lowest aligned offset that does not
// overlap a placed buffer whose lifetime intersects its own. Deterministic for a given input.
ArenaPlan PlanArena(const std::vector<ArenaRequest>& requests, size_t alignment);

}  // namespace kiln

#endif  // KILN_RUNTIME_ARENA_PLANNER_H_
