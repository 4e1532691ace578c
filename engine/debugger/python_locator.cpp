#include "engine/debugger/python_locator.h"

#include "engine/debugger/timeline_target.h"

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

}  // namespace rwd
