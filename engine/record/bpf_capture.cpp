// bpf(2)'s outputs by command (bpf_capture.h).
#include "engine/record/bpf_capture.h"

#include <linux/bpf.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <string>

#include "engine/errors.h"
#include "engine/os/tracee_memory.h"

namespace rwd {

namespace {

/// A map's sizes, as /proc/TID/fdinfo/FD shows them for a bpf map fd (kernel/bpf/syscall.c,
/// bpf_map_show_fdinfo).
struct MapSizes {
  bool is_map = false;
  uint32_t type = 0, key_size = 0, value_size = 0;
};

MapSizes map_sizes(pid_t tid, uint64_t fd) {
  MapSizes m;
  std::ifstream f("/proc/" + std::to_string(tid) + "/fdinfo/" + std::to_string(uint32_t(fd)));
  std::string key;
  uint64_t v = 0;
  while (f >> key) {
    if (key == "map_type:" && f >> v) {
      m.is_map = true;
      m.type = uint32_t(v);
    } else if (key == "key_size:" && f >> v) {
      m.key_size = uint32_t(v);
    } else if (key == "value_size:" && f >> v) {
      m.value_size = uint32_t(v);
    }
  }
  return m;
}

/// The number of possible CPUs (/sys/devices/system/cpu/possible: "0-3" or "0,2-5"), as
/// libbpf counts them for per-CPU values.
uint64_t possible_cpus() {
  std::ifstream f("/sys/devices/system/cpu/possible");
  std::string s;
  f >> s;
  uint64_t n = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    std::string part = s.substr(i, j - i);
    size_t dash = part.find('-');
    unsigned long lo = std::stoul(part.substr(0, dash));
    unsigned long hi = dash == std::string::npos ? lo : std::stoul(part.substr(dash + 1));
    n += hi - lo + 1;
    i = j + 1;
  }
  return n ? n : 1;
}

/// The bytes a lookup writes for one value of map `m` (bpf_map_value_size in the kernel).
uint64_t value_bytes(const MapSizes& m) {
  switch (m.type) {
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
    case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
      return (uint64_t(m.value_size) + 7) / 8 * 8 * possible_cpus();
    default:
      return m.value_size;
  }
}

/// bpf_attr read from the program's memory (the kernel reads `size` bytes, zero-extended).
union bpf_attr read_attr(pid_t tid, uint64_t addr, uint64_t size) {
  union bpf_attr attr {};
  std::vector<uint8_t> b = read_memory(tid, addr, std::min<uint64_t>(size, sizeof attr));
  std::copy(b.begin(), b.end(), reinterpret_cast<uint8_t*>(&attr));
  return attr;
}

struct Command {
  uint64_t cmd;
  const char* name;
};
constexpr Command kSupported[] = {
    {BPF_MAP_CREATE, "BPF_MAP_CREATE"},
    {BPF_MAP_LOOKUP_ELEM, "BPF_MAP_LOOKUP_ELEM"},
    {BPF_MAP_UPDATE_ELEM, "BPF_MAP_UPDATE_ELEM"},
    {BPF_MAP_DELETE_ELEM, "BPF_MAP_DELETE_ELEM"},
    {BPF_MAP_GET_NEXT_KEY, "BPF_MAP_GET_NEXT_KEY"},
    {BPF_PROG_LOAD, "BPF_PROG_LOAD"},
    {BPF_OBJ_PIN, "BPF_OBJ_PIN"},
    {BPF_OBJ_GET, "BPF_OBJ_GET"},
    {BPF_PROG_GET_NEXT_ID, "BPF_PROG_GET_NEXT_ID"},
    {BPF_MAP_GET_NEXT_ID, "BPF_MAP_GET_NEXT_ID"},
    {BPF_PROG_GET_FD_BY_ID, "BPF_PROG_GET_FD_BY_ID"},
    {BPF_MAP_GET_FD_BY_ID, "BPF_MAP_GET_FD_BY_ID"},
    {BPF_OBJ_GET_INFO_BY_FD, "BPF_OBJ_GET_INFO_BY_FD"},
    {BPF_BTF_LOAD, "BPF_BTF_LOAD"},
    {BPF_MAP_LOOKUP_AND_DELETE_ELEM, "BPF_MAP_LOOKUP_AND_DELETE_ELEM"},
    {BPF_MAP_FREEZE, "BPF_MAP_FREEZE"},
    {BPF_BTF_GET_NEXT_ID, "BPF_BTF_GET_NEXT_ID"},
};

}  // namespace

bool bpf_command_supported(uint64_t cmd) {
  return std::any_of(std::begin(kSupported), std::end(kSupported),
                     [&](const Command& c) { return c.cmd == cmd; });
}

const char* bpf_command_name(uint64_t cmd) {
  for (const Command& c : kSupported)
    if (c.cmd == cmd) return c.name;
  static thread_local std::string number;
  number = "command " + std::to_string(cmd);
  return number.c_str();
}

std::vector<std::pair<uint64_t, uint64_t>> bpf_outputs(pid_t tid, const std::array<uint64_t, 6>& a,
                                                       int64_t result) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  const uint64_t cmd = a[0], at = a[1], size = std::min<uint64_t>(a[2], sizeof(union bpf_attr));
  if (at == 0) return out;
  union bpf_attr attr = read_attr(tid, at, size);
  switch (cmd) {
    case BPF_PROG_LOAD:  // the verifier's log, on failure too; log_true_size back into attr
      if (attr.log_level && attr.log_buf) out.emplace_back(attr.log_buf, attr.log_size);
      out.emplace_back(at, size);
      return out;
    case BPF_BTF_LOAD:
      if (attr.btf_log_level && attr.btf_log_buf)
        out.emplace_back(attr.btf_log_buf, attr.btf_log_size);
      out.emplace_back(at, size);
      return out;
    default:
      break;
  }
  if (result < 0) return out;
  switch (cmd) {
    case BPF_MAP_LOOKUP_ELEM:
    case BPF_MAP_LOOKUP_AND_DELETE_ELEM:
    case BPF_MAP_GET_NEXT_KEY: {
      MapSizes m = map_sizes(tid, attr.map_fd);
      // Never a silent wrong replay: without the sizes, nothing would be recorded.
      if (!m.is_map || m.key_size == 0)
        throw UnsupportedError("bpf " + std::string(bpf_command_name(cmd)) +
                               ": cannot read the map's sizes in /proc/" + std::to_string(tid) +
                               "/fdinfo/" + std::to_string(attr.map_fd));
      if (cmd == BPF_MAP_GET_NEXT_KEY)
        out.emplace_back(attr.next_key, m.key_size);
      else
        out.emplace_back(attr.value, value_bytes(m));
      return out;
    }
    case BPF_PROG_GET_NEXT_ID:
    case BPF_MAP_GET_NEXT_ID:
    case BPF_BTF_GET_NEXT_ID:  // next_id, after start_id
      out.emplace_back(at, std::min<uint64_t>(size, 8));
      return out;
    case BPF_OBJ_GET_INFO_BY_FD:
      if (!map_sizes(tid, attr.info.bpf_fd).is_map)
        throw UnsupportedError(
            "bpf BPF_OBJ_GET_INFO_BY_FD of a program, BTF or link is not "
            "supported yet");
      out.emplace_back(at, std::min<uint64_t>(size, 16));  // info_len, as the kernel set it
      out.emplace_back(attr.info.info, attr.info.info_len);
      return out;
    default:
      return out;  // the rest write nothing (or only return an fd)
  }
}

}  // namespace rwd
