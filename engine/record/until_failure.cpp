#include "until_failure.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "engine/trace/trace_dir.h"

namespace rwd {

namespace {
void remove_tree(const std::string& dir) {
  auto rm = [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); };
  nftw(dir.c_str(), rm, 16, FTW_DEPTH | FTW_PHYS);
}
}  // namespace

UntilFailureResult record_until_failure(const RecordOptions& opts, int max_runs) {
  UntilFailureResult out;
  std::string previous;
  for (out.runs = 1; out.runs <= max_runs; ++out.runs) {
    out.last = record(opts);
    if (!previous.empty() && previous != out.last.trace_dir) remove_tree(previous);
    if (out.last.exit_code != 0) {
      out.failed = true;
      return out;
    }
    previous = out.last.trace_dir;
    if (!opts.output_dir.empty() && out.runs < max_runs) remove_tree(opts.output_dir);
  }
  out.runs = max_runs;
  return out;
}

}  // namespace rwd
