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
