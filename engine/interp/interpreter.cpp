// Finding the runtime a process is (interpreter.h).
#include "engine/interp/interpreter.h"

namespace rwd {

std::unique_ptr<Interpreter> find_interpreter(const ModuleList& modules, InterpMemory& mem) {
  if (auto py = find_python_interpreter(modules, mem)) return py;
  return find_r_interpreter(modules, mem);
}

}  // namespace rwd
