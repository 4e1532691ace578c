// Python and R frames in the DAP session (engine/interp): merged into stackTrace in place of
// the interpreter's eval-loop frames ("interpreterFrames": "merged", the default, like
// py-spy --native), or listed apart by rewind/interpreterStack ("separate").
#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_context.h"

namespace rwd {

using nlohmann::json;

const std::vector<InterpFrame>& DapContext::interp_stack(pid_t tid) {
  static const std::vector<InterpFrame> none;
  if (interp_mode == "off") return none;
  debugger();
  const std::vector<InterpFrame>& frames = scripts->stack(tid);
  if (auto warning = scripts->take_warning()) out.output("console", "rewind: " + *warning + "\n");
  return frames;
}

std::vector<MixedFrame> DapContext::merged_stack(pid_t tid) {
  if (interp_stack(tid).empty()) return {};
  return scripts->mixed(tid);
}

const InterpFrame* DapContext::script_on_top(pid_t tid) {
  if (interp_mode != "merged") return nullptr;
  std::vector<MixedFrame> entries = merged_stack(tid);
  if (entries.empty() || entries[0].interp < 0 || !scripts->interpreter(tid)) return nullptr;
  const InterpFrame& top = interp_stack(tid)[size_t(entries[0].interp)];
  return top.error.empty() ? &top : nullptr;
}

dap::StackFrame DapContext::interp_frame_json(const InterpFrame& f, int id) {
  dap::StackFrame j{id, f.error.empty() ? f.function : f.error,
                    f.line ? line_out(uint32_t(f.line)) : 0, f.line ? 1 : 0};
  if (!f.file.empty() && f.file[0] != '<')
    j.source = source(f.file);
  else
    j.presentation_hint = "subtle";
  return j;
}

const InterpFrame* DapContext::interp_frame(const FrameRef& ref) {
  if (ref.interp < 0) return nullptr;
  return &interp_stack(ref.tid).at(size_t(ref.interp));
}

}  // namespace rwd
