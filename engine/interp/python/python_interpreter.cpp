// CPython as an Interpreter (interpreter.h): its frames merge into the native stack at the
// eval loop's calls, one call per run of frames ending at an entry frame.
#include <set>

#include "engine/interp/interpreter.h"
#include "engine/interp/python/python_code.h"
#include "engine/interp/python/python_frames.h"

namespace rwd {

namespace {

/// The native function that runs Python frames (one call per entry frame and those above it).
constexpr const char* kEvalLoop = "_PyEval_EvalFrameDefault";

class PythonInterpreter : public Interpreter {
 public:
  explicit PythonInterpreter(PythonReader reader) : reader_(std::move(reader)) {}
  std::string name() const override { return "CPython " + reader_.version(); }
  std::vector<InterpFrame> stack(InterpMemory& mem, pid_t tid, StackDepth depth) const override {
    return reader_.stack(mem, tid, depth);
  }
  const PythonReader* python() const override { return &reader_; }
  InterpCode code(InterpMemory& mem, const InterpFrame& frame) const override {
    return python_frame_code(mem, reader_, frame);
  }

  std::vector<MixedFrame> mix(const std::vector<StackFrame>& native,
                              const std::vector<InterpFrame>& py) const override {
    std::vector<MixedFrame> out;
    if (py.empty()) return out;
    const Module* interpreter = nullptr;  // the module with the eval loop
    // Physical frames of eval-loop calls. With the interpreter's debug info (pyenv's builds
    // keep it), such a frame also shows the functions inlined into the loop
    // (_PyFrame_StackPush [inlined]) before it: they are part of the same call.
    std::set<size_t> eval_calls;
    for (const StackFrame& f : native)
      if (!f.inlined &&
          (f.function == kEvalLoop || reader_.in_eval_loop(f.return_address ? f.pc - 1 : f.pc))) {
        interpreter = f.module;
        eval_calls.insert(f.physical);
      }
    size_t next = 0;  // the next Python frame to place
    for (size_t i = 0; i < native.size(); ++i) {
      const StackFrame& f = native[i];
      if (eval_calls.count(f.physical)) {
        if (f.inlined) continue;  // shown as the call's Python frames, placed at the entry
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

 private:
  PythonReader reader_;
};

}  // namespace

std::unique_ptr<Interpreter> find_python_interpreter(const ModuleList& modules, InterpMemory& mem) {
  if (auto py = PythonReader::find(modules, mem))
    return std::make_unique<PythonInterpreter>(std::move(*py));
  return nullptr;
}

}  // namespace rwd
