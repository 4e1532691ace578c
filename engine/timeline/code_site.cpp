#include "engine/timeline/code_site.h"

namespace rwd {

namespace {
bool file_backed(const ProcMapping& m) {
  return !m.path.empty() && m.path[0] == '/' && !m.shared;
}
}  // namespace

CodeSite code_site(const std::vector<ProcMapping>& maps, uint64_t addr) {
  CodeSite s;
  s.offset = addr;
  for (const ProcMapping& m : maps) {
    if (addr < m.start || addr >= m.end) continue;
    if (file_backed(m)) {
      s.file = strip_deleted_suffix(m.path);
      s.offset = addr - m.start + m.offset;
    }
    break;
  }
  return s;
}

std::vector<uint64_t> site_addresses(const std::vector<ProcMapping>& maps, const CodeSite& site) {
  if (site.file.empty()) return {site.offset};
  std::vector<uint64_t> out;
  for (const ProcMapping& m : maps) {
    if (!m.exec || !file_backed(m) || site.offset < m.offset ||
        site.offset - m.offset >= m.end - m.start || strip_deleted_suffix(m.path) != site.file)
      continue;
    out.push_back(m.start + (site.offset - m.offset));
  }
  return out;
}

}  // namespace rwd
