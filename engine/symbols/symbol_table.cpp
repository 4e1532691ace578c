#include "engine/symbols/symbol_table.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <set>

namespace rwd {

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out) return name;
  std::string s = out;
  std::free(out);
  return s;
}

std::string without_parameters(std::string_view d) {
  // The parameter list is the last top-level "(...)" (operator() and templates aside).
  int depth = 0;
  for (size_t i = d.size(); i-- > 0;) {
    char c = d[i];
    if (c == ')') ++depth;
    if (c == '(' && --depth == 0) {
      if (i >= 8 && d.substr(i - 8, 8) == "operator") continue;
      return std::string(d.substr(0, i));
    }
  }
  return std::string(d);
}

void SymbolTable::add(const std::vector<ElfSymbol>& symbols) {
  for (const auto& s : symbols) {
    Symbol sym;
    sym.name = s.name;
    sym.demangled = demangle(s.name);
    sym.addr = s.value;
    sym.size = s.size;
    sym.function = s.function;
    if (s.function && !s.global) local_functions_ = true;
    symbols_.push_back(std::move(sym));
  }
}

void SymbolTable::finish() {
  std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
    if (a.addr != b.addr) return a.addr < b.addr;
    if (a.size != b.size) return a.size > b.size;
    return a.name < b.name;
  });
  symbols_.erase(std::unique(symbols_.begin(), symbols_.end(),
                             [](const Symbol& a, const Symbol& b) {
                               return a.addr == b.addr && a.name == b.name;
                             }),
                 symbols_.end());
}

namespace {
const Symbol* containing(const std::vector<Symbol>& v, uint64_t addr, bool function) {
  auto it = std::upper_bound(v.begin(), v.end(), addr,
                             [](uint64_t a, const Symbol& s) { return a < s.addr; });
  // Walk back over symbols at or before addr; prefer one whose size covers addr.
  const Symbol* nearest = nullptr;
  for (int steps = 0; it != v.begin() && steps < 64; ++steps) {
    --it;
    if (it->function != function) continue;
    if (it->size && addr < it->addr + it->size) return &*it;
    if (!nearest && it->size == 0) nearest = &*it;
    if (it->size && !nearest) return nullptr;  // addr is past the end of the closest sized one
  }
  return nearest;
}
}  // namespace

const Symbol* SymbolTable::function_at(uint64_t addr) const {
  return containing(symbols_, addr, true);
}

const Symbol* SymbolTable::object_at(uint64_t addr) const {
  return containing(symbols_, addr, false);
}

std::vector<const Symbol*> SymbolTable::lookup(std::string_view name) const {
  std::vector<const Symbol*> out;
  // without_parameters() keeps a prefix of the name: only a demangled name that starts with
  // `name` is cut (the cut allocates; a lookup looks at every symbol of a module).
  for (const auto& s : symbols_)
    if (s.name == name || s.demangled == name ||
        (s.demangled.size() > name.size() && s.demangled.starts_with(name) &&
         without_parameters(s.demangled) == name))
      out.push_back(&s);
  return out;
}

namespace {
bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// Whether `word` occurs in `text` with no identifier character on either side.
bool has_word(std::string_view text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    size_t end = at + word.size();
    if ((at == 0 || !identifier_char(text[at - 1])) &&
        (end == text.size() || !identifier_char(text[end])))
      return true;
  }
  return false;
}
}  // namespace

bool SymbolTable::may_name_function(std::string_view name) const {
  if (!local_functions_) return true;
  size_t sep = name.rfind("::");
  std::string_view last = sep == std::string_view::npos ? name : name.substr(sep + 2);
  if (last.empty() || (last[0] >= '0' && last[0] <= '9') ||
      !std::all_of(last.begin(), last.end(), identifier_char))
    return true;  // an operator, a destructor, a template: not judged here
  for (const auto& s : symbols_)
    if (s.function && (has_word(s.name, last) || has_word(s.demangled, last))) return true;
  return false;
}

}  // namespace rwd
