#include "adapter/dap/recorded_run.h"

#include "adapter/dap/dap_channel.h"

namespace rwd {

namespace {

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

}  // namespace

RecordedRun::RecordedRun(std::string path) : path_(std::move(path)) {
  stat_ok_ = ::stat(path_.c_str(), &recorded_) == 0;
}

void RecordedRun::keep(const std::string& category, const std::string& text) {
  if (truncated_) return;
  if (bytes_ + text.size() > kMaxOutput) {
    truncated_ = true;
    return;
  }
  bytes_ += text.size();
  if (!output_.empty() && output_.back().first == category)
    output_.back().second += text;
  else
    output_.emplace_back(category, text);
}

void RecordedRun::show(DapChannel& out, const std::string& title) const {
  if (output_.empty()) return;
  out.output_group_start(title);
  for (const auto& [category, text] : output_) out.output(category, text);
  if (truncated_)
    out.output("console", "rewind: (the output past its first " + std::to_string(kMaxOutput >> 20) +
                              " MiB is not shown again)\n");
  out.output_group_end();
}

bool RecordedRun::program_changed() const {
  struct stat now {};
  if (::stat(path_.c_str(), &now) != 0) return stat_ok_;
  return !stat_ok_ || !same_file(recorded_, now);
}

}  // namespace rwd
