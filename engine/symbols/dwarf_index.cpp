#include "engine/symbols/dwarf_index.h"

#include <dwarf.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "engine/errors.h"
#include "engine/symbols/source_path.h"

namespace rwd {

DwarfIndex::DwarfIndex(const std::string& path) : file_(std::make_unique<DwarfFile>(path)) {
  Dwarf_Debug dbg = file_->dbg();
  for (;;) {
    Dwarf_Unsigned hdr_len = 0, typeoff = 0, next = 0;
    Dwarf_Off abbrev = 0;
    Dwarf_Half version = 0, addr_size = 0, len_size = 0, ext_size = 0, hdr_type = 0;
    Dwarf_Sig8 sig;
    if (dwarf_next_cu_header_d(dbg, true, &hdr_len, &version, &abbrev, &addr_size, &len_size,
                               &ext_size, &sig, &typeoff, &next, &hdr_type, nullptr) != DW_DLV_OK)
      break;
    Dwarf_Die raw = nullptr;
    if (dwarf_siblingof_b(dbg, nullptr, true, &raw, nullptr) != DW_DLV_OK) continue;
    Die cu(file_.get(), raw);
    if (cu.tag() != DW_TAG_compile_unit) continue;
    CompileUnit u;
    u.die = cu.offset();
    u.name = cu.string(DW_AT_name);
    u.comp_dir = cu.string(DW_AT_comp_dir);
    u.producer = cu.string(DW_AT_producer);
    u.language = int(cu.udata(DW_AT_language).value_or(0));
    u.ranges = cu.ranges();
    units_.push_back(std::move(u));
  }
  if (units_.empty()) throw Error(path + ": no DWARF compile units");
  data_.resize(units_.size());
}

std::optional<size_t> DwarfIndex::unit_at(uint64_t addr) {
  for (size_t i = 0; i < units_.size(); ++i)
    for (const auto& r : units_[i].ranges)
      if (r.contains(addr)) return i;
  return std::nullopt;
}

const LineTable& DwarfIndex::lines(size_t unit) {
  UnitData& d = data_.at(unit);
  if (d.lines_read) return d.lines;
  d.lines_read = true;
  Die cu = file_->die_at(units_[unit].die);
  Dwarf_Unsigned version = 0;
  Dwarf_Small table_count = 0;
  Dwarf_Line_Context ctx = nullptr;
  if (!cu || dwarf_srclines_b(cu.raw(), &version, &table_count, &ctx, nullptr) != DW_DLV_OK)
    return d.lines;
  Dwarf_Line* lines = nullptr;
  Dwarf_Signed count = 0;
  if (dwarf_srclines_from_linecontext(ctx, &lines, &count, nullptr) == DW_DLV_OK) {
    std::unordered_map<Dwarf_Unsigned, uint32_t> file_index;
    d.lines.rows.reserve(size_t(count));
    for (Dwarf_Signed i = 0; i < count; ++i) {
      LineRow row;
      Dwarf_Addr addr = 0;
      Dwarf_Unsigned lineno = 0, fileno = 0;
      Dwarf_Signed col = 0;
      Dwarf_Bool b = 0;
      dwarf_lineaddr(lines[i], &addr, nullptr);
      dwarf_lineno(lines[i], &lineno, nullptr);
      dwarf_lineoff_b(lines[i], reinterpret_cast<Dwarf_Unsigned*>(&col), nullptr);
      row.addr = addr;
      row.line = uint32_t(lineno);
      row.column = uint32_t(col);
      if (dwarf_linebeginstatement(lines[i], &b, nullptr) == DW_DLV_OK) row.is_stmt = b;
      b = 0;
      if (dwarf_lineendsequence(lines[i], &b, nullptr) == DW_DLV_OK) row.end_sequence = b;
      Dwarf_Bool prologue_end = 0, epilogue_begin = 0;
      Dwarf_Unsigned isa = 0, discriminator = 0;
      if (dwarf_prologue_end_etc(lines[i], &prologue_end, &epilogue_begin, &isa, &discriminator,
                                 nullptr) == DW_DLV_OK)
        row.prologue_end = prologue_end;
      dwarf_line_srcfileno(lines[i], &fileno, nullptr);
      auto it = file_index.find(fileno);
      if (it == file_index.end()) {
        char* name = nullptr;
        std::string s;
        if (dwarf_linesrc(lines[i], &name, nullptr) == DW_DLV_OK && name) {
          s = name;
          dwarf_dealloc(file_->dbg(), name, DW_DLA_STRING);
        }
        it = file_index.emplace(fileno, uint32_t(d.lines.files.size())).first;
        d.lines.files.push_back(normal_source_path(s));
        d.lines.real_files.push_back(real_source_path(s));
      }
      row.file = it->second;
      d.lines.rows.push_back(row);
    }
  }
  dwarf_srclines_dealloc_b(ctx);
  return d.lines;
}

namespace {
/// Collects functions, globals and named types of one unit (no descent into functions).
struct UnitWalker {
  size_t unit;
  std::vector<FunctionInfo>& functions;
  std::vector<GlobalVariable>& globals;
  std::map<std::string, DieOffset>& types;
  std::map<std::string, std::pair<DieOffset, int64_t>>& enumerators;
  std::unordered_map<DieOffset, std::string> declared;  // declaration DIE -> qualified name
  std::vector<std::pair<size_t, DieOffset>> fn_specs, var_specs;

  void walk(const Die& parent, const std::string& prefix) {
    for (const Die& c : parent.children()) {
      int tag = c.tag();
      std::string name = c.string(DW_AT_name);
      switch (tag) {
        case DW_TAG_namespace:
          walk(c, prefix + (name.empty() ? "(anonymous namespace)" : name) + "::");
          break;
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
          if (name.empty()) break;
          if (!c.flag(DW_AT_declaration)) types.emplace(prefix + name, c.offset());
          for (const Die& m : c.children())
            if (m.tag() == DW_TAG_subprogram || m.tag() == DW_TAG_variable ||
                m.tag() == DW_TAG_member)
              declared[m.offset()] = prefix + name + "::" + m.string(DW_AT_name);
          walk(c, prefix + name + "::");
          break;
        case DW_TAG_enumeration_type:
          for (const Die& e : c.children())
            if (e.tag() == DW_TAG_enumerator)
              enumerators.emplace(
                  prefix + e.string(DW_AT_name),
                  std::make_pair(c.offset(), e.sdata(DW_AT_const_value).value_or(0)));
          [[fallthrough]];
        case DW_TAG_typedef:
        case DW_TAG_base_type:
          if (!name.empty() && !c.flag(DW_AT_declaration)) types.emplace(prefix + name, c.offset());
          break;
        case DW_TAG_subprogram: {
          auto ranges = c.ranges();
          if (ranges.empty()) {
            declared[c.offset()] = prefix + name;
            break;
          }
          FunctionInfo f;
          f.die = c.offset();
          f.unit = unit;
          f.name = name.empty() ? "" : prefix + name;
          f.linkage = c.with_attr(DW_AT_linkage_name).string(DW_AT_linkage_name);
          f.ranges = ranges;
          f.entry = ranges.front().lo;
          for (const auto& r : ranges) f.entry = std::min(f.entry, r.lo);
          f.decl_line = uint32_t(c.with_attr(DW_AT_decl_line).udata(DW_AT_decl_line).value_or(0));
          if (auto spec = c.ref(DW_AT_specification))
            fn_specs.emplace_back(functions.size(), *spec);
          else if (auto origin = c.ref(DW_AT_abstract_origin))
            fn_specs.emplace_back(functions.size(), *origin);
          functions.push_back(std::move(f));
          break;
        }
        case DW_TAG_variable: {
          if (!c.has(DW_AT_location) && !c.has(DW_AT_const_value)) {
            declared[c.offset()] = prefix + name;
            break;
          }
          GlobalVariable g{c.offset(), unit, name.empty() ? "" : prefix + name};
          if (auto spec = c.ref(DW_AT_specification)) var_specs.emplace_back(globals.size(), *spec);
          globals.push_back(std::move(g));
          break;
        }
        default:
          break;
      }
    }
  }
};
}  // namespace

void DwarfIndex::read_unit(size_t unit) {
  UnitData& d = data_.at(unit);
  if (d.functions_read) return;
  d.functions_read = true;
  Die cu = file_->die_at(units_[unit].die);
  if (!cu) return;
  UnitWalker w{unit, d.functions, d.globals, d.types, d.enumerators, {}, {}, {}};
  w.walk(cu, "");
  for (const auto& [name, off] : d.types) d.type_names[off] = name;
  // Definitions outside their class (C++) take the qualified name of their declaration.
  for (auto [i, spec] : w.fn_specs) {
    auto it = w.declared.find(spec);
    if (it != w.declared.end()) {
      d.functions[i].name = it->second;
    } else if (d.functions[i].name.empty()) {
      Die s = file_->die_at(spec);
      d.functions[i].name = s ? s.name() : "";
    }
  }
  for (auto [i, spec] : w.var_specs) {
    auto it = w.declared.find(spec);
    if (it != w.declared.end())
      d.globals[i].name = it->second;
    else if (d.globals[i].name.empty()) {
      Die s = file_->die_at(spec);
      d.globals[i].name = s ? s.name() : "";
    }
  }
}

void DwarfIndex::read_all_units() {
  if (all_read_) return;
  for (size_t i = 0; i < units_.size(); ++i) read_unit(i);
  all_read_ = true;
}

const std::vector<FunctionInfo>& DwarfIndex::functions(size_t unit) {
  read_unit(unit);
  return data_.at(unit).functions;
}

const FunctionInfo* DwarfIndex::function_at(uint64_t addr) {
  auto unit = unit_at(addr);
  if (!unit) return nullptr;
  for (const auto& f : functions(*unit))
    for (const auto& r : f.ranges)
      if (r.contains(addr)) return &f;
  return nullptr;
}

std::vector<DieOffset> DwarfIndex::inline_chain(const FunctionInfo& fn, uint64_t addr) {
  std::vector<DieOffset> chain;
  std::function<void(const Die&)> search = [&](const Die& parent) {
    for (const Die& c : parent.children()) {
      int tag = c.tag();
      if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block) continue;
      bool inside = false;
      for (const auto& r : c.ranges()) inside = inside || r.contains(addr);
      if (!inside) continue;
      if (tag == DW_TAG_inlined_subroutine) chain.push_back(c.offset());
      search(c);
      return;
    }
  };
  Die d = file_->die_at(fn.die);
  if (d) search(d);
  return chain;
}

namespace {
/// True when qualified `full` is `name`, or ends in "::name".
bool name_matches(const std::string& full, const std::string& name) {
  if (full == name) return true;
  return full.size() > name.size() + 2 &&
         full.compare(full.size() - name.size(), name.size(), name) == 0 &&
         full.compare(full.size() - name.size() - 2, 2, "::") == 0;
}
}  // namespace

std::vector<const FunctionInfo*> DwarfIndex::functions_named(const std::string& name) {
  read_all_units();
  std::vector<const FunctionInfo*> out;
  for (const auto& d : data_)
    for (const auto& f : d.functions)
      if (name_matches(f.name, name) || (!f.linkage.empty() && f.linkage == name))
        out.push_back(&f);
  return out;
}

std::vector<const GlobalVariable*> DwarfIndex::globals_named(const std::string& name,
                                                             std::optional<size_t> unit) {
  std::vector<const GlobalVariable*> out;
  if (unit) {
    read_unit(*unit);
    for (const auto& g : data_[*unit].globals)
      if (name_matches(g.name, name)) out.push_back(&g);
    if (!out.empty()) return out;
  }
  read_all_units();
  for (const auto& d : data_)
    for (const auto& g : d.globals)
      if (name_matches(g.name, name)) out.push_back(&g);
  return out;
}

std::vector<const GlobalVariable*> DwarfIndex::globals_of(size_t unit) {
  read_unit(unit);
  std::vector<const GlobalVariable*> out;
  for (const auto& g : data_[unit].globals) out.push_back(&g);
  return out;
}

std::optional<std::pair<DieOffset, int64_t>> DwarfIndex::enumerator_named(
    const std::string& name, std::optional<size_t> unit) {
  if (unit) {
    read_unit(*unit);
    auto it = data_[*unit].enumerators.find(name);
    if (it != data_[*unit].enumerators.end()) return it->second;
  }
  read_all_units();
  for (const auto& d : data_) {
    auto it = d.enumerators.find(name);
    if (it != d.enumerators.end()) return it->second;
  }
  return std::nullopt;
}

std::optional<size_t> DwarfIndex::unit_of(DieOffset die) const {
  std::optional<size_t> found;
  for (size_t i = 0; i < units_.size(); ++i)
    if (units_[i].die <= die && (!found || units_[i].die > units_[*found].die)) found = i;
  return found;
}

std::string DwarfIndex::qualified_type_name(DieOffset die) {
  auto unit = unit_of(die);
  if (!unit) return "";
  read_unit(*unit);
  auto it = data_[*unit].type_names.find(die);
  return it == data_[*unit].type_names.end() ? "" : it->second;
}

std::optional<DieOffset> DwarfIndex::type_named(const std::string& name,
                                                std::optional<size_t> unit) {
  if (unit) {
    read_unit(*unit);
    auto it = data_[*unit].types.find(name);
    if (it != data_[*unit].types.end()) return it->second;
  }
  read_all_units();
  for (const auto& d : data_) {
    auto it = d.types.find(name);
    if (it != d.types.end()) return it->second;
  }
  return std::nullopt;
}

std::optional<std::pair<size_t, LineRow>> DwarfIndex::line_at(uint64_t addr) {
  auto unit = unit_at(addr);
  if (!unit) return std::nullopt;
  const auto& rows = lines(*unit).rows;
  // Rows come in sequences of ascending addresses; find the one holding addr.
  size_t seq_start = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].end_sequence) continue;
    if (addr >= rows[seq_start].addr && addr < rows[i].addr) {
      auto first = rows.begin() + long(seq_start), last = rows.begin() + long(i);
      auto it = std::upper_bound(first, last, addr,
                                 [](uint64_t a, const LineRow& r) { return a < r.addr; });
      if (it != first) {
        // Of several rows at one address, the statement row is the one to report.
        size_t last = size_t(it - rows.begin()) - 1;
        for (size_t r = last + 1; r-- > seq_start && rows[r].addr == rows[last].addr;)
          if (rows[r].is_stmt) return std::make_pair(*unit, rows[r]);
        return std::make_pair(*unit, rows[last]);
      }
    }
    seq_start = i + 1;
  }
  return std::nullopt;
}

std::vector<std::vector<bool>> DwarfIndex::files_named(const std::string& file) {
  std::string want = normal_source_path(file), want_real = real_source_path(file);
  std::vector<std::vector<bool>> named(units_.size());
  for (size_t u = 0; u < units_.size(); ++u) {
    const LineTable& t = lines(u);
    for (size_t f = 0; f < t.files.size(); ++f)
      named[u].push_back(path_matches(t.files[f], want) ||
                         path_matches(t.real_files[f], want_real));
  }
  return named;
}

std::set<uint32_t> DwarfIndex::lines_with_code(const std::string& file, uint32_t first,
                                               uint32_t last) {
  std::vector<std::vector<bool>> named = files_named(file);
  std::set<uint32_t> out;
  for (size_t u = 0; u < units_.size(); ++u) {
    const LineTable& t = lines(u);
    for (const auto& r : t.rows)
      if (r.is_stmt && !r.end_sequence && r.line >= first && r.line <= last &&
          r.file < t.files.size() && named[u][r.file])
        out.insert(r.line);
  }
  return out;
}

std::vector<uint64_t> DwarfIndex::line_addresses(const std::string& file, uint32_t line,
                                                 uint32_t* bound_line) {
  std::vector<std::vector<bool>> named = files_named(file);
  uint32_t best = 0;
  for (size_t u = 0; u < units_.size(); ++u) {
    const LineTable& t = lines(u);
    for (const auto& r : t.rows)
      if (r.is_stmt && !r.end_sequence && r.line >= line && (!best || r.line < best) &&
          r.file < t.files.size() && named[u][r.file])
        best = r.line;
  }
  if (bound_line) *bound_line = best;
  std::vector<uint64_t> out;
  if (!best) return out;
  std::map<DieOffset, uint64_t> lowest;  // per function or inlined copy
  for (size_t u = 0; u < units_.size(); ++u) {
    const LineTable& t = lines(u);
    for (const auto& r : t.rows) {
      if (!r.is_stmt || r.end_sequence || r.line != best || r.file >= t.files.size() ||
          !named[u][r.file])
        continue;
      DieOffset key = r.addr;  // code outside any known function: one location per address
      if (const FunctionInfo* f = function_at(r.addr)) {
        auto chain = inline_chain(*f, r.addr);
        key = chain.empty() ? f->die : chain.back();
      }
      auto it = lowest.find(key);
      if (it == lowest.end() || r.addr < it->second) lowest[key] = r.addr;
    }
  }
  for (const auto& [k, a] : lowest) out.push_back(a);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

uint64_t DwarfIndex::after_prologue(const FunctionInfo& fn) {
  const auto& rows = lines(fn.unit).rows;
  uint64_t end = fn.entry;
  for (const auto& r : fn.ranges)
    if (r.contains(fn.entry)) end = r.hi;
  uint32_t first_line = 0;
  uint64_t best = 0, second_row = 0;
  for (const auto& r : rows) {
    if (r.end_sequence || r.addr < fn.entry || r.addr >= end) continue;
    if (r.prologue_end) return r.addr;
    if (r.addr == fn.entry) {
      if (!first_line) first_line = r.line;
      continue;
    }
    if (!r.is_stmt || r.line == 0) continue;
    if (r.line != first_line && (!best || r.addr < best)) best = r.addr;
    if (!second_row || r.addr < second_row) second_row = r.addr;
  }
  // A function written on one line ("void f(int x) { g = x; }"): gcc still starts a new
  // row after the prologue, on the same line.
  return best ? best : second_row ? second_row : fn.entry;
}

}  // namespace rwd
