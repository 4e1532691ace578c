// Finding the separate debug file of a stripped ELF file, as gdb does ("Separate Debug
// Files" in the gdb manual): by build-id under /usr/lib/debug/.build-id, then by
// .gnu_debuglink next to the file, in its .debug/ directory, and under /usr/lib/debug.
#pragma once

#include <string>
#include <vector>

#include "engine/symbols/elf_image.h"

namespace rwd {

/// Returns the path of the file holding `image`'s DWARF: the image itself when it has
/// .debug_info, else a separate debug file whose build-id matches (or whose CRC matches the
/// debuglink), else "". `original_path` is where the program had the file (for debuglink's
/// relative directories; it may differ from image.path() for a trace's saved copy).
/// `debug_roots` are the global debug directories, /usr/lib/debug by default.
std::string find_debug_file(const ElfImage& image, const std::string& original_path,
                            const std::vector<std::string>& debug_roots = {"/usr/lib/debug"});

}  // namespace rwd
