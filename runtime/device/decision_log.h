// The decision log: every choice the device layer makes (driver, device, placement, fallback) with its reason,
// in the order it was made. The API (KilnInterpreterGetDecision), `kiln inspect --devices` and `kiln run
// --explain` read it.
#ifndef KILN_RUNTIME_DEVICE_DECISION_LOG_H_
#define KILN_RUNTIME_DEVICE_DECISION_LOG_H_

#include <deque>
#include <mutex>
#include <string>

#include "kiln/common.h"
#include "kiln/device.h"

namespace kiln {

struct Decision {
  KilnDecisionKind kind;
  std::string subject;  // what it is about: "libfoo.so", "atan_op.kmod: kernel 'blur'", "node 3"
  std::string message;  // a whole sentence that names the subject and gives the reason
};

// Append-only and thread-safe: run-time fallbacks are recorded from whichever thread ran the work. Entries
// never move, so the strings Get hands out stay valid for the log's lifetime.
class DecisionLog {
 public:
  void Add(KilnDecisionKind kind, std::string subject, std::string message);
  size_t size() const;
  const Decision* Get(size_t index) const;

 private:
  mutable std::mutex mutex_;
  std::deque<Decision> entries_;
};

const char* StatusName(KilnStatus status);

}  // namespace kiln

#endif  // KILN_RUNTIME_DEVICE_DECISION_LOG_H_
