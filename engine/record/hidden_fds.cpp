// rewind's own descriptors in a recorded process, the preload library's desched counters
// (rewind_preload_abi.h: from RWD_DESCHED_FD_FLOOR up), left out of the program's listings of
// /proc/PID/fd and /proc/PID/task/TID/fd (getdents64(2), getdents(2)), as rr hides its own:
// a program that lists its descriptors (a daemon or a sandbox closing them all, lsof, a test
// for leaked descriptors) sees what it sees natively. The preload library leaves the listing
// of a procfs directory traced (its NOT_OUTPUT check), so that the recorder sees each one.
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/record_session.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

/// The task whose descriptor directory `path` is ("/proc/P/fd": P, "/proc/P/task/T/fd": T),
/// or 0 for another path.
pid_t fd_dir_owner(const std::string& path) {
  auto number_at = [&](size_t& at) -> pid_t {
    size_t start = at;
    long v = 0;
    while (at < path.size() && path[at] >= '0' && path[at] <= '9' && at - start < 10)
      v = v * 10 + (path[at++] - '0');
    return at > start ? pid_t(v) : 0;
  };
  const std::string proc = "/proc/";
  if (path.compare(0, proc.size(), proc) != 0) return 0;
  size_t at = proc.size();
  pid_t owner = number_at(at);
  if (!owner) return 0;
  const std::string task = "/task/";
  if (path.compare(at, task.size(), task) == 0) {
    at += task.size();
    owner = number_at(at);
    if (!owner) return 0;
  }
  return path.compare(at, std::string::npos, "/fd") == 0 ? owner : 0;
}

/// The descriptor an entry names, or -1 for "." and "..".
int entry_fd(const uint8_t* name, size_t room) {
  int fd = 0;
  size_t i = 0;
  for (; i < room && name[i]; ++i) {
    if (name[i] < '0' || name[i] > '9' || i >= 9) return -1;
    fd = fd * 10 + (name[i] - '0');
  }
  return i > 0 ? fd : -1;
}

}  // namespace

namespace {
/// The most bytes of a listing's buffer kept at its entry (RecordTask::listing_before): more
/// than a program's usual buffer (glibc's readdir reads 32 KiB).
constexpr uint64_t kMaxListingCopy = 1 << 20;
}  // namespace

RecordSession::ListedCounters RecordSession::listed_counters(const RecordTask& t) {
  const long nr = long(t.entry.orig_rax);
  if (nr != SYS_getdents64 && nr != SYS_getdents) return {};
  const pid_t owner = fd_dir_owner(link_target(fd_path(t.tid, int(t.entry.rdi))));
  auto it = tasks_.find(owner);
  if (it == tasks_.end()) return {};
  const std::set<int>& counters = groups_[it->second.pid].counter_fds;
  if (counters.empty()) return {};
  return {owner, &counters};
}

void RecordSession::note_listing_buffer(RecordTask& t) {
  t.listing_before.clear();
  if (!listed_counters(t).counters) return;
  try {
    t.listing_before =
        read_memory(t.tid, t.entry.rsi, std::min<uint64_t>(t.entry.rdx, kMaxListingCopy));
  } catch (const SystemError&) {
    t.listing_before.clear();  // not all mapped: the call fails or writes less
  }
}

void RecordSession::note_counter_fd(RecordTask& t) {
  if (t.buffer.desched_fd >= 0) group(t).counter_fds.insert(t.buffer.desched_fd);
}

std::optional<int64_t> RecordSession::hide_counter_fds(RecordTask& t, int64_t result) {
  if (result <= 0) return std::nullopt;
  const auto [owner, listed] = listed_counters(t);
  if (!listed) return std::nullopt;
  const std::set<int>& counters = *listed;
  const long nr = long(t.entry.orig_rax);
  std::vector<uint8_t> bytes = read_memory(t.tid, t.entry.rsi, uint64_t(result));
  if (bytes.size() != uint64_t(result)) return std::nullopt;
  // linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), the name; the older
  // linux_dirent has no d_type there (it is the record's last byte): getdents(2).
  const size_t name_at = nr == SYS_getdents64 ? 19 : 18;
  std::vector<uint8_t> shown;
  for (size_t at = 0; at < bytes.size();) {
    uint16_t reclen = 0;
    if (at + name_at > bytes.size()) return std::nullopt;
    std::memcpy(&reclen, bytes.data() + at + 16, sizeof reclen);
    if (reclen <= name_at || at + reclen > bytes.size()) return std::nullopt;  // not a listing
    const int fd = entry_fd(bytes.data() + at + name_at, reclen - name_at);
    const bool hidden = fd >= RWD_DESCHED_FD_FLOOR && counters.count(fd) &&
                        link_target(fd_path(owner, fd)) == "anon_inode:[perf_event]";
    if (!hidden)
      shown.insert(shown.end(), bytes.begin() + long(at), bytes.begin() + long(at + reclen));
    at += reclen;
  }
  if (shown.size() == bytes.size()) return std::nullopt;
  // The entries shown, then, where the hidden ones were, what the buffer held before the call
  // (natively the kernel writes no further than its result), zeros where that is unknown.
  // The call's event keeps those bytes too (beside the result's, which capture_outputs
  // keeps), so that replay's memory holds the same.
  const size_t kept = shown.size();
  shown.resize(bytes.size(), 0);
  const size_t known = std::min(t.listing_before.size(), bytes.size());
  if (known > kept) std::memcpy(shown.data() + kept, t.listing_before.data() + kept, known - kept);
  write_memory(t.tid, t.entry.rsi, shown.data(), shown.size());
  MemoryRegion tail;
  tail.addr = t.entry.rsi + kept;
  tail.bytes.assign(shown.begin() + long(kept), shown.end());
  t.answered_memory.push_back(std::move(tail));
  return int64_t(kept);
}

void RecordSession::list_again(RecordTask& t, Registers& regs) {
  // Every entry the call read was hidden: an empty answer would mean the end of the directory,
  // so the call is made again from its `syscall` instruction (the directory's position has
  // moved past those entries). Nothing ran since its entry: no event is written for it, and
  // its buffer is as it was then (hide_counter_fds put back what it kept of it; replay's
  // copy, which makes no such call, holds those bytes).
  t.answered_memory.clear();
  regs.rip -= 2;
  regs.rax = t.entry.orig_rax;
  set_regs(t.tid, regs);
  t.state = RunState::UserRunning;
  resume_syscall(t);
}

}  // namespace rwd
