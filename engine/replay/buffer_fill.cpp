#include "buffer_fill.h"

#include <sys/uio.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>

#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/replay/outside_syscalls.h"
#include "engine/replay/remote_syscall.h"
#include "engine/trace/buffered_records.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

/// Writes records[from, to) at position `from` of `t`'s buffer, then `mark` after them.
void write_records(const ReplayTask& t, const std::vector<uint8_t>& records, uint32_t from,
                   uint32_t to, uint32_t mark) {
  rwd_record m{RWD_RECORD_HEADER, mark, 0};
  const uint64_t at = t.syscall_buffer + RWD_DATA_OFFSET + from;
  // Records and mark in one process_vm_writev(2) from where they lie (up to a MiB of records:
  // no copy of them); a failed or short write goes the general way, through one buffer.
  iovec local[2] = {{const_cast<uint8_t*>(records.data()) + from, size_t(to - from)},
                    {&m, sizeof m}};
  iovec remote{reinterpret_cast<void*>(at), size_t(to - from) + sizeof m};
  if (process_vm_writev(t.tid, local, 2, &remote, 1, 0) == ssize_t(remote.iov_len)) return;
  std::vector<uint8_t> bytes(records.begin() + from, records.begin() + to);
  const auto* p = reinterpret_cast<const uint8_t*>(&m);
  bytes.insert(bytes.end(), p, p + sizeof m);
  write_memory(t.tid, at, bytes.data(), bytes.size());
}

/// The byte positions in `records` where records end: the places a task can pause at.
std::vector<uint32_t> record_boundaries(const std::vector<uint8_t>& records) {
  std::vector<uint32_t> out;
  uint32_t pos = 0;
  for (const BufferedRecord& r : parse_buffered_records(records)) {
    pos += RWD_RECORD_HEADER + r.data_bytes;
    out.push_back(pos);
  }
  return out;
}

}  // namespace

void fill_buffer(ReplayTask& t, std::vector<uint8_t> records, std::vector<uint32_t> pauses,
                 uint32_t from) {
  std::sort(pauses.begin(), pauses.end());
  pauses.erase(std::unique(pauses.begin(), pauses.end()), pauses.end());
  // The task paused at those (or passed them: a pause comes before the record ending there is
  // marked used).
  pauses.erase(pauses.begin(), std::upper_bound(pauses.begin(), pauses.end(), from));
  if (from > records.size())
    throw DivergenceError("the task used " + std::to_string(from) +
                          " bytes of buffered syscall records, the recording " +
                          std::to_string(records.size()));
  if (!pauses.empty()) {
    if (!(t.buffer_features & RWD_FEATURE_PAUSE))
      throw DivergenceError("the task's syscall buffer library cannot pause between records");
    std::vector<uint32_t> ends = record_boundaries(records);
    for (uint32_t p : pauses)
      if (!std::binary_search(ends.begin(), ends.end(), p))
        throw DivergenceError("no buffered record ends at byte " + std::to_string(p));
  }
  t.records = std::move(records);
  t.pauses = std::move(pauses);
  uint32_t to = t.pauses.empty() ? uint32_t(t.records.size()) : t.pauses.front();
  write_records(t, t.records, from, to, t.pauses.empty() ? RWD_END_MARK : RWD_PAUSE_MARK);
}

bool made_by_library(const ReplayTask& t, const Registers& r) {
  return t.syscall_buffer != 0 && r.r12 == t.syscall_buffer;
}

bool at_call_run_in_replay(const ReplayTask& t, const Registers& r) {
  return r.rip == RWD_UNTRACED_IP && made_by_library(t, r);
}

void run_call_in_replay(ReplayTask& t, bool stepping) {
  const Registers entry = get_regs(t.tid);
  const long nr = long(entry.orig_rax);
  uint32_t used = 0;
  read_memory_exact(t.tid, t.syscall_buffer, &used, sizeof used);
  rwd_record rec{};
  read_memory_exact(t.tid, t.syscall_buffer + RWD_DATA_OFFSET + used, &rec, sizeof rec);
  const std::string who = "task " + std::to_string(t.rec_tid);
  if (rec.nr == RWD_END_MARK || rec.nr == RWD_PAUSE_MARK)
    throw DivergenceError(who + " made syscall " + syscall_name(nr) +
                          " after the last call the recording buffered there");
  if (rec.nr != uint64_t(nr))
    throw DivergenceError(who + " made syscall " + syscall_name(nr) +
                          " where the recording buffered " + syscall_name(long(rec.nr)));
  // The abort mark of a call the recorder gave up before it ran (a program's seccomp filter
  // judged it: RecordSession::give_up_buffered_call): not made here either; the library makes
  // it again traced.
  const bool given_up = rec.result == RWD_ABORTED;
  const std::optional<int64_t> outside = given_up ? std::optional<int64_t>(RWD_ABORTED)
                                                  : syscall_from_outside(t.tid, entry, rec.result);
  t.blocked.reset();  // the call may set the mask, from outside or in the task
  int64_t result = outside.value_or(0);
  if (!outside) {
    ProgramResumeKept kept(t);
    RemoteSyscall call(t, RWD_UNTRACED_PAGE, entry);
    result = call.call(nr, {entry.rdi, entry.rsi, entry.rdx, entry.r10, entry.r8, entry.r9});
  }
  if (result != rec.result)
    throw DivergenceError(who + "'s buffered " + syscall_name(nr) + " returned " +
                          hex(uint64_t(result)) + " in replay, " + hex(uint64_t(rec.result)) +
                          " when recorded");
  Registers after = entry;
  after.rax = uint64_t(result);
  if (stepping) after.r11 &= ~uint64_t(0x100);  // rflags.TF
  set_regs(t.tid, after);
}

bool at_buffer_pause(const ReplayTask& t) {
  // Without a pause ahead the library never makes it.
  if (t.pauses.empty()) return false;
  Registers r = get_regs(t.tid);
  return r.orig_rax == RWD_SYS_PAUSE && made_by_library(t, r);
}

uint32_t take_buffer_pause(ReplayTask& t) {
  uint32_t used = 0;
  read_memory_exact(t.tid, t.syscall_buffer, &used, sizeof used);
  Registers r = get_regs(t.tid);
  uint32_t pos = used + uint32_t(r.r8);  // past the record it is about to mark used
  if (t.pauses.empty() || pos != t.pauses.front())
    throw DivergenceError("task " + std::to_string(t.rec_tid) +
                          " paused in its syscall buffer at byte " + std::to_string(pos) +
                          (t.pauses.empty() ? ", where no pause was asked for"
                                            : ", expected " + std::to_string(t.pauses.front())));
  t.pauses.erase(t.pauses.begin());
  uint32_t to = t.pauses.empty() ? uint32_t(t.records.size()) : t.pauses.front();
  write_records(t, t.records, pos, to, t.pauses.empty() ? RWD_END_MARK : RWD_PAUSE_MARK);
  // As the library's code stands after the pause check without one (rewind_preload_abi.h).
  r.rax = r.rbx;
  r.rbx = pos;
  r.orig_rax = uint64_t(-1);
  set_regs(t.tid, r);
  return pos;
}

std::optional<uint64_t> set_pending_mask(ReplayTask& t) {
  if (!t.syscall_buffer || !(t.buffer_features & RWD_FEATURE_LAZY_MASK)) return std::nullopt;
  constexpr uint64_t kAt = offsetof(rwd_buffer_header, mask_pending);
  static_assert(offsetof(rwd_buffer_header, pending_mask) == kAt + 8);
  struct {
    uint32_t pending, pad;
    uint64_t mask;
  } left{};
  const std::vector<uint8_t> bytes = read_memory(t.tid, t.syscall_buffer + kAt, sizeof left);
  if (bytes.size() != sizeof left) return std::nullopt;
  std::memcpy(&left, bytes.data(), sizeof left);
  if (!left.pending || !try_set_sigmask(t.tid, left.mask)) return std::nullopt;
  const uint32_t done = 0;
  write_memory(t.tid, t.syscall_buffer + kAt, &done, sizeof done);
  t.blocked = left.mask;
  t.blocked_at = resumes_so_far();
  return left.mask;
}

}  // namespace rwd
