#include "trace_dir.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>

#include "engine/errors.h"
#include "engine/trace/trace_files.h"

namespace rwd {

namespace {
bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> dir_entries(const std::string& root) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(root.c_str())) {
    while (dirent* e = ::readdir(d)) out.push_back(e->d_name);
    ::closedir(d);
  }
  return out;
}

void mkdir_p(const std::string& path) {
  std::string cur;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    cur = path.substr(0, j);
    if (!cur.empty() && ::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      throw_errno("mkdir " + cur);
    i = j + 1;
  }
}
}  // namespace

std::string traces_root() {
  std::string root;
  if (const char* d = getenv("REWIND_TRACE_DIR"); d && *d) {
    root = d;
  } else if (const char* x = getenv("XDG_DATA_HOME"); x && *x) {
    root = std::string(x) + "/rewind";
  } else {
    const char* home = getenv("HOME");
    if (!home || !*home)
      throw Error("cannot find the trace directory: set HOME or REWIND_TRACE_DIR");
    root = std::string(home) + "/.local/share/rewind";
  }
  mkdir_p(root);
  return root;
}

std::string create_trace_dir(const std::string& root, const std::string& name) {
  int next = 0;
  for (const auto& t : dir_entries(root)) {
    if (t.size() > name.size() + 1 && t.compare(0, name.size(), name) == 0 &&
        t[name.size()] == '-') {
      char* end = nullptr;
      long n = strtol(t.c_str() + name.size() + 1, &end, 10);
      if (end && *end == '\0' && n >= next && n < INT_MAX) next = int(n) + 1;
    }
  }
  for (;; ++next) {
    std::string dir = root + "/" + name + "-" + std::to_string(next);
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (errno != EEXIST) throw_errno("mkdir " + dir);
  }
}

bool is_empty_dir(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) && std::filesystem::is_empty(dir, ec) && !ec;
}

void set_latest_trace(const std::string& root, const std::string& dir) {
  std::string link = root + "/latest-trace";
  std::string tmp = link + ".tmp" + std::to_string(getpid());
  ::unlink(tmp.c_str());
  // A trace under the root by its name (the root can move); one elsewhere (record -o) by its
  // absolute path.
  std::error_code ec;
  auto abs_dir = std::filesystem::weakly_canonical(dir, ec);
  auto abs_root = std::filesystem::weakly_canonical(root, ec);
  std::string target =
      abs_dir.parent_path() == abs_root ? abs_dir.filename().string() : abs_dir.string();
  if (::symlink(target.c_str(), tmp.c_str()) != 0) throw_errno("symlink " + tmp);
  if (::rename(tmp.c_str(), link.c_str()) != 0) throw_errno("rename " + tmp);
}

std::string resolve_trace(const std::string& arg) {
  std::string root = traces_root();
  if (arg.empty()) {
    std::string link = root + "/latest-trace";
    char buf[PATH_MAX];
    if (!is_dir(link))
      throw Error("no trace found in " + root + ": record one with `rewind record PROGRAM`");
    ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return link;
    buf[n] = '\0';
    return buf[0] == '/' ? std::string(buf) : root + "/" + buf;
  }
  if (is_dir(arg)) return arg;
  if (arg.find('/') == std::string::npos && is_dir(root + "/" + arg)) return root + "/" + arg;
  throw Error("no trace named '" + arg + "' (see `rewind ls`)");
}

std::string resolve_trace_within(const std::string& arg, const std::string& root) {
  auto real = [](const std::string& p) {
    char buf[PATH_MAX];
    return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
  };
  std::string inside = real(root);
  std::string path;
  if (arg.empty()) {
    path = real(root + "/latest-trace");
  } else {
    path = real(arg[0] == '/' ? arg : root + "/" + arg);
  }
  if (inside.empty() || path.size() <= inside.size() + 1 ||
      path.compare(0, inside.size() + 1, inside + "/") != 0 || !is_dir(path) ||
      ::access((path + "/" + kVersionFile).c_str(), F_OK) != 0)
    throw Error(arg.empty() ? "no latest trace among this server's traces (" + root + ")"
                            : "no trace '" + arg + "' among this server's traces (" + root +
                                  "; a server started with --allow-any-trace opens others)");
  return path;
}

std::vector<std::string> list_traces(const std::string& root) {
  std::vector<std::string> out;
  DIR* d = ::opendir(root.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == ".." || n == "latest-trace") continue;
    std::string p = root + "/" + n;
    if (is_dir(p) && !::access((p + "/" + kVersionFile).c_str(), F_OK)) out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace rwd
