// rewind/interpreterStack: the Python or R frames of a thread, apart from its native stack
// ("interpreterFrames": "separate"), each with its locals.
#include "adapter/dap/handlers/dap_handlers.h"

namespace rwd::handlers {

using nlohmann::json;

void interpreter_stack(DapContext& c, const dap::ThreadArguments& a, DapRequest& r) {
  c.debugger();
  pid_t tid = c.thread(a.thread_id);
  const std::vector<InterpFrame>& frames = c.interp_stack(tid);
  json out = json::array();
  for (size_t i = 0; i < frames.size(); ++i) {
    json j = c.interp_frame_json(frames[i], c.refs.add_frame({tid, 0, int(i)}));
    j["language"] = frames[i].language;
    j["variablesReference"] = c.refs.add_variables({VarRef::InterpLocals, tid, i, {}});
    out.push_back(j);
  }
  json body = {{"frames", out}};
  if (const Interpreter* in = c.interp_mode == "off" ? nullptr : c.scripts->interpreter(tid))
    body["interpreter"] = in->name();
  r.respond(body);
}

}  // namespace rwd::handlers
