// Shared libraries opened on first use (lazy_library.h).
#include "engine/os/lazy_library.h"

#include <dlfcn.h>

#include <mutex>

#include "engine/errors.h"

namespace rwd {

namespace {
std::mutex g_open_mu;  // dlopen is thread-safe; this keeps handle_ written once
}

LazyLibrary::LazyLibrary(std::string soname, std::string purpose)
    : soname_(std::move(soname)), purpose_(std::move(purpose)) {}

void* LazyLibrary::handle() {
  std::lock_guard<std::mutex> lock(g_open_mu);
  if (!handle_) {
    handle_ = dlopen(soname_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* why = dlerror();
      throw Error("cannot load " + soname_ + " (" + purpose_ + "): " + (why ? why : "unknown"));
    }
  }
  return handle_;
}

void* LazyLibrary::symbol(const char* name) {
  void* h = handle();
  std::lock_guard<std::mutex> lock(g_open_mu);
  dlerror();
  void* f = dlsym(h, name);
  if (!f) {
    const char* why = dlerror();
    throw Error(soname_ + " (" + purpose_ + ") has no " + name + ": " +
                (why ? why : "null symbol"));
  }
  return f;
}

}  // namespace rwd
