// The one Catch2 runner (main) that every test program links: Catch2 2's runner is a large
// template-heavy body, so it is compiled once here instead of once per test program.
//
// Test cases tagged [debug-registers] need the CPU's debug registers: to watch reads (Python
// and R breakpoints), or to watch a write on a page the program writes at every pass within
// the test's time (R line steps watch a slot of R's context on the C stack: interp.r_steps
// ran past 13 minutes on a PVM guest, against 71 s on KVM). Where the CPU does not give programs
// its debug registers (a paravirtualised guest: rwd::hardware_debug_registers()), rewind refuses
// read watches with the reason, which untagged tests check (dap_interp.no_debug_registers makes any
// machine one with REWIND_SOFT_DEBUG_REGISTERS=1), and watches writes in software; the tagged cases
// are left out there, and the run says so (REWIND_TEST_ALL_CASES=1 keeps them, to time or
// debug one there).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/os/debug_registers.h"

int main(int argc, char** argv) {
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv)) return rc;
  auto& config = session.configData();
  const char* all = std::getenv("REWIND_TEST_ALL_CASES");
  const bool keep_all = all && std::strcmp(all, "1") == 0;
  if (!config.listTests && !config.listTestNamesOnly && !keep_all &&
      !rwd::hardware_debug_registers()) {
    std::fprintf(stderr,
                 "note: this machine's CPU does not give programs its debug registers: the test "
                 "cases tagged [debug-registers] are left out (they watch reads, which rewind "
                 "refuses here with the reason, or writes to pages written all the time, which "
                 "take many minutes here)\n");
    // Each filter argument is OR'ed with the others; the exclusion goes in front of each of
    // them, where it ANDs with the names and tags that follow (Catch2's test spec syntax).
    if (config.testsOrTags.empty()) config.testsOrTags.push_back("~[.]");
    for (std::string& spec : config.testsOrTags) spec = "~[debug-registers]" + spec;
    session.useConfigData(config);
  }
  return session.run();
}
