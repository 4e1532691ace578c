// Replacing cpuid, and rdtsc where it does not trap (insn_patch.h).
#include "engine/os/insn_patch.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/arch/emulated_insns.h"
#include "engine/os/machine_probes.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"

namespace rwd {

namespace {

bool probe_rdtsc_traps() {
  pid_t pid = fork();
  if (pid < 0) return true;  // cannot tell: assume the usual
  if (pid == 0) {
    signal(SIGSEGV, SIG_DFL);
    prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
    volatile uint64_t t = __rdtsc();
    (void)t;
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

/// The path that opens mapping `m` of process `pid`: its own path when that names the file
/// it maps (same inode), else /proc/PID/map_files/START-END (a deleted file, or another
/// mount namespace's path).
std::string mapped_file(pid_t pid, const ProcMapping& m) {
  struct stat st;
  if (!m.path.empty() && m.path[0] == '/' && ::stat(m.path.c_str(), &st) == 0 &&
      st.st_ino == m.inode)
    return m.path;
  char range[96];
  snprintf(range, sizeof range, "/proc/%d/map_files/%lx-%lx", int(pid), (unsigned long)m.start,
           (unsigned long)m.end);
  return range;
}

/// Whether `m` maps code from a file (not [vdso] or anonymous memory).
bool file_code(const ProcMapping& m) {
  return m.exec && m.inode != 0 && !m.path.empty() && m.path[0] != '[';
}

}  // namespace

bool cpu_traps_rdtsc() {
  static const bool traps = machine_probe("rdtsc_traps", probe_rdtsc_traps);
  return traps;
}

bool rdtsc_traps() {
  static const bool traps = [] {
    if (const char* e = getenv("REWIND_PATCH_TSC"); e && *e) return strcmp(e, "1") != 0;
    return cpu_traps_rdtsc();
  }();
  return traps;
}

size_t patch_emulated_insns(pid_t tid, uint64_t lo, uint64_t hi) {
  constexpr uint64_t kPageMask = ~uint64_t(4095);
  const bool tsc = !rdtsc_traps();
  size_t patched = 0;
  // ld.so alone has 58 cpuids, and every process start patches it: the sites of one page are
  // read together and written back together (the bytes between them as read: the task is
  // stopped), through one descriptor for all the writes into read-only code.
  TraceeMemFile mem(tid);
  for (const ProcMapping& m : read_proc_maps(tid)) {
    if (!file_code(m) || m.end <= lo || m.start >= hi) continue;
    // The sites to replace, by address (emulated_sites gives them by file offset).
    std::vector<std::pair<uint64_t, EmulatedSite>> todo;
    for (const EmulatedSite& s : emulated_sites(mapped_file(tid, m))) {
      if (s.offset < m.offset) continue;
      uint64_t addr = m.start + (s.offset - m.offset);
      if (addr + s.len > m.end) break;
      if (addr < lo || addr >= hi || (s.op != EmulatedOp::Cpuid && !tsc)) continue;
      todo.emplace_back(addr, s);
    }
    for (size_t i = 0; i < todo.size();) {
      size_t j = i + 1;  // [i, j): the sites that start in the page of site i
      while (j < todo.size() && (todo[j].first & kPageMask) == (todo[i].first & kPageMask)) ++j;
      uint64_t from = todo[i].first, to = todo[j - 1].first + todo[j - 1].second.len;
      std::vector<uint8_t> now = read_memory(tid, from, to - from);
      uint64_t first = to, last = from;  // the bytes replaced, to write back
      for (size_t k = i; k < j; ++k) {
        const auto& [addr, s] = todo[k];
        if (addr + s.len > from + now.size()) break;  // unreadable
        uint8_t* at = now.data() + (addr - from);
        auto d = decode_emulated(at, s.len);
        // replaced, or not the file's
        if (!d || d->len != s.len || d->op != s.op || at[0] != 0x0f) continue;
        std::vector<uint8_t> with = emulated_replacement(s);
        std::copy(with.begin(), with.end(), at);
        first = std::min(first, addr);
        last = std::max(last, addr + s.len);
        ++patched;
      }
      if (first < last) {
        const uint8_t* p = now.data() + (first - from);
        if (m.write)
          write_memory(tid, first, p, last - first);
        else
          mem.write(first, p, last - first);
      }
      i = j;
    }
  }
  return patched;
}

void unpatch_emulated_view(pid_t pid, uint64_t addr, std::vector<uint8_t>& bytes) {
  // Cheap when nothing in `bytes` looks like a replacement (the usual read).
  bool maybe = false;
  for (size_t i = 0; i + 1 < bytes.size() && !maybe; ++i)
    maybe = bytes[i] == 0xcd && (bytes[i + 1] == kRdtscVector || bytes[i + 1] == kRdtscpVector ||
                                 bytes[i + 1] == kCpuidVector);
  if (!maybe) return;
  std::vector<ProcMapping> maps;
  try {
    maps = read_proc_maps(pid);
  } catch (const std::exception&) {
    return;
  }
  uint64_t end = addr + bytes.size();
  for (const ProcMapping& m : maps) {
    if (!file_code(m) || m.end <= addr || m.start >= end) continue;
    for (const EmulatedSite& s : emulated_sites(mapped_file(pid, m))) {
      if (s.offset < m.offset) continue;
      uint64_t at = m.start + (s.offset - m.offset);
      if (at >= m.end || at >= end) break;
      if (at < addr || at + s.len > end) continue;  // a part of one: left as read
      uint8_t* p = bytes.data() + (at - addr);
      if (auto orig = emulated_original(p, s.len, s.len)) std::copy(orig->begin(), orig->end(), p);
    }
  }
}

}  // namespace rwd
