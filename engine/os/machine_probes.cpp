// Machine probes kept for the boot (machine_probes.h). The file holds one "name 0|1" line per
// probe; it is rewritten whole (a temporary file renamed into place) when a probe is added.
#include "engine/os/machine_probes.h"

#include <fstream>
#include <map>
#include <sstream>

#include "engine/os/cache_files.h"

namespace rwd {

namespace {

/// The boot id's 36 characters, or "" when it cannot be read or looks wrong. Read into an
/// array: `f >> id` into a std::string made GCC 12 warn wrongly (-Warray-bounds).
std::string boot_id() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  char id[36];
  if (!f.read(id, sizeof id) || (f.peek() != '\n' && f.peek() != EOF)) return "";
  for (char c : id)
    if (!(isxdigit(static_cast<unsigned char>(c)) || c == '-')) return "";
  return std::string(id, sizeof id);
}

std::map<std::string, bool> read_answers(const std::string& path) {
  std::map<std::string, bool> out;
  std::ifstream f(path);
  std::string line;
  for (int n = 0; n < 64 && std::getline(f, line); ++n) {
    std::istringstream in(line);
    std::string name;
    int v = -1;
    if (in >> name >> v && (v == 0 || v == 1)) out[name] = v == 1;
  }
  return out;
}

}  // namespace

bool machine_probe(const std::string& name, const std::function<bool()>& probe) {
  std::string root = rewind_cache_dir(), id = boot_id();
  if (root.empty() || id.empty()) return probe();
  std::string path = root + "/machine-" + id;
  std::map<std::string, bool> answers = read_answers(path);
  if (auto it = answers.find(name); it != answers.end()) return it->second;
  bool v = probe();
  answers[name] = v;
  std::string text;
  for (const auto& [n, a] : answers) text += n + (a ? " 1\n" : " 0\n");
  replace_file(path, text);  // best effort: without it, the next rewind probes again
  return v;
}

}  // namespace rwd
