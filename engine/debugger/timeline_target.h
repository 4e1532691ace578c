// A point on a replay's timeline seen as a Target, so that symbols, stacks, variables and
// expressions read a replayed process exactly as they read a live one.
#pragma once

#include "engine/symbols/target.h"
#include "engine/timeline/timeline.h"

namespace rwd {

/// Task `tid` (a recorded tid) of a timeline, at the timeline's current point. Reads go
/// through the timeline (breakpoint patches hidden); nothing is written.
class TimelineTarget : public Target {
 public:
  TimelineTarget(Timeline& timeline, pid_t tid) : timeline_(timeline), tid_(tid) {}
  std::vector<uint8_t> read_memory(uint64_t addr, size_t len) override {
    return timeline_.read_memory(tid_, addr, len);
  }
  Registers registers(pid_t tid) override { return timeline_.registers(tid); }
  std::vector<ProcMapping> mappings() override { return timeline_.mappings(tid_); }
  std::vector<uint8_t> auxv() override { return timeline_.auxv(tid_); }
  std::optional<user_fpregs_struct> fp_registers(pid_t tid) override {
    return timeline_.fp_registers(tid);
  }
  pid_t tid() const { return tid_; }

 private:
  Timeline& timeline_;
  pid_t tid_;
};

}  // namespace rwd
