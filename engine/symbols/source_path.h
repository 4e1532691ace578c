// Source file names as DWARF gives them and as users name them, made comparable the way
// gdb compares them: "." and ".." collapsed (out-of-source builds name "../src/a.c" against
// DW_AT_comp_dir), symbolic links resolved when the file exists, then a match by full path or
// by a path suffix at a '/'.
#pragma once

#include <string>

namespace rwd {

/// `path` with "." and ".." components and repeated '/' collapsed, lexically (no file
/// system access): "/p/build/../src/./a.c" → "/p/src/a.c". A relative path stays relative.
std::string normal_source_path(const std::string& path);

/// The real path of `path` (symbolic links and ".." resolved, realpath(3)) when it exists,
/// else normal_source_path(path).
std::string real_source_path(const std::string& path);

/// True when `path` names `file`: equal, or `file` is a suffix of `path` at a '/'
/// ("src/a.c" matches "/home/u/src/a.c"). Both should be normalized first.
bool path_matches(const std::string& path, const std::string& file);

}  // namespace rwd
