#include "engine/debugger/source_breakpoints.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "engine/arch/registers.h"
#include "engine/errors.h"

namespace rwd {

BreakpointKind breakpoint_kind(const BreakpointSpec& spec) {
  if (spec.address) return BreakpointKind::Instruction;
  return spec.function.empty() ? BreakpointKind::Source : BreakpointKind::Function;
}

void bind_breakpoint(Breakpoint& bp, const std::vector<std::shared_ptr<Module>>& modules,
                     std::vector<CodeSite>* sites) {
  bp.addrs.clear();
  bp.message.clear();
  const BreakpointSpec& s = bp.spec;
  // Each binding in module `m` at link address `link`.
  auto bound = [&](Module& m, uint64_t link) {
    bp.addrs.push_back(m.to_runtime(link));
    if (!sites) return;
    if (auto off = m.elf().file_offset(link)) sites->push_back(CodeSite{m.file(), *off});
  };
  if (s.address) {
    // Any address may hold a breakpoint; where no code is mapped, it never hits (as gdb).
    bp.addrs.push_back(s.address);
    Module* m = nullptr;
    for (const auto& mod : modules)
      if (mod->contains(s.address)) m = mod.get();
    DwarfIndex* dw = m ? m->dwarf() : nullptr;
    auto row = dw ? dw->line_at(m->to_link(s.address)) : std::nullopt;
    if (row) {
      const auto& files = dw->lines(row->first).files;
      bp.file = row->second.file < files.size() ? files[row->second.file] : "";
      bp.line = row->second.line;
    }
    if (!m) bp.message = "No code is mapped at " + hex(s.address) + " yet.";
    return;
  }
  for (const auto& m : modules) {
    if (!s.function.empty()) {
      // Module::functions_named opens the DWARF only where a symbol may name the function.
      bool found = false;
      if (std::vector<const FunctionInfo*> fns = m->functions_named(s.function); !fns.empty()) {
        DwarfIndex* dw = m->dwarf();
        for (const FunctionInfo* fn : fns) {
          bound(*m, dw->after_prologue(*fn));
          if (bp.file.empty()) {
            auto row = dw->line_at(dw->after_prologue(*fn));
            if (row) {
              const auto& files = dw->lines(row->first).files;
              bp.file = row->second.file < files.size() ? files[row->second.file] : "";
              bp.line = row->second.line;
            }
          }
          found = true;
        }
      }
      if (!found)  // no debug info: the symbol's first instruction
        for (const Symbol* sym : m->symbols().lookup(s.function))
          if (sym->function) bound(*m, sym->addr);
      continue;
    }
    DwarfIndex* dw = m->dwarf();
    if (!dw) continue;
    uint32_t line = 0;
    auto addrs = dw->line_addresses(s.file, s.line, &line);
    if (addrs.empty()) continue;
    for (uint64_t a : addrs) bound(*m, a);
    bp.line = line;
    auto row = dw->line_at(addrs.front());
    if (row) {
      const auto& files = dw->lines(row->first).files;
      bp.file = row->second.file < files.size() ? files[row->second.file] : s.file;
    }
  }
  if (sites) {
    std::sort(sites->begin(), sites->end());
    sites->erase(std::unique(sites->begin(), sites->end()), sites->end());
  }
  std::sort(bp.addrs.begin(), bp.addrs.end());
  bp.addrs.erase(std::unique(bp.addrs.begin(), bp.addrs.end()), bp.addrs.end());
  if (bp.addrs.empty())
    bp.message = s.function.empty()
                     ? "No line " + std::to_string(s.line) + " in file \"" + s.file + "\"."
                     : "Function \"" + s.function + "\" not defined.";
  else if (s.function.empty() && bp.line != s.line)
    bp.message = "Breakpoint moved from line " + std::to_string(s.line) + " to line " +
                 std::to_string(bp.line) + ".";
}

bool hit_condition_holds(const std::string& cond, uint64_t hits) {
  size_t i = 0;
  while (i < cond.size() && isspace(uint8_t(cond[i]))) ++i;
  if (i == cond.size()) return true;
  std::string op;
  while (i < cond.size() && strchr("<>=%!", cond[i])) op += cond[i++];
  while (i < cond.size() && isspace(uint8_t(cond[i]))) ++i;
  size_t end = i;
  while (end < cond.size() && isdigit(uint8_t(cond[end]))) ++end;
  if (end == i || cond.find_first_not_of(" \t", end) != std::string::npos)
    throw Error("hit condition \"" + cond +
                "\" is not a number with an optional <, <=, ==, >, >= or %");
  if (end - i > 18)  // more hits than any replay could count
    throw Error("hit condition \"" + cond + "\": the count is too large");
  uint64_t n = std::stoull(cond.substr(i, end - i));
  if (op.empty() || op == ">=") return hits >= n;  // a bare N: the Nth hit and after (gdb's ignore)
  if (op == ">") return hits > n;
  if (op == "==" || op == "=") return hits == n;
  if (op == "<") return hits < n;
  if (op == "<=") return hits <= n;
  if (op == "!=") return hits != n;
  if (op == "%") return n != 0 && hits % n == 0;
  throw Error("hit condition \"" + cond + "\": unknown operator " + op);
}

void arrive_at(Breakpoint& bp, bool count, const std::function<bool()>& holds,
               const std::function<std::string()>& format, std::vector<int>& ids,
               std::vector<std::string>& log, std::string& error) {
  if (!bp.spec.condition.empty()) {
    try {
      if (!holds()) return;
    } catch (const Error& e) {
      error =
          "Error in testing condition for breakpoint " + std::to_string(bp.id) + ": " + e.what();
      ids.push_back(bp.id);
      return;
    }
  }
  if (count) ++bp.hits;
  if (!hit_condition_holds(bp.spec.hit_condition, bp.hits)) return;
  if (!bp.spec.log_message.empty())
    log.push_back(format());
  else
    ids.push_back(bp.id);
}

bool same_source_file(const std::string& wanted, const std::string& code_file) {
  if (wanted == code_file) return true;
  if (code_file.empty() || code_file[0] == '<') return false;
  const std::string& longer = wanted.size() > code_file.size() ? wanted : code_file;
  const std::string& shorter = wanted.size() > code_file.size() ? code_file : wanted;
  if (shorter.empty() || shorter[0] == '/') return false;
  std::string rel = shorter.rfind("./", 0) == 0 ? shorter.substr(2) : shorter;
  return longer.ends_with("/" + rel);
}

}  // namespace rwd
