// The modules of a stopped process, found from its mappings, named as the dynamic loader
// names them (the r_debug link_map list, <link.h>), and kept across stops.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/symbols/module.h"
#include "engine/symbols/target.h"

namespace rwd {

/// All modules of one process. refresh() after the program may have mapped or unmapped
/// files (dlopen, exec); modules that stay mapped keep their loaded symbols.
class ModuleList {
 public:
  /// Re-reads the target's mappings and loads new modules. Files that are not ELF, or that
  /// cannot be read, are left out. Where the mappings are those of the last refresh and the
  /// loader's list named every library then, nothing more is read (a stop of a replay that
  /// maps nothing: its link_map walk is a read per field, and the files that are not ELF
  /// would be opened again).
  void refresh(Target& target);
  /// The module holding runtime address `addr`, nullptr when none.
  Module* module_at(uint64_t addr) const;
  const std::vector<std::shared_ptr<Module>>& modules() const { return modules_; }
  /// The runtime range [lo, hi) of the function symbol `name` in the first module that
  /// defines one ({0, 0} when none does).
  std::pair<uint64_t, uint64_t> function_range(const char* name) const;
  /// The main executable (the module holding AT_ENTRY), nullptr before exec.
  Module* executable() const { return exe_; }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
  Module* exe_ = nullptr;
  std::vector<ProcMapping> seen_;  ///< the mappings of the last refresh
  bool all_named_ = false;         ///< its link_map walk named every module but the executable
};

}  // namespace rwd
