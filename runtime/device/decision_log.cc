// The decision log: every choice of driver, device and placement, with its reason, as the API and CLI show it.
#include "runtime/device/decision_log.h"

#include <cstring>

namespace kiln {


void DecisionLog::Add(KilnDecisionKind kind, std::string subject, std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_back({kind, std::move(subject), std::move(message)});
}

size_t DecisionLog::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

const Decision* DecisionLog::Get(size_t index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return index < entries_.size() ? &entries_[index] : nullptr;
}

const char* StatusName(KilnStatus s) {
  switch (s) {
    case kKilnOk: return "ok";
    case kKilnError: return "error";
    case kKilnDelegateError: return "driver error";
    case kKilnUnresolvedOps: return "unresolved ops";
    case kKilnInvalidArgument: return "invalid argument";
    case kKilnInvalidModel: return "invalid module";
    case kKilnUnsupported: return "unsupported";
    case kKilnOutOfMemory: return "out of memory";
  }
  return "unknown status";
}

}  // namespace kiln

extern "C" {

const char* KilnDecisionKindName(KilnDecisionKind kind) {
  int value;
  std::memcpy(&value, &kind, sizeof value);
  switch (value) {
    case kKilnDecisionPolicy: return "policy";
    case kKilnDecisionDriver: return "driver";
    case kKilnDecisionDevice: return "device";
    case kKilnDecisionModule: return "module";
    case kKilnDecisionKernel: return "kernel";
    case kKilnDecisionNode: return "node";
    case kKilnDecisionPartition: return "partition";
    case kKilnDecisionFallback: return "fallback";
  }
  return "unknown";
}

}  // extern "C"
