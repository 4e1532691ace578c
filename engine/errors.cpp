#include "errors.h"

#include <cerrno>
#include <cstring>

namespace rwd {

SystemError::SystemError(const std::string& what, int err)
    : Error(what + ": " + std::strerror(err)), err_(err) {}

void throw_errno(const std::string& what) {
  throw SystemError(what, errno);
}

}  // namespace rwd
