// The recording a Record & Debug session made: what it printed to the debug console, kept to
// show again after a restart (VS Code clears its console before it sends DAP's restart), and
// the program file as it was, to tell the user when it has been rebuilt since.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace rwd {

class DapChannel;

/// Output kept from a recording, and the recorded program's file identity.
class RecordedRun {
 public:
  /// The most output kept, in bytes; past it the rest is left out, with a note.
  static constexpr size_t kMaxOutput = 1 << 20;

  /// Notes the program file at `path` (its size, modification time and inode, stat(2)), as it
  /// was when the recording ended.
  explicit RecordedRun(std::string path);
  /// Keeps an output event's text (`category`: "stdout", "stderr"...), up to kMaxOutput bytes.
  void keep(const std::string& category, const std::string& text);
  /// Shows the kept output again in `out`, in an output group headed `title` (DAP
  /// OutputEvent's "group"), and a note when some was left out. Nothing when none was kept.
  void show(DapChannel& out, const std::string& title) const;
  /// Whether the program file has changed since the recording (rebuilt, replaced, removed).
  bool program_changed() const;
  const std::string& program() const { return path_; }

 private:
  std::string path_;
  struct stat recorded_ {};
  bool stat_ok_ = false;
  std::vector<std::pair<std::string, std::string>> output_;  ///< (category, text), in order
  size_t bytes_ = 0;
  bool truncated_ = false;
};

}  // namespace rwd
