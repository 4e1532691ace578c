#include "proc_maps.h"

#include <sys/mman.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
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

std::vector<ProcMapping> read_proc_maps(pid_t pid) {
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
    m.read = perms[0] == 'r';
    m.write = perms[1] == 'w';
    m.exec = perms[2] == 'x';
    m.shared = perms[3] == 's';
    if (pos > 0 && size_t(pos) <= line.size()) m.path = line.substr(size_t(pos));
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace rwd
