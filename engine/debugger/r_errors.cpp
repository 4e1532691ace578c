#include "engine/debugger/r_errors.h"

#include "engine/debugger/timeline_target.h"
#include "engine/errors.h"

namespace rwd {

namespace {

constexpr size_t kMaxMessage = 1000;  // bytes of a message shown

/// The C string at `addr` in task `tid`'s memory (at most kMaxMessage bytes), "" when
/// unreadable.
std::string message_at(Timeline& tl, pid_t tid, uint64_t addr) {
  if (!addr) return "";
  try {
    TimelineTarget t(tl, tid);
    return c_string_at(t, addr, kMaxMessage);
  } catch (const Error&) {
    return "";
  }
}

}  // namespace

void RErrors::prepare() {
  if (!on_ || at_) return;
  uint64_t a = modules_.function_range(kEntry).first;
  if (!a) return;
  try {
    site_ = tl_.code_site(tl_.current().tid, a);
    refs_.add(*site_);
    at_ = a;
  } catch (const Error&) {
    site_.reset();
  }
}

void RErrors::end_resume() {
  if (site_) refs_.remove(*site_);
  site_.reset();
  at_ = 0;
}

std::optional<ExceptionStop> RErrors::error_at(const StopInfo& s) {
  if (!at_ || s.reason != StopReason::Breakpoint || s.addr != at_) return std::nullopt;
  // Rf_errorcall(SEXP call, const char* format, ...): R's own callers pass "%s" and the
  // message; others a message without arguments (or a format, shown as it is).
  Registers r = tl_.registers(s.tid);
  ExceptionStop e;
  e.type = "error";
  std::string format = message_at(tl_, s.tid, r.rsi);
  e.message = format == "%s" ? message_at(tl_, s.tid, r.rdx) : format;
  return e;
}

}  // namespace rwd
