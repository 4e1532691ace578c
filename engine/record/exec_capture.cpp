#include "exec_capture.h"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <climits>

#include "engine/errors.h"
#include "engine/os/insn_patch.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/os/vdso_symbols.h"
#include "engine/trace/bytes.h"

namespace rwd {

namespace {

/// capture_exec's work; data may hold some of the event's bytes when it throws.
Event capture_exec_into(pid_t tid, FileSaver& saver, std::vector<uint8_t>& data) {
  Event e;
  e.kind = EventKind::Exec;
  e.tid = tid;
  e.regs = get_regs(tid);
  hide_vdso_symbols(tid);     // glibc then makes the time syscalls, recorded
  patch_emulated_insns(tid);  // cpuid, and rdtsc where it does not trap (insn_patch.h)
  std::string proc = "/proc/" + std::to_string(tid);
  const std::string exe = link_target(proc + "/exe");
  if (exe.empty()) throw_errno("readlink " + proc + "/exe");
  e.file = saver.save(proc + "/exe", strip_deleted_suffix(exe));
  const std::vector<ProcMapping> maps = read_proc_maps(tid);
  size_t most = 0;  // what the loop below may append: room made once, not regrown
  for (const ProcMapping& m : maps)
    if (!m.is_special() && (m.write || m.path.empty() || m.path[0] == '[' || m.inode == 0))
      most += m.end - m.start;
  make_room(data, most);
  for (const ProcMapping& m : maps) {
    if (m.is_special()) continue;
    Mapping out;
    out.start = m.start;
    out.end = m.end;
    out.offset = m.offset;
    out.prot = uint32_t(m.prot());
    out.flags = m.shared ? MAP_SHARED : MAP_PRIVATE;
    out.name = m.path;
    bool file_backed = !m.path.empty() && m.path[0] != '[' && m.inode != 0;
    if (file_backed) {
      char range[64];
      snprintf(range, sizeof range, "/map_files/%lx-%lx", (unsigned long)m.start,
               (unsigned long)m.end);
      out.file = saver.save(proc + range, strip_deleted_suffix(m.path));
    }
    if (m.write || out.file.empty()) {
      MemoryRegion r;
      r.addr = m.start;
      const size_t at = data.size();
      data.resize(at + (m.end - m.start));
      r.in_data = read_memory_into(tid, m.start, data.data() + at, m.end - m.start);
      data.resize(at + r.in_data);
      e.memory.push_back(std::move(r));
    }
    e.mappings.push_back(std::move(out));
  }
  e.argv = read_proc_cmdline(tid);
  return e;
}

}  // namespace

Event capture_exec(pid_t tid, FileSaver& saver, std::vector<uint8_t>& data) {
  const size_t start = data.size();
  try {
    return capture_exec_into(tid, saver, data);
  } catch (...) {
    data.resize(start);  // the bytes of an event that is not written
    throw;
  }
}

}  // namespace rwd
