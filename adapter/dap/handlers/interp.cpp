// rewind/interpreterStack: the Python or R frames of a thread, apart from its native stack
// ("interpreterFrames": "separate"), each with its locals. rewind/interpreterCode: the byte
// code a script frame runs, disassembled, with its current instruction.
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

void interpreter_code(DapContext& c, const dap::ScopesArguments& a, DapRequest& r) {
  c.debugger();
  FrameRef ref = c.frame(a.frame_id);
  if (ref.interp < 0)
    throw RequestError("frame " + std::to_string(a.frame_id) +
                       " is a native frame: its machine code is in the disassembly view");
  InterpCode code = c.scripts->code(ref.tid, size_t(ref.interp));
  json instructions = json::array();
  for (const InterpInstruction& i : code.instructions)
    instructions.push_back(
        {{"offset", i.offset}, {"opcode", i.opcode}, {"operands", i.operands}, {"line", i.line}});
  json body = {{"language", code.language},   {"function", code.function},
               {"format", code.format},       {"instructions", instructions},
               {"constants", code.constants}, {"text", format_interp_code(code)}};
  if (!code.file.empty()) body["source"] = {{"path", code.file}};
  if (code.current) body["currentOffset"] = *code.current;
  if (!code.note.empty()) body["note"] = code.note;
  r.respond(body);
}

}  // namespace rwd::handlers
