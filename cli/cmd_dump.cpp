// rewind dump: the events of a trace, as text or JSON.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "engine/arch/signal_names.h"
#include "engine/arch/syscall_table.h"
#include "engine/trace/buffered_records.h"
#include "engine/trace/event_text.h"
#include "engine/trace/trace_dir.h"
#include "engine/trace/trace_reader.h"

namespace rwd::cli {

namespace {

nlohmann::json to_json(const Event& e) {
  nlohmann::json j = {{"event", e.number}, {"task", e.tid}, {"kind", event_kind_name(e.kind)}};
  switch (e.kind) {
    case EventKind::Syscall:
      j["syscall"] = syscall_name(e.syscallno());
      j["args"] = {e.regs.rdi, e.regs.rsi, e.regs.rdx, e.regs.r10, e.regs.r8, e.regs.r9};
      j["result"] = e.result;
      if (e.child_tid) j["child"] = e.child_tid;
      if (e.written_tid) j["written_task"] = e.written_tid;  // Event::written_tid
      if (!e.file.empty()) j["file"] = e.file;
      if (e.output != OutputStream::None)
        j["output"] = e.output == OutputStream::Stdout ? "stdout" : "stderr";
      break;
    case EventKind::Exec:
      j["argv"] = e.argv;
      j["file"] = e.file;
      break;
    case EventKind::Signal:
      j["signal"] = signal_name(e.signo);
      j["synchronous"] = e.synchronous;
      j["rip"] = e.regs.rip;
      break;
    case EventKind::Exit:
      if (WIFEXITED(e.status)) j["exit_status"] = WEXITSTATUS(e.status);
      if (WIFSIGNALED(e.status)) j["signal"] = signal_name(WTERMSIG(e.status));
      break;
    case EventKind::Rdtsc:
      j["value"] = (e.regs.rdx << 32) | (e.regs.rax & 0xffffffffu);
      break;
    case EventKind::Cpuid:  // what the program read: eax, ebx, ecx, edx
      j["result"] = {e.regs.rax & 0xffffffffu, e.regs.rbx & 0xffffffffu, e.regs.rcx & 0xffffffffu,
                     e.regs.rdx & 0xffffffffu};
      break;
    case EventKind::SyscallEntry:
      j["syscall"] = syscall_name(e.syscallno());
      break;
    case EventKind::Sched:
      j["rip"] = e.regs.rip;
      break;
    case EventKind::End:
      break;
  }
  if (!e.buffered.empty()) {
    nlohmann::json b = nlohmann::json::array();
    for (const auto& r : parse_buffered_records(e.buffered))
      b.push_back({{"syscall", syscall_name(r.nr)}, {"result", r.result}, {"bytes", r.data_bytes}});
    j["buffered"] = b;
  }
  return j;
}

}  // namespace

Runner add_dump(CLI::App& app) {
  auto* cmd = app.add_subcommand("dump", "Print the events of a trace");
  auto trace = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto regs = std::make_shared<bool>(false);
  cmd->add_option("TRACE", *trace, "Trace name or directory (default: latest)");
  cmd->add_flag("--json", *json, "One JSON array of event objects");
  cmd->add_flag("--regs", *regs, "With --json: each event's registers");
  return [trace, json, regs] {
    TraceReader r(resolve_trace(*trace));
    if (*json) std::printf("[");
    bool first = true;
    while (auto e = r.next()) {
      if (*json) {
        nlohmann::json j = to_json(*e);
        if (*regs && e->kind != EventKind::Exit && e->kind != EventKind::End)
          for (size_t i = 0; i < kRegisterCount; ++i)
            j["regs"][register_name(i)] = hex(register_value(e->regs, i));
        std::printf("%s\n%s", first ? "" : ",", j.dump().c_str());
      } else {
        std::printf("%8llu %7d %-8s %s\n", (unsigned long long)e->number, e->tid,
                    event_kind_name(e->kind), describe_event(*e).c_str());
      }
      first = false;
    }
    if (*json) std::printf("\n]\n");
    if (r.interrupted())
      std::fprintf(stderr, "rewind: trace ends at event %llu (recording was interrupted)\n",
                   (unsigned long long)r.last_event());
    return 0;
  };
}

}  // namespace rwd::cli
