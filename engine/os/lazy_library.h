// A shared library opened on its first use instead of at rewind's start.
//
// Libraries with many relocations cost every process that links them a few milliseconds of
// page faults at start, used or not (measured on the development VM: capstone's all-arch
// build 6-9 ms, libcrypto 2-6 ms, against 2.5 ms for a whole native `true`). rewind opens them
// with dlopen(3) when a caller first needs one of their functions.
#pragma once

#include <string>

namespace rwd {

/// One shared library, opened by soname with dlopen(RTLD_NOW | RTLD_LOCAL) the first time a
/// symbol is asked for; never closed. Thread-safe.
class LazyLibrary {
 public:
  /// `soname` is what dlopen looks for (e.g. "libcapstone.so.4"); `purpose` names what rewind
  /// uses it for, in the error message.
  LazyLibrary(std::string soname, std::string purpose);

  /// The address of the function `name`. Throws Error, one line naming the library, what it is
  /// for and dlerror(3)'s reason, when the library cannot be opened or lacks the symbol.
  void* symbol(const char* name);

  /// Calls `symbol(name)` once per call site and returns it as a pointer of the function's
  /// own type: `lib.function<decltype(cs_open)>("cs_open")`.
  template <class Fn>
  Fn* function(const char* name) {
    return reinterpret_cast<Fn*>(symbol(name));
  }

 private:
  void* handle();

  std::string soname_, purpose_;
  void* handle_ = nullptr;
};

}  // namespace rwd
