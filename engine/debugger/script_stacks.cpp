// Script stacks at a stop (script_stacks.h).
#include "engine/debugger/script_stacks.h"

#include "engine/debugger/debugger.h"

namespace rwd {

const Interpreter* ScriptStacks::interpreter(pid_t tid) {
  InterpMemory mem(debugger_.target(tid));
  return interpreter(mem);
}

const Interpreter* ScriptStacks::interpreter(InterpMemory& mem) {
  size_t modules = debugger_.modules().modules().size();
  if (modules == modules_seen_) return interpreter_.get();
  modules_seen_ = modules;  // a library came or went: look again
  interpreter_.reset();
  try {
    interpreter_ = find_interpreter(debugger_.modules(), mem);
    if (!interpreter_) modules_seen_ = SIZE_MAX;  // maybe not initialized yet
  } catch (const InterpReadError&) {
    modules_seen_ = SIZE_MAX;  // not initialized far enough yet
  } catch (const Error& e) {
    warning_ = e.what();
  }
  return interpreter_.get();
}

const std::vector<InterpFrame>& ScriptStacks::stack(pid_t tid) {
  auto it = stacks_.find(tid);
  if (it != stacks_.end()) return it->second;
  std::vector<InterpFrame>& out = stacks_[tid];
  InterpMemory mem(debugger_.target(tid));  // one page cache for the search and the read
  if (const Interpreter* in = interpreter(mem)) out = in->stack(mem, tid);
  return out;
}

InterpCode ScriptStacks::code(pid_t tid, size_t index) {
  const std::vector<InterpFrame>& script = stack(tid);
  if (index >= script.size() || !interpreter_) throw Error("no such script frame here");
  InterpMemory mem(debugger_.target(tid));
  return interpreter_->code(mem, script[index]);
}

std::vector<MixedFrame> ScriptStacks::mixed(pid_t tid) {
  const std::vector<InterpFrame>& script = stack(tid);
  if (script.empty() || !interpreter_) return {};
  return interpreter_->mix(debugger_.stack(tid), script);
}

}  // namespace rwd
