#include "engine/symbols/debug_file_locator.h"

#include <unistd.h>

#include <memory>

#include "engine/errors.h"

namespace rwd {

namespace {

std::string dir_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// True when `candidate` is a readable ELF file with DWARF and the build-id `want` (any
/// build-id when `want` is empty).
bool usable(const std::string& candidate, const std::string& want) {
  if (::access(candidate.c_str(), R_OK) != 0) return false;
  try {
    auto img = ElfImage::open(candidate);
    return img->has_debug_info() && (want.empty() || img->build_id() == want);
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

std::string find_debug_file(const ElfImage& image, const std::string& original_path,
                            const std::vector<std::string>& debug_roots) {
  if (image.has_debug_info()) return image.path();
  const std::string& id = image.build_id();
  if (id.size() > 2) {
    for (const auto& root : debug_roots) {
      std::string p = root + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
      if (usable(p, id)) return p;
    }
  }
  if (!image.debuglink()) return "";
  const DebugLink& link = *image.debuglink();
  std::vector<std::string> candidates;
  for (const std::string& dir : {dir_of(original_path), dir_of(image.path())}) {
    candidates.push_back(dir + "/" + link.name);
    candidates.push_back(dir + "/.debug/" + link.name);
    for (const auto& root : debug_roots) candidates.push_back(root + dir + "/" + link.name);
  }
  for (const auto& c : candidates) {
    if (c == image.path() || !usable(c, id.empty() ? "" : id)) continue;
    // Without a build-id the CRC is the only identity check (gdb does the same).
    if (!id.empty() || file_crc32(c) == link.crc) return c;
  }
  return "";
}

}  // namespace rwd
