// rewind's cache directory and how files are written there: answers kept between runs of
// rewind that are costly to find again (the rdtsc/cpuid search, machine probes). Everything
// there can be deleted at any time; a missing or unwritable cache only costs the work again.
#pragma once

#include <string>

namespace rwd {

/// The directory of rewind's caches: $REWIND_CACHE_DIR, else $XDG_CACHE_HOME/rewind, else
/// $HOME/.cache/rewind (the XDG Base Directory Specification); empty when none is set.
std::string rewind_cache_dir();

/// Replaces file `path` with `contents`, making its directory when missing: written to a
/// temporary file beside it and renamed into place (rename(2) is atomic, so concurrent
/// rewinds never see half a file). Returns false, leaving nothing behind, when any step fails.
bool replace_file(const std::string& path, const std::string& contents);

}  // namespace rwd
