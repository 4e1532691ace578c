// The preload library's descriptor cache, kept true by the recorder (rewind_preload_abi.h,
// RWD_FEATURE_FD_CACHE). The library remembers each descriptor's file type from its buffered
// fstat and forgets it at its own close, dup2, dup3 and close_range. The recorder sees the
// other changes of a descriptor table: traced calls from code that was not patched, and
// tasks that share the table without the memory or the memory without the table. There it
// writes the library's switch, as the event's memory, so that replay writes it at the same
// event and the library decides the same there.
#include <linux/close_range.h>
#include <sched.h>
#include <sys/syscall.h>

#include <algorithm>

#include "engine/arch/syscall_table.h"
#include "engine/os/tracee_writes.h"
#include "engine/record/record_session.h"
#include "engine/record/syscall_buffer.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

// Writes `value` into t's switch and keeps the write in `e`'s memory.
void set_switch(pid_t tid, uint64_t at, int32_t value, Event& e) {
  if (auto m = write_library_switch(tid, at, value)) e.memory.push_back(std::move(*m));
}

}  // namespace

void RecordSession::note_fd_cache(RecordTask& t, uint64_t buffer) {
  if (uint64_t at = fd_cache_switch_at(t.tid, buffer)) space(t).fd_cache_switch = at;
}

void RecordSession::fd_cache_after_syscall(RecordTask& t, long nr, const SyscallSpec& spec,
                                           int64_t result, Event& e) {
  AddressSpace& s = space(t);
  if (!s.fd_cache_switch || s.fd_cache_off) return;
  if (spec.replay != ReplayPolicy::Emulate) return;  // replay writes e.memory there
  // unshare(2) of CLONE_FILES, and close_range(2)'s CLOSE_RANGE_UNSHARE: this task gets a
  // table of its own, and the memory's other tasks keep the old one.
  const bool unshares =
      result == 0 && ((nr == SYS_unshare && (t.entry.rdi & CLONE_FILES)) ||
                      (nr == SYS_close_range && (t.entry.rdx & CLOSE_RANGE_UNSHARE)));
  if (unshares && s.tasks.size() > 1) {
    s.fd_cache_off = true;
    return set_switch(t.tid, s.fd_cache_switch, RWD_FD_CACHE_OFF, e);
  }
  if (auto& parents = s.fd_cache_vfork_parents; !parents.empty()) {
    // Off while vfork children ran on this memory with tables of their own.
    auto it = std::find(parents.begin(), parents.end(), t.tid);
    if (it == parents.end() || t.vfork_child) return;
    parents.erase(it);
    if (parents.empty()) set_switch(t.tid, s.fd_cache_switch, RWD_FD_CACHE_FORGET, e);
    return;
  }
  if (nr == SYS_close || nr == SYS_close_range || nr == SYS_dup2 || nr == SYS_dup3)
    set_switch(t.tid, s.fd_cache_switch, RWD_FD_CACHE_FORGET, e);
}

void RecordSession::forget_fd_cache(RecordTask& t, Event& e) {
  AddressSpace& s = space(t);
  if (s.fd_cache_switch && !s.fd_cache_off && s.fd_cache_vfork_parents.empty())
    set_switch(t.tid, s.fd_cache_switch, RWD_FD_CACHE_FORGET, e);
}

void RecordSession::fd_cache_at_clone(RecordTask& t, const CloneArgs& args, pid_t child, Event& e) {
  AddressSpace& s = space(t);
  if (!s.fd_cache_switch || s.fd_cache_off || !args.splits_fd_table()) return;
  // Off already, in the memory the child gets, while another vfork child runs.
  if (s.fd_cache_vfork_parents.empty()) set_switch(t.tid, s.fd_cache_switch, RWD_FD_CACHE_OFF, e);
  if ((args.flags & CLONE_VFORK) && args.shares_memory()) {
    // The parent waits until its child execs or ends: its table is its own again then.
    s.fd_cache_vfork_parents.push_back(t.tid);
    return;
  }
  s.fd_cache_off = true;
  if (args.shares_memory()) return;
  // The table without the memory: the child's copy was made before the write.
  if (auto m = write_library_switch(child, s.fd_cache_switch, RWD_FD_CACHE_OFF)) {
    e.written_tid = child;
    e.written_memory = std::move(*m);
  }
}

}  // namespace rwd
