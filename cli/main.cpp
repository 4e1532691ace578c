// Entry point of the `rewind` command (rr's conventions: record, replay, ls, ps, dump, rm).
#include <malloc.h>

#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "engine/errors.h"

namespace {

/// Makes malloc keep the memory rewind frees for its next allocations instead of giving it
/// back to the kernel (mallopt(3)): blocks up to 32 MiB come from the heap, and the heap's
/// free top is trimmed only past 256 MiB. Recording and replay allocate and free buffers of
/// megabytes for each event (the syscall buffer's records, captured memory, a trace chunk),
/// and memory given back costs a page fault per 4 KiB when it is allocated again, which in a
/// VM is dearer than the copying itself: page faults were about a tenth of the recorder's
/// CPU time for a Python program that reads 2,000 files (perf record, 2026-12-06).
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rwd::cli;
  keep_freed_memory();
  CLI::App app{"rewind: record a Linux x86-64 program once, replay that exact execution"};
  app.name("rewind");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("rewind 0.1.0"));
  std::map<CLI::App*, Runner> runners;
  for (auto add :
       {add_record, add_replay, add_ls, add_ps, add_dump, add_rm, add_dap, add_machine}) {
    size_t before = app.get_subcommands({}).size();
    Runner r = add(app);
    runners[app.get_subcommands({}).at(before)] = r;
  }
  try {
    app.parse(split_program_command(argc, argv), argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "rewind: %s (see rewind --help)\n", msg.c_str());
    return kUsageError;
  }
  for (auto* sub : app.get_subcommands()) {
    try {
      return runners.at(sub)();
    } catch (const rwd::Error& e) {
      std::fprintf(stderr, "rewind: %s\n", e.what());
      return kRewindError;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rewind: internal error: %s\n", e.what());
      return kRewindError;
    }
  }
  return kUsageError;
}
