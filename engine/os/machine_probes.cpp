// Machine probes kept for the boot (machine_probes.h). The file holds one "name 0|1" line per
// probe; it is rewritten whole (a temporary file renamed into place) when a probe is added.
#include "engine/os/machine_probes.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/arch/emulated_sites_cache.h"

namespace rwd {

namespace {

/// The boot id's 36 characters, or "" when it cannot be read or looks wrong.
std::string boot_id() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!(f >> id) || id.size() != 36) return "";
  for (char c : id)
    if (!(isxdigit(static_cast<unsigned char>(c)) || c == '-')) return "";
  return id;
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
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    for (const auto& [n, a] : answers) out << n << ' ' << (a ? 1 : 0) << '\n';
    if (!out) {
      ::unlink(tmp.c_str());
      return v;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) ::unlink(tmp.c_str());
  return v;
}

}  // namespace rwd
