#include "engine/symbols/module_list.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "engine/errors.h"

namespace rwd {

namespace {

uint64_t read_u64(Target& t, uint64_t addr, bool& ok) {
  auto b = t.read_memory(addr, 8);
  uint64_t v = 0;
  ok = b.size() == 8;
  if (ok) memcpy(&v, b.data(), 8);
  return v;
}

/// (l_addr, l_name) of every entry of the dynamic loader's list (r_debug.r_map, found
/// through the executable's DT_DEBUG entry); empty before the loader filled it in.
std::vector<std::pair<uint64_t, std::string>> link_map_names(Target& t, const Module& exe) {
  std::vector<std::pair<uint64_t, std::string>> out;
  if (!exe.elf().dynamic_vaddr()) return out;
  uint64_t dyn = exe.to_runtime(exe.elf().dynamic_vaddr());
  auto bytes = t.read_memory(dyn, 16 * 128);
  uint64_t r_debug = 0;
  for (size_t i = 0; i + 16 <= bytes.size(); i += 16) {
    uint64_t tag, val;
    memcpy(&tag, &bytes[i], 8);
    memcpy(&val, &bytes[i + 8], 8);
    if (tag == DT_NULL) break;
    if (tag == DT_DEBUG) r_debug = val;
  }
  if (!r_debug) return out;
  bool ok = false;
  uint64_t lm = read_u64(t, r_debug + 8, ok);  // struct r_debug: r_version, then r_map
  for (int n = 0; ok && lm && n < 4096; ++n) {
    uint64_t l_addr = read_u64(t, lm, ok);
    uint64_t l_name = ok ? read_u64(t, lm + 8, ok) : 0;
    if (!ok) break;
    out.emplace_back(l_addr, l_name ? c_string_at(t, l_name) : "");
    lm = read_u64(t, lm + 24, ok);  // l_next
  }
  return out;
}

}  // namespace

void ModuleList::refresh(Target& target) {
  struct FileMaps {
    uint64_t lo = UINT64_MAX, hi = 0, header = 0;
    bool has_header = false;
  };
  std::vector<ProcMapping> maps = target.mappings();
  if (all_named_ && maps == seen_) return;
  all_named_ = false;
  std::map<std::string, FileMaps> files;
  for (const auto& m : maps) {
    if (m.path.empty() || m.path[0] != '/' || m.is_special()) continue;
    std::string path = strip_deleted_suffix(m.path);
    FileMaps& f = files[path];
    f.lo = std::min(f.lo, m.start);
    f.hi = std::max(f.hi, m.end);
    if (m.offset == 0 && (!f.has_header || m.start < f.header)) {
      f.header = m.start;
      f.has_header = true;
    }
  }
  std::vector<std::shared_ptr<Module>> next;
  for (const auto& [path, f] : files) {
    if (!f.has_header) continue;
    std::shared_ptr<Module> mod;
    for (const auto& old : modules_)
      if (old->file() == path && old->lo() == f.lo) mod = old;
    if (!mod) {
      try {
        mod = std::make_shared<Module>(path, path, f.header);
      } catch (const Error&) {
        continue;  // not ELF (a data file mapped by the program), or unreadable
      }
    }
    mod->set_range(f.lo, f.hi);
    next.push_back(std::move(mod));
  }
  modules_ = std::move(next);
  std::sort(modules_.begin(), modules_.end(),
            [](const auto& a, const auto& b) { return a->lo() < b->lo(); });

  exe_ = nullptr;
  auto auxv = target.auxv();
  for (size_t i = 0; i + 16 <= auxv.size(); i += 16) {
    uint64_t type, val;
    memcpy(&type, &auxv[i], 8);
    memcpy(&val, &auxv[i + 8], 8);
    if (type == AT_ENTRY) exe_ = module_at(val);
  }
  seen_ = std::move(maps);
  if (!exe_) return;
  size_t named = 0;
  for (const auto& [l_addr, name] : link_map_names(target, *exe_)) {
    if (name.empty() || name[0] != '/') continue;
    for (auto& m : modules_)
      if (m.get() != exe_ && m->bias() == l_addr) {
        m->set_display_path(name);
        ++named;
      }
  }
  all_named_ = named + 1 >= modules_.size();
}

Module* ModuleList::module_at(uint64_t addr) const {
  for (const auto& m : modules_)
    if (m->contains(addr)) return m.get();
  return nullptr;
}

std::pair<uint64_t, uint64_t> ModuleList::function_range(const char* name) const {
  for (const auto& m : modules_)
    for (const Symbol* s : m->symbols().lookup(name))
      if (s->function) return {m->to_runtime(s->addr), m->to_runtime(s->addr + s->size)};
  return {0, 0};
}

}  // namespace rwd
