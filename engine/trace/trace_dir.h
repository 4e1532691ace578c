// Where traces live and how they are named (rr's conventions): $REWIND_TRACE_DIR, else
// $XDG_DATA_HOME/rewind, else ~/.local/share/rewind; each trace is NAME-N with a
// `latest-trace` symlink to the newest.
#pragma once

#include <string>
#include <vector>

namespace rwd {

/// The directory holding traces (created if missing). Throws SystemError.
std::string traces_root();

/// Creates a fresh trace directory root/NAME-N (N one more than the largest existing) and
/// returns its path. `name` is the program's base name.
std::string create_trace_dir(const std::string& root, const std::string& name);

/// True when `dir` is an existing directory with no entries (`record -o` may write there).
bool is_empty_dir(const std::string& dir);

/// Points root/latest-trace at `dir` (atomically replaced): by name when `dir` lies in
/// `root`, else by absolute path.
void set_latest_trace(const std::string& root, const std::string& dir);

/// Resolves a user's TRACE argument: empty means latest-trace; an existing path is used as
/// is; otherwise a name under the traces root. Throws Error with a hint when nothing matches.
std::string resolve_trace(const std::string& arg);

/// resolve_trace for a client that may only open traces inside `root` (a `rewind dap
/// --listen` server): a name or a path relative to root (an absolute path is taken as is),
/// whose real path, symbolic links and ".." resolved, must be a trace directory inside
/// root. Throws Error, with the same message for a path that is missing, outside root or
/// not a trace (so that answers reveal nothing of the file system).
std::string resolve_trace_within(const std::string& arg, const std::string& root);

/// Names (not paths) of the trace directories under root, sorted by name.
std::vector<std::string> list_traces(const std::string& root);

}  // namespace rwd
