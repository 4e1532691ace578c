#include "syscall_buffer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "engine/os/tracee_memory.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

int64_t SyscallBuffer::set_from_call(uint64_t buffer, uint64_t size, uint64_t lo, uint64_t hi) {
  if (buffer == 0 || buffer % 4096 != 0 || size != RWD_BUFFER_SIZE || lo >= hi || hi - lo > 4096)
    return -EINVAL;
  addr = buffer;
  defer_start = lo;
  defer_end = hi;
  return 0;
}

bool SyscallBuffer::must_not_stop_at(uint64_t rip) const {
  if (rip >= RWD_UNTRACED_PAGE && rip < RWD_UNTRACED_PAGE + 4096) return true;
  return addr && rip >= defer_start && rip < defer_end;
}

std::pair<uint64_t, uint64_t> SyscallBuffer::digest_exclusion() const {
  return {addr + RWD_CONTROL_OFFSET, RWD_BUFFER_SIZE - RWD_CONTROL_OFFSET};
}

std::vector<uint8_t> SyscallBuffer::take_records(pid_t tid) const {
  if (!addr) return {};
  uint32_t pos = 0;
  read_memory_exact(tid, addr, &pos, sizeof pos);
  if (pos == 0) return {};
  if (pos > RWD_BUFFER_SIZE - RWD_DATA_OFFSET) pos = RWD_BUFFER_SIZE - RWD_DATA_OFFSET;
  std::vector<uint8_t> bytes(pos);
  read_memory_exact(tid, addr + RWD_DATA_OFFSET, bytes.data(), pos);
  uint32_t zero = 0;
  write_memory(tid, addr, &zero, sizeof zero);
  return bytes;
}

std::string preload_library_path() {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  std::string dir(exe, size_t(n));
  dir.resize(dir.find_last_of('/') + 1);
  std::string lib = dir + "librewind_preload.so";
  return access(lib.c_str(), R_OK) == 0 ? lib : "";
}

std::vector<std::string> preload_environment(const std::vector<std::string>& env,
                                             const std::string& library,
                                             const std::vector<const struct stat*>& outputs) {
  std::vector<std::string> out;
  std::string preload = library;
  for (const auto& v : env) {
    if (v.rfind("LD_PRELOAD=", 0) == 0) {
      std::string old = v.substr(11);
      if (!old.empty()) preload += ":" + old;
    } else if (v.rfind("REWIND_OUTPUT_FILES=", 0) != 0) {
      out.push_back(v);
    }
  }
  out.push_back("LD_PRELOAD=" + preload);
  std::string files;
  for (const struct stat* st : outputs) {
    if (!files.empty()) files += ",";
    files += std::to_string(st->st_dev) + ":" + std::to_string(st->st_ino);
  }
  out.push_back("REWIND_OUTPUT_FILES=" + files);
  return out;
}

}  // namespace rwd
