// Python and R frames in the DAP session (engine/interp): merged into stackTrace in place of
// the interpreter's eval-loop frames ("interpreterFrames": "merged", the default, like
// py-spy --native), or listed apart by rewind/interpreterStack ("separate").
#include <set>

#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_session.h"
#include "engine/debugger/timeline_target.h"

namespace rwd {

using nlohmann::json;

namespace {

/// The native function that runs Python frames (one call per entry frame and those above it).
constexpr const char* kEvalLoop = "_PyEval_EvalFrameDefault";

}  // namespace

const std::vector<InterpFrame>& DapSession::interp_stack(pid_t tid) {
  auto it = interp_stacks_.find(tid);
  if (it != interp_stacks_.end()) return it->second;
  std::vector<InterpFrame>& out = interp_stacks_[tid];
  if (interp_mode_ == "off") return out;
  Debugger& d = debugger();
  InterpMemory mem(d.target(tid));
  size_t modules = d.modules().modules().size();
  if (modules != interp_modules_) {  // a library came or went: look again
    interp_modules_ = modules;
    python_.reset();
    r_.reset();
    try {
      python_ = PythonReader::find(d.modules(), mem);
      if (!python_) r_ = RReader::find(d.modules(), mem);
      if (!python_ && !r_) interp_modules_ = SIZE_MAX;  // maybe not initialized yet
    } catch (const InterpReadError&) {
      interp_modules_ = SIZE_MAX;  // not initialized far enough yet
    } catch (const Error& e) {
      event("output",
            {{"category", "console"}, {"output", std::string("rewind: ") + e.what() + "\n"}});
    }
  }
  if (python_) out = python_->stack(mem, tid);
  if (r_) out = r_->stack(mem);
  return out;
}

std::vector<DapSession::StackEntry> DapSession::merged_stack(pid_t tid) {
  const std::vector<InterpFrame>& py = interp_stack(tid);
  std::vector<StackEntry> out;
  if (py.empty()) return out;
  const auto& native = debugger().stack(tid);
  const Module* interpreter = nullptr;  // the module with the eval loop
  // Physical frames of eval-loop calls. With the interpreter's debug info (pyenv's builds
  // keep it), such a frame also shows the functions inlined into the loop
  // (_PyFrame_StackPush [inlined]) before it: they are part of the same call.
  std::set<size_t> eval_calls;
  for (const StackFrame& f : native)
    if (f.function == kEvalLoop && !f.inlined) {
      interpreter = f.module;
      eval_calls.insert(f.physical);
    }
  if (r_) {  // R: every R frame where libR's frames begin, and no libR frame after that
    bool placed = false;
    for (size_t i = 0; i < native.size(); ++i) {
      const StackFrame& f = native[i];
      bool in_r = f.module && f.module->path().find("libR.so") != std::string::npos;
      if (in_r && !placed) {
        for (size_t k = 0; k < py.size(); ++k) out.push_back({i, int(k)});
        placed = true;
      }
      if (!in_r) out.push_back({i, -1});
    }
    if (!placed)
      for (size_t k = 0; k < py.size(); ++k)
        out.push_back({native.empty() ? 0 : native.size() - 1, int(k)});
    return out;
  }
  size_t next = 0;  // the next Python frame to place
  for (size_t i = 0; i < native.size(); ++i) {
    const StackFrame& f = native[i];
    if (eval_calls.count(f.physical)) {
      if (f.inlined) continue;  // shown as the call's Python frames, placed at the loop's entry
      if (next < py.size()) {
        // This call runs the Python frames down to (and including) the next entry frame.
        do {
          out.push_back({i, int(next)});
        } while (!py[next++].entry && next < py.size());
        continue;
      }
    }
    // Interpreter internals between Python frames are left out; the native frames the
    // program stopped in (before the first Python frame) and other modules' stay.
    if (next > 0 && interpreter && f.module == interpreter) continue;
    out.push_back({i, -1});
  }
  for (; next < py.size(); ++next)  // the native stack ended early
    out.push_back({native.empty() ? 0 : native.size() - 1, int(next)});
  return out;
}

bool DapSession::python_on_top(pid_t tid) {
  if (interp_mode_ != "merged") return false;
  std::vector<StackEntry> entries = merged_stack(tid);
  return python_ && !entries.empty() && entries[0].interp >= 0 &&
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
  if (python_) body["interpreter"] = "CPython " + python_->version();
  if (r_) body["interpreter"] = "GNU R";
  respond(req, body);
}

}  // namespace rwd
