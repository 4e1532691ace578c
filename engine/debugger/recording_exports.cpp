#include "engine/debugger/recording_exports.h"

#include <filesystem>
#include <system_error>

#include "engine/errors.h"
#include "engine/symbols/elf_image.h"

namespace rwd {

bool RecordingExports::exports_function(const std::string& name) {
  if (!functions_) load();
  return functions_->count(name) != 0;
}

namespace {

/// Whether ELF file `path` defines the global function `name`; false when it is no ELF
/// file or unreadable.
bool defines_function(const std::string& path, const std::string& name) {
  try {
    std::unique_ptr<ElfImage> elf = ElfImage::open(path);
    for (const ElfSymbol& s : elf->symbols())
      if (s.function && s.global && s.name == name) return true;
  } catch (const Error&) {
  }
  return false;
}

}  // namespace

bool RecordingExports::runs_r() {
  if (runs_r_) return *runs_r_;
  runs_r_ = false;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    // Saved files keep their base name, with "-" and a number added (libR.so-4).
    std::string name = entry.path().filename().string();
    if (name.rfind("libR.so", 0) != 0 && name.rfind("R-", 0) != 0) continue;
    if (entry.is_regular_file(ec) && defines_function(entry.path().string(), "Rf_errorcall"))
      return *(runs_r_ = true);
  }
  return false;
}

void RecordingExports::load() {
  functions_.emplace();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    try {
      std::unique_ptr<ElfImage> elf = ElfImage::open(entry.path().string());
      for (const ElfSymbol& s : elf->symbols())
        if (s.function && s.global) functions_->insert(s.name);
    } catch (const Error&) {
      // Not an ELF file (a mapped data file), or unreadable: it exports nothing.
    }
  }
}

}  // namespace rwd
