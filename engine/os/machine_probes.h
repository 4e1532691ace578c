// What rewind probes about the machine it runs on (does rdtsc trap under PR_SET_TSC, do the
// debug registers serve tracees), kept for the rest of the boot.
//
// Each probe forks a child: 2.5-4 ms on the development VM, paid by every `rewind record` and
// `rewind replay` before this cache. The answers cannot change while the kernel runs (they
// depend on the CPU, the hypervisor and the kernel), so they are stored under the cache
// directory (cache_files.h: rewind_cache_dir) in a file named by the kernel's boot id
// (/proc/sys/kernel/random/boot_id, random(4)).
#pragma once

#include <functional>
#include <string>

namespace rwd {

/// The answer of probe `name` ([a-z_]+): the one stored for this boot when there is one, else
/// `probe()`'s, then stored. Without a usable cache directory or boot id, `probe()` every time.
bool machine_probe(const std::string& name, const std::function<bool()>& probe);

}  // namespace rwd
