// A code site: where a breakpoint is, independent of the process. The same instruction of
// a mapped file is one site in every process that maps the file, wherever each maps it.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/os/proc.h"

namespace rwd {

/// An instruction named by the file that holds it and its offset in that file (bytes), or,
/// for code in no file (anonymous memory: JIT code), by its runtime address.
struct CodeSite {
  std::string file;     ///< the mapped file as /proc/PID/maps names it; empty: an address
  uint64_t offset = 0;  ///< byte offset in `file`; the runtime address when `file` is empty
  auto operator<=>(const CodeSite&) const = default;
};

/// The site of runtime address `addr` in an address space whose mappings are `maps`: the
/// file and offset when a file mapping holds it, else the address itself.
CodeSite code_site(const std::vector<ProcMapping>& maps, uint64_t addr);

/// The runtime addresses of `site` in an address space whose mappings are `maps`: each
/// executable mapping of its file that covers its offset gives one (a file mapped twice
/// gives two). An address site gives itself, mapped or not. Code in a mapping that cannot
/// execute never runs, so it gets no breakpoint.
std::vector<uint64_t> site_addresses(const std::vector<ProcMapping>& maps, const CodeSite& site);

}  // namespace rwd
