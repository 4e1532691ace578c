#include "adapter/dap/dap_references.h"

#include "adapter/dap/dap_args.h"

namespace rwd {

namespace {
/// Numbers start again from 1 past this (DAP's references are 32-bit and positive).
constexpr int64_t kMaxReference = int64_t(1) << 30;
}  // namespace

void StopReferences::clear() {
  frame_base_ += int64_t(frames_.size());
  var_base_ += int64_t(vars_.size());
  if (frame_base_ > kMaxReference) frame_base_ = 0;
  if (var_base_ > kMaxReference) var_base_ = 0;
  frames_.clear();
  vars_.clear();
}

int StopReferences::add_frame(FrameRef f) {
  frames_.push_back(f);
  return int(frame_base_ + int64_t(frames_.size()));
}

const FrameRef& StopReferences::frame(int64_t id) const {
  if (id <= frame_base_ || id - frame_base_ > int64_t(frames_.size()))
    throw StaleReferenceError("unknown frameId " + std::to_string(id) +
                              " (frame ids last until the program moves)");
  return frames_[size_t(id - frame_base_ - 1)];
}

int StopReferences::add_variables(VarRef v) {
  vars_.push_back(std::move(v));
  return int(var_base_ + int64_t(vars_.size()));
}

const VarRef& StopReferences::variables(int64_t id) const {
  if (id <= var_base_ || id - var_base_ > int64_t(vars_.size()))
    throw StaleReferenceError("unknown variablesReference " + std::to_string(id) +
                              " (references last until the program moves)");
  return vars_[size_t(id - var_base_ - 1)];
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
