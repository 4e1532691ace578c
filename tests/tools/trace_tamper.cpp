// Test helper: copies a trace while changing one event, keeping every chunk checksum valid,
// so that only replay's divergence detection can notice. Used by tests/integration/tamper.sh.
//   trace_tamper IN OUT EVENT REGISTER DELTA   add DELTA to REGISTER of event EVENT
//   trace_tamper IN OUT EVENT result DELTA     add DELTA to the recorded syscall result
//   trace_tamper IN OUT 0 root_status DELTA    add DELTA to the exit status in `processes`
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/arch/registers.h"
#include "engine/errors.h"
#include "engine/trace/trace_files.h"
#include "engine/trace/trace_reader.h"
#include "engine/trace/trace_writer.h"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: trace_tamper IN OUT EVENT REGISTER|result DELTA\n");
    return 2;
  }
  std::string in = argv[1], out = argv[2], what = argv[4];
  uint64_t target = std::strtoull(argv[3], nullptr, 10);
  int64_t delta = std::strtoll(argv[5], nullptr, 0);
  try {
    rwd::TraceReader r(in);
    if (::mkdir(out.c_str(), 0755) != 0) throw rwd::Error("cannot create " + out);
    // Saved files are shared with the original trace.
    if (::symlink((in + "/files").c_str(), (out + "/files").c_str()) != 0)
      throw rwd::Error("cannot link files/");
    rwd::TraceWriter w(out, r.meta());
    bool changed = false;
    while (auto e = r.next()) {
      if (e->number == target) {
        if (what == "result") {
          e->result += delta;
          changed = true;
        }
        for (size_t i = 0; i < rwd::kRegisterCount; ++i) {
          if (what != rwd::register_name(i)) continue;
          uint64_t v = rwd::register_value(e->regs, i) + uint64_t(delta);
          std::memcpy(reinterpret_cast<char*>(&e->regs) + i * 8, &v, 8);
          changed = true;
        }
      }
      w.write(*e);
    }
    rwd::TraceSummary summary = *r.summary();
    if (what == "root_status") {
      summary.root_status += int32_t(delta);
      changed = true;
    }
    if (!changed) throw rwd::Error("event or field not found");
    w.finish(summary);
  } catch (const rwd::Error& e) {
    std::fprintf(stderr, "trace_tamper: %s\n", e.what());
    return 1;
  }
  return 0;
}
