// Python and R frames in the DAP session (engine/interp): merged into stackTrace in place of
// the interpreter's eval-loop frames ("interpreterFrames": "merged", the default, like
// py-spy --native), or listed apart by rewind/interpreterStack ("separate").
#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_session.h"
#include "engine/debugger/timeline_target.h"

namespace rwd {

using nlohmann::json;

const std::vector<InterpFrame>& DapSession::interp_stack(pid_t tid) {
  static const std::vector<InterpFrame> none;
  if (interp_mode_ == "off") return none;
  debugger();
  const std::vector<InterpFrame>& out = scripts_->stack(tid);
  if (auto warning = scripts_->take_warning())
    event("output", {{"category", "console"}, {"output", "rewind: " + *warning + "\n"}});
  return out;
}

std::vector<MixedFrame> DapSession::merged_stack(pid_t tid) {
  if (interp_stack(tid).empty()) return {};
  return scripts_->mixed(tid);
}

bool DapSession::python_on_top(pid_t tid) {
  if (interp_mode_ != "merged") return false;
  std::vector<MixedFrame> entries = merged_stack(tid);
  const Interpreter* in = scripts_->interpreter(tid);
  return in && in->python() && !entries.empty() && entries[0].interp >= 0 &&
         interp_stack(tid)[size_t(entries[0].interp)].error.empty();
}

json DapSession::interp_frame_json(const InterpFrame& f, int id) {
  json j = {{"id", id},
            {"name", f.error.empty() ? f.function : f.error},
            {"line", f.line ? line_out(uint32_t(f.line)) : 0},
            {"column", f.line ? 1 : 0}};
  if (!f.file.empty() && f.file[0] != '<')
    j["source"] = source_json(f.file);
  else
    j["presentationHint"] = "subtle";
  return j;
}

const InterpFrame* DapSession::interp_frame(const FrameRef& ref) {
  if (ref.interp < 0) return nullptr;
  return &interp_stack(ref.tid).at(size_t(ref.interp));
}

void DapSession::interpreter_stack(const json& req) {
  debugger();
  pid_t tid = thread_arg(req);
  const std::vector<InterpFrame>& py = interp_stack(tid);
  json frames = json::array();
  for (size_t i = 0; i < py.size(); ++i) {
    frames_.push_back({tid, 0, int(i)});
    json j = interp_frame_json(py[i], int(frames_.size()));
    j["language"] = py[i].language;
    j["variablesReference"] = ref_for({VarRef::InterpLocals, tid, i, {}});
    frames.push_back(j);
  }
  json body = {{"frames", frames}};
  if (const Interpreter* in = interp_mode_ == "off" ? nullptr : scripts_->interpreter(tid))
    body["interpreter"] = in->name();
  respond(req, body);
}

}  // namespace rwd
