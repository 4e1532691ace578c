// What bpf(2) writes into the recorded program's memory, by command: the recorder records
// those bytes and replay writes them back (bpf is emulated in replay: the maps and programs
// live in the recording's kernel). Commands are from include/uapi/linux/bpf.h.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace rwd {

/// Whether rewind records bpf command `cmd`: map creation, element lookup, update, delete and
/// iteration, program and BTF loading (with the verifier's log), pinning and getting pinned
/// objects, id iteration, fds by id, a map's info, freezing. Others (attaching programs, test
/// runs, batches, links, iterators) are refused before they run.
bool bpf_command_supported(uint64_t cmd);

/// The name of bpf command `cmd` ("BPF_MAP_CREATE"...), or its number as text.
const char* bpf_command_name(uint64_t cmd);

/// The (address, bytes) ranges that bpf(`a[0]` = cmd, `a[1]` = attr, `a[2]` = attr size),
/// which returned `result`, wrote in process `tid`, read after the call: looked-up values and
/// keys (sized by the map's key_size and value_size, from /proc/TID/fdinfo; a per-CPU map's
/// value is one 8-byte-aligned slot per possible CPU), the verifier's log (written on failure
/// too), ids and info written back into attr. Throws UnsupportedError for an info query of a
/// program, BTF or link (its info holds pointers the kernel writes through).
std::vector<std::pair<uint64_t, uint64_t>> bpf_outputs(pid_t tid, const std::array<uint64_t, 6>& a,
                                                       int64_t result);

}  // namespace rwd
