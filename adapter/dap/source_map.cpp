#include "adapter/dap/source_map.h"

#include "adapter/dap/dap_args.h"
#include "engine/symbols/source_path.h"

namespace rwd {

void SourceMap::add(const std::string& from, const std::string& to) {
  for (const std::string* p : {&from, &to})
    if (p->empty() || (*p)[0] != '/')
      throw RequestError("a source map entry needs absolute paths, not \"" + *p + "\"");
  std::string f = normal_source_path(from), t = normal_source_path(to);
  rules_.emplace_back(f, t);
  reversed_.emplace_back(t, f);
}

std::string SourceMap::substitute(const std::string& path,
                                  const std::vector<std::pair<std::string, std::string>>& rules) {
  const std::pair<std::string, std::string>* best = nullptr;
  for (const auto& r : rules) {
    const std::string& prefix = r.first;
    bool matches = path.compare(0, prefix.size(), prefix) == 0 &&
                   (path.size() == prefix.size() || path[prefix.size()] == '/' || prefix == "/");
    if (matches && (!best || prefix.size() > best->first.size())) best = &r;
  }
  if (!best) return path;
  std::string rest = path.substr(best->first.size());
  if (best->first == "/") rest = "/" + rest;
  return best->second == "/" && !rest.empty() ? rest : best->second + rest;
}

std::string SourceMap::to_local(const std::string& built) const {
  return rules_.empty() ? built : substitute(normal_source_path(built), rules_);
}

std::string SourceMap::to_built(const std::string& local) const {
  return reversed_.empty() ? local : substitute(normal_source_path(local), reversed_);
}

}  // namespace rwd
