#include "engine/debugger/python_locator.h"

#include "engine/debugger/timeline_target.h"
#include "engine/symbols/function_parts.h"

namespace rwd {

const PythonReader* PythonLocator::reader() {
  if (reader_) return &*reader_;
  if (modules_.modules().size() == modules_seen_) return nullptr;
  modules_seen_ = modules_.modules().size();
  try {
    TimelineTarget t(tl_, tl_.current().tid);
    InterpMemory mem(t);
    reader_ = PythonReader::find(modules_, mem);
  } catch (const Error&) {
    return nullptr;  // not initialized far enough yet, or a version rewind cannot read
  }
  if (!reader_) return nullptr;
  return &*reader_;
}

std::vector<uint64_t> PythonLocator::unnamed_callees(const char* name) const {
  std::vector<uint64_t> out;
  try {
    TimelineTarget t(tl_, tl_.current().tid);
    for (uint64_t to : direct_calls(t, modules_, name)) {
      const Module* m = modules_.module_at(to);
      if (m && !m->function_at(m->to_link(to))) out.push_back(to);
    }
  } catch (const Error&) {
    out.clear();
  }
  return out;
}

}  // namespace rwd
