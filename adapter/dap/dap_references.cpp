#include "adapter/dap/dap_references.h"

#include "adapter/dap/dap_args.h"

namespace rwd {

int StopReferences::add_frame(FrameRef f) {
  frames_.push_back(f);
  return int(frames_.size());
}

const FrameRef& StopReferences::frame(int64_t id) const {
  if (id < 1 || size_t(id) > frames_.size())
    throw StaleReferenceError("unknown frameId " + std::to_string(id) +
                              " (frame ids last until the program moves)");
  return frames_[size_t(id) - 1];
}

int StopReferences::add_variables(VarRef v) {
  vars_.push_back(std::move(v));
  return int(vars_.size());
}

const VarRef& StopReferences::variables(int64_t id) const {
  if (id < 1 || size_t(id) > vars_.size())
    throw StaleReferenceError("unknown variablesReference " + std::to_string(id) +
                              " (references last until the program moves)");
  return vars_[size_t(id) - 1];
}

int SourceReferences::name(const std::string& path, bool serve) {
  named_.insert(path);
  if (!serve) return 0;
  auto [it, added] = refs_.emplace(path, int(paths_.size()) + 1);
  if (added) paths_.push_back(path);
  return it->second;
}

const std::string& SourceReferences::path(int64_t ref) const {
  if (ref < 1 || size_t(ref) > paths_.size())
    throw RequestError("unknown sourceReference " + std::to_string(ref));
  return paths_[size_t(ref) - 1];
}

}  // namespace rwd
