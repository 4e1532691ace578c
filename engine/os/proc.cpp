#include "proc.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>

#include "engine/errors.h"

namespace rwd {

int ProcMapping::prot() const {
  return (read ? PROT_READ : 0) | (write ? PROT_WRITE : 0) | (exec ? PROT_EXEC : 0);
}

bool ProcMapping::is_special() const {
  return path == "[vdso]" || path == "[vvar]" || path == "[vsyscall]" ||
         path.rfind("[vvar", 0) == 0 || path == "[uprobes]";
}

std::string strip_deleted_suffix(std::string p) {
  const std::string d = " (deleted)";
  if (p.size() > d.size() && p.compare(p.size() - d.size(), d.size(), d) == 0)
    p.resize(p.size() - d.size());
  return p;
}

bool is_preload_library(std::string_view path) {
  static constexpr std::string_view kName = "librewind_preload.so";
  const size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return base.starts_with(kName);
}

std::pair<uint64_t, uint64_t> preload_library_range(const std::vector<ProcMapping>& maps) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const ProcMapping& m : maps) {
    if (!is_preload_library(m.path)) continue;
    lo = std::min(lo, m.start);
    hi = std::max(hi, m.end);
  }
  return hi ? std::pair{lo, hi} : std::pair<uint64_t, uint64_t>{0, 0};
}

namespace {
struct AsBefore {
  std::vector<pid_t> ids;
  std::vector<ProcMapping> originals;
};
std::mutex as_before_mu;
std::map<pid_t, AsBefore> as_before;  // by pid
std::atomic<size_t> as_before_count{0};

std::vector<long> status_numbers(pid_t tid, std::string_view key);

/// The originals set for `id` (a pid or one of its tasks); empty when none.
std::vector<ProcMapping> originals_for(pid_t id) {
  std::lock_guard<std::mutex> lock(as_before_mu);
  for (const auto& [pid, a] : as_before)
    if (pid == id || std::find(a.ids.begin(), a.ids.end(), id) != a.ids.end()) return a.originals;
  return {};
}
}  // namespace

void set_mappings_as_before(pid_t pid, const std::vector<pid_t>& ids,
                            std::vector<ProcMapping> originals) {
  std::lock_guard<std::mutex> lock(as_before_mu);
  as_before[pid] = {ids, std::move(originals)};
  as_before_count = as_before.size();
}

void clear_mappings_as_before(pid_t pid) {
  std::lock_guard<std::mutex> lock(as_before_mu);
  as_before.erase(pid);
  as_before_count = as_before.size();
}

namespace {
/// `maps` with the entries that lie in `originals`' ranges replaced by them.
std::vector<ProcMapping> as_they_were(std::vector<ProcMapping> maps,
                                      const std::vector<ProcMapping>& originals) {
  std::erase_if(maps, [&](const ProcMapping& m) {
    for (const ProcMapping& o : originals)
      if (m.start < o.end && o.start < m.end) return true;
    return false;
  });
  maps.insert(maps.end(), originals.begin(), originals.end());
  std::sort(maps.begin(), maps.end(),
            [](const ProcMapping& a, const ProcMapping& b) { return a.start < b.start; });
  return maps;
}
}  // namespace

std::vector<ProcMapping> read_proc_maps(pid_t pid) {
  std::vector<ProcMapping> out = read_proc_maps_now(pid);
  if (as_before_count.load() == 0) return out;
  std::vector<ProcMapping> originals = originals_for(pid);
  if (originals.empty()) {
    // A thread of the process that was not named when the protection changed (its first run
    // since then has not come yet): its process's mappings are its own (the point search
    // hashed the read-only split of a watched page and ran past its point: a hang).
    std::vector<long> tgid = status_numbers(pid, "Tgid:");
    if (tgid.size() == 1 && tgid[0] != pid) originals = originals_for(pid_t(tgid[0]));
  }
  return originals.empty() ? out : as_they_were(std::move(out), originals);
}

std::vector<ProcMapping> read_proc_maps_now(pid_t pid) {
  std::string p = "/proc/" + std::to_string(pid) + "/maps";
  std::ifstream f(p);
  if (!f) throw_errno("open " + p);
  std::vector<ProcMapping> out;
  std::string line;
  while (std::getline(f, line)) {
    ProcMapping m;
    char perms[8] = {};
    unsigned long long start, end, off, inode;
    int pos = 0;
    unsigned dmaj, dmin;
    if (sscanf(line.c_str(), "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &dmaj,
               &dmin, &inode, &pos) < 7)
      continue;
    m.start = start;
    m.end = end;
    m.offset = off;
    m.inode = inode;
    m.dev = makedev(dmaj, dmin);
    m.read = perms[0] == 'r';
    m.write = perms[1] == 'w';
    m.exec = perms[2] == 'x';
    m.shared = perms[3] == 's';
    if (pos > 0 && size_t(pos) <= line.size()) m.path = line.substr(size_t(pos));
    out.push_back(std::move(m));
  }
  return out;
}

namespace {
/// The whole of /proc/ID/NAME ("" when it cannot be read).
std::string read_proc_file(pid_t id, const char* name) {
  std::ifstream f("/proc/" + std::to_string(id) + "/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

/// Field `n` (proc(5)'s numbering, 3 or more) of /proc/PID/stat as a number; 0 when the
/// process is gone or the kernel has no such field.
uint64_t proc_stat_field(pid_t pid, int n) {
  // The command name may hold spaces and parentheses: fields count from the last ')'.
  std::string stat = read_proc_file(pid, "stat");
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream in(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= n && in >> field; ++i)
    if (i == n) return std::strtoull(field.c_str(), nullptr, 10);
  return 0;
}

}  // namespace

uint64_t proc_start_time(pid_t pid) {
  return proc_stat_field(pid, 22);
}

uint64_t proc_brk_start(pid_t pid) {
  return proc_stat_field(pid, 47);
}

char proc_task_state(pid_t tid) {
  // The command name may hold spaces and parentheses: the state follows the last ')'.
  std::string stat = read_proc_file(tid, "stat");
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '\0';
}

ProcSignals read_proc_signals(pid_t tid) {
  std::istringstream in(read_proc_file(tid, "status"));
  ProcSignals s;
  std::string line;
  auto field = [&](const char* name, uint64_t& out) {
    if (line.rfind(name, 0) == 0) out = std::stoull(line.substr(7), nullptr, 16);
  };
  while (std::getline(in, line)) {
    field("SigPnd:", s.pending);
    field("ShdPnd:", s.shared_pending);
    field("SigBlk:", s.blocked);
    field("SigIgn:", s.ignored);
    field("SigCgt:", s.caught);
  }
  return s;
}

std::vector<uint8_t> read_proc_auxv(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/auxv";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SystemError(path, errno);
  std::vector<uint8_t> out(4096);  // 2 * 8 bytes per entry: far more than the kernel's few dozen
  ssize_t n = ::read(fd, out.data(), out.size());
  ::close(fd);
  out.resize(n > 0 ? size_t(n) : 0);
  return out;
}

std::vector<pid_t> process_children(pid_t pid) {
  std::vector<pid_t> children;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream f(entry.path() / "children");
    for (pid_t c; f >> c;) children.push_back(c);
  }
  return children;
}

std::vector<std::string> read_proc_cmdline(pid_t tid) {
  std::string all = read_proc_file(tid, "cmdline");
  std::vector<std::string> argv;
  size_t i = 0;
  while (i < all.size()) {
    size_t j = all.find('\0', i);
    if (j == std::string::npos) j = all.size();
    argv.push_back(all.substr(i, j - i));
    i = j + 1;
  }
  return argv;
}

bool maps_file_named(pid_t pid, uint64_t addr, std::string_view prefix) {
  for (const ProcMapping& m : read_proc_maps(pid)) {
    if (addr < m.start || addr >= m.end) continue;
    std::string_view base = m.path;
    if (auto slash = base.rfind('/'); slash != std::string_view::npos)
      base.remove_prefix(slash + 1);
    return base.substr(0, prefix.size()) == prefix;
  }
  return false;
}

namespace {

/// The numbers on the line of /proc/TID/status (proc(5)) that starts with `key` ("NSpid:",
/// "Uid:"); empty when the task is gone or has no such line.
std::vector<long> status_numbers(pid_t tid, std::string_view key) {
  std::ifstream in("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  std::vector<long> out;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream fields(line.substr(key.size()));
    long v;
    while (fields >> v) out.push_back(v);
    break;
  }
  return out;
}

}  // namespace

std::vector<pid_t> ns_pids(pid_t tid) {
  std::vector<long> ids = status_numbers(tid, "NSpid:");
  return std::vector<pid_t>(ids.begin(), ids.end());
}

int seccomp_filter_count(pid_t tid) {
  std::vector<long> n = status_numbers(tid, "Seccomp_filters:");
  return n.empty() ? -1 : int(n[0]);
}

uint64_t peak_resident_bytes(pid_t pid) {
  std::vector<long> kib = status_numbers(pid, "VmHWM:");
  return kib.empty() || kib[0] < 0 ? 0 : uint64_t(kib[0]) * 1024;
}

bool in_rewinds_pid_namespace(pid_t tid) {
  auto link = [](const std::string& path) {
    char buf[64] = {};
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, size_t(n)) : std::string();
  };
  static const std::string own = link("/proc/self/ns/pid");
  std::string theirs = link("/proc/" + std::to_string(tid) + "/ns/pid");
  return !theirs.empty() && theirs == own;
}

pid_t pid_seen_by(pid_t viewer, pid_t tid) {
  if (tid <= 0) return 0;
  if (in_rewinds_pid_namespace(viewer)) return tid;
  const std::vector<pid_t> viewer_ids = ns_pids(viewer), ids = ns_pids(tid);
  if (viewer_ids.empty() || ids.size() < viewer_ids.size()) return 0;
  // The task's namespace, then its parents (ioctl_ns(2) NS_GET_PARENT), up to the viewer's
  // level: visible only when that one is the viewer's.
  const size_t level = viewer_ids.size() - 1;
  int ns = ::open(("/proc/" + std::to_string(tid) + "/ns/pid").c_str(), O_RDONLY | O_CLOEXEC);
  for (size_t up = ids.size() - 1; ns >= 0 && up > level; --up) {
    const int parent = ::ioctl(ns, NS_GET_PARENT);
    ::close(ns);
    ns = parent;
  }
  if (ns < 0) return 0;
  struct stat theirs, mine;
  const bool same = ::fstat(ns, &theirs) == 0 &&
                    ::stat(("/proc/" + std::to_string(viewer) + "/ns/pid").c_str(), &mine) == 0 &&
                    theirs.st_dev == mine.st_dev && theirs.st_ino == mine.st_ino;
  ::close(ns);
  return same ? ids[level] : 0;
}

std::string link_target(const std::string& path) {
  char target[4096];
  ssize_t n = ::readlink(path.c_str(), target, sizeof target);
  if (n <= 0 || size_t(n) == sizeof target) return "";
  return std::string(target, size_t(n));
}

FdInfo fd_info(pid_t tid, int fd) {
  FdInfo info;
  std::ifstream in("/proc/" + std::to_string(tid) + "/fdinfo/" + std::to_string(fd));
  std::string key, digits;
  // "pos:" and "flags:" are its first two lines (one number each); other lines may hold more.
  while ((info.flags < 0 || info.pos < 0) && in >> key >> digits) {
    try {
      if (key == "flags:") info.flags = int(std::stoul(digits, nullptr, 8));
      if (key == "pos:") info.pos = int64_t(std::stoull(digits, nullptr, 10));
    } catch (const std::exception&) {
      return {};
    }
  }
  return info;
}

uint32_t task_real_uid(pid_t tid) {
  std::vector<long> ids = status_numbers(tid, "Uid:");  // real, effective, saved, fs
  return ids.empty() ? uint32_t(getuid()) : uint32_t(ids[0]);
}

}  // namespace rwd
