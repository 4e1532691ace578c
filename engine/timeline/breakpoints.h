// Software breakpoints (int3) in replayed processes, invisible to the program and to the
// debugger's memory reads.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "engine/timeline/code_site.h"

namespace rwd {

/// The debugger's breakpoint sites and, per replayed process, where they are and which are
/// patched in. A site is patched at its address in each process that maps its code (a
/// process running another program does not get it); one that is not mapped yet stays
/// pending and is patched at a later sync().
class BreakpointTable {
 public:
  /// A debugger's breakpoint at `site`.
  void add(const CodeSite& site) { set(site, kUser, true); }
  void remove(const CodeSite& site) { set(site, kUser, false); }
  /// The timeline's own breakpoint at `site` (to stop near a point it searches for): patched
  /// like the others, but has() does not count it.
  void add_internal(const CodeSite& site) { set(site, kInternal, true); }
  void remove_internal(const CodeSite& site) { set(site, kInternal, false); }
  /// True when process `pid` has a debugger's breakpoint at `addr`.
  bool has(pid_t pid, uint64_t addr);
  /// True when no site is wanted and no patch is left in any process (a removed site's
  /// int3 stays until that process's next sync()).
  bool empty() const;
  /// Patches and unpatches process `pid` (through its task `tid`) to match the wanted set.
  void sync(pid_t pid, pid_t tid);
  /// Forgets process `pid`'s patches without touching its memory (it exec'd or ended). A
  /// process that shared another's memory stops sharing it.
  void forget(pid_t pid) {
    if (!shared_.erase(pid)) {
      patched_.erase(pid);
      resolved_.erase(pid);
      maps_.erase(pid);
    }
  }
  /// Records that process `child` shares the memory of process `parent` (vfork, clone with
  /// CLONE_VM, posix_spawn) until it execs: their patches are one set, made through either.
  void share(pid_t child, pid_t parent) { shared_[child] = key(parent); }
  /// Takes every patch out of process `pid` (before it is copied for a checkpoint); the
  /// next sync() puts them back.
  void unpatch(pid_t pid, pid_t tid);
  /// Forgets the patches of `pid` that are no longer there (a mapping replaced the page:
  /// mmap, munmap, mremap) and where its sites are; the next sync() patches them again
  /// where mapped.
  void revalidate(pid_t pid, pid_t tid);
  /// Records that process `to` (a fork of `from`) carries the same patches.
  void copy_patches(pid_t from, pid_t to) {
    if (auto it = patched_.find(key(from)); it != patched_.end()) patched_[to] = it->second;
  }
  /// Forgets every process (a new replay starts).
  void forget_all() {
    patched_.clear();
    shared_.clear();
    resolved_.clear();
    maps_.clear();
    process_keep_out_.clear();
  }
  /// Removes the patch at `addr` from `pid` now (to step over it); sync() puts it back.
  void lift(pid_t pid, pid_t tid, uint64_t addr);
  /// True if `addr` holds a patched int3 in `pid`.
  bool patched(pid_t pid, uint64_t addr) const;
  /// Keeps patches out of addresses [lo, hi) in every process (a counting trampoline's
  /// bytes, pass_trap.h): sync() takes those out and puts none in. keep_out(0, 0) ends it.
  void keep_out(uint64_t lo, uint64_t hi) {
    keep_lo_ = lo;
    keep_hi_ = hi;
  }
  /// Keeps patches out of process `pid`'s addresses in `ranges` ([lo, hi) pairs, runtime
  /// addresses) as keep_out() does everywhere, until called again with none: while
  /// librewind_preload.so reads and patches libc's text (ReplaySession::patching_code).
  void keep_out_of(pid_t pid, std::vector<std::pair<uint64_t, uint64_t>> ranges) {
    if (ranges.empty())
      process_keep_out_.erase(key(pid));
    else
      process_keep_out_[key(pid)] = std::move(ranges);
  }
  /// Whether keep_out_of() keeps ranges out of process `pid` now.
  bool keeps_out_of(pid_t pid) const { return process_keep_out_.count(key(pid)) != 0; }
  /// Puts the original bytes back into `bytes`, read from `pid` at `addr`.
  void hide(pid_t pid, uint64_t addr, std::vector<uint8_t>& bytes) const;

 private:
  static constexpr uint8_t kUser = 1, kInternal = 2;
  void set(const CodeSite& site, uint8_t who, bool on);
  std::map<CodeSite, uint8_t> wanted_;  ///< site -> who wants it (kUser | kInternal)
  /// The process whose patch set `pid` uses (its own, or the one whose memory it shares).
  pid_t key(pid_t pid) const {
    auto it = shared_.find(pid);
    return it == shared_.end() ? pid : it->second;
  }
  /// The addresses of the wanted sites in process `pid` (read from its /proc maps once,
  /// until the sites or its mappings change).
  /// Address -> whether a debugger's breakpoint is there (else only the timeline's own).
  const std::map<uint64_t, bool>& addresses(pid_t pid);
  std::map<pid_t, std::map<uint64_t, uint8_t>> patched_;  ///< pid -> address -> original byte
  std::map<pid_t, std::map<uint64_t, bool>> resolved_;    ///< pid -> addresses(pid)
  /// pid -> the /proc maps addresses(pid) read: kept when the wanted sites change (a
  /// resume that adds and takes away a site reads them once), dropped with the process's
  /// mappings (revalidate(), forget(), forget_all()).
  std::map<pid_t, std::vector<ProcMapping>> maps_;
  std::map<pid_t, pid_t> shared_;       ///< process -> the process whose memory it shares
  uint64_t keep_lo_ = 0, keep_hi_ = 0;  ///< keep_out()
  /// keep_out_of(): process (its key()) -> ranges.
  std::map<pid_t, std::vector<std::pair<uint64_t, uint64_t>>> process_keep_out_;
  bool kept_out(uint64_t addr) const { return addr >= keep_lo_ && addr < keep_hi_; }
  /// Whether `addr` is kept out of process `k` (a key()): by keep_out() or keep_out_of().
  bool kept_out(pid_t k, uint64_t addr) const;
};

}  // namespace rwd
