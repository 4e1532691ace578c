// `rewind machine`: what this machine offers rewind, as rewind probes it (rr's
// `rr cpufeatures` answers a like question). Each line names a feature, yes or no, and what
// rewind does without it; the answers are the ones record and replay use (probed once per
// boot: engine/os/machine_probes.h).
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "engine/os/debug_registers.h"
#include "engine/os/insn_patch.h"
#include "engine/ticks/hw_probe.h"

namespace rwd::cli {

Runner add_machine(CLI::App& app) {
  app.add_subcommand("machine", "Say what this machine offers rewind (counters, debug registers)");
  return [] {
    std::string why;
    const bool ticks = hardware_ticks_available(&why);
    std::printf("hardware performance counters: %s\n",
                ticks ? "yes (ticks count retired branches)"
                      : ("no (" + why +
                         "): points between events are named by registers and a "
                         "memory digest")
                            .c_str());
    std::printf("debug registers for programs: %s\n",
                hardware_debug_registers()
                    ? "yes (hardware watchpoints; Python and R breakpoints)"
                    : "no (a paravirtualised guest): writes are watched in software, reads "
                      "cannot be, and Python and R breakpoints are refused");
    std::printf("rdtsc traps (PR_SET_TSC): %s\n",
                rdtsc_traps() ? "yes" : "no: rdtsc instructions are patched in recorded code");
    return 0;
  };
}

}  // namespace rwd::cli
