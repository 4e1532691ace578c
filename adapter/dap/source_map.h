// Where a trace's sources are on this machine when they are not where the program was built:
// path prefix substitutions between the paths of its debug information and the client's
// (DAP launch and attach arguments "sourceMap", as CodeLLDB names it, and "substitutePath",
// as Go's delve and gdb's `set substitute-path` do).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace rwd {

/// Ordered prefix substitutions, each "the build's directory" → "this machine's". A prefix
/// matches whole path components ("/build" matches "/build/a.c", not "/builder/a.c"); the
/// longest matching prefix wins.
class SourceMap {
 public:
  /// Adds `from` (a path as the debug information names it) → `to` (as here); both are
  /// normalized (normal_source_path). Throws RequestError for an empty or relative path.
  void add(const std::string& from, const std::string& to);
  /// The path here for a path of the debug information (unchanged when no prefix matches).
  std::string to_local(const std::string& built) const;
  /// The debug information's path for a path here (unchanged when no prefix matches).
  std::string to_built(const std::string& local) const;
  bool empty() const { return rules_.empty(); }

 private:
  /// `path` with the longest matching `first` of a rule replaced by its `second`.
  static std::string substitute(const std::string& path,
                                const std::vector<std::pair<std::string, std::string>>& rules);
  std::vector<std::pair<std::string, std::string>> rules_;     ///< built → local
  std::vector<std::pair<std::string, std::string>> reversed_;  ///< local → built
};

}  // namespace rwd
