// The functions a recording's executables and libraries export: what decides whether a
// function breakpoint's name is a native function or a script's (an R program's functions
// have plain names, as C functions do).
#pragma once

#include <optional>
#include <string>
#include <unordered_set>

namespace rwd {

/// The global functions of every ELF file a recording mapped (the trace's files/ directory,
/// trace-format.md), read once, on first use.
class RecordingExports {
 public:
  /// `files_dir`: the trace's files/ directory.
  explicit RecordingExports(std::string files_dir) : dir_(std::move(files_dir)) {}

  /// Whether some mapped ELF file defines a global (or weak) function `name` in .dynsym or
  /// .symtab. Files that are not ELF, or unreadable, are skipped.
  bool exports_function(const std::string& name);
  /// Whether the recording ran GNU R: a mapped file saved as libR.so-N, or an executable
  /// saved as R-N (an R built without the shared library), exports R's Rf_errorcall. Reads
  /// only those files' symbols (a native program's recording has none), once.
  bool runs_r();

 private:
  void load();

  std::string dir_;
  std::optional<std::unordered_set<std::string>> functions_;
  std::optional<bool> runs_r_;
};

}  // namespace rwd
