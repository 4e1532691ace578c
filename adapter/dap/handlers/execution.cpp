// Moving through the recording: continue and steps both ways, pause, restart, seek.
#include "adapter/dap/handlers/dap_handlers.h"

namespace rwd::handlers {

using nlohmann::json;

void resume(DapContext& c, const dap::ContinueArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  bool back = r.command() == "reverseContinue";
  pid_t only = a.single_thread ? c.thread(a.thread_id) : 0;
  r.respond({{"allThreadsContinued", true}});
  // Reaching either end of the recording is a pause (with a description saying which).
  Direction dir = back ? Direction::Backward : Direction::Forward;
  c.stopped(c.running([&] { return d.resume(dir, only); }), "pause", dir);
}

void step(DapContext& c, const dap::StepArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  // The steps of DAP (next, stepIn, stepOut; stepBack is a reverse next) and rewind's own
  // reverse ones: rewind/stepInBack (gdb's reverse-step) and rewind/stepOutBack
  // (reverse-finish: back to the call in the caller).
  std::string cmd = r.command();
  pid_t tid = c.thread(a.thread_id);
  if (a.granularity != "statement" && a.granularity != "line" && a.granularity != "instruction")
    throw RequestError("unknown granularity \"" + a.granularity + "\"");
  r.respond();
  Direction dir = cmd == "stepBack" || cmd == "rewind/stepInBack" || cmd == "rewind/stepOutBack"
                      ? Direction::Backward
                      : Direction::Forward;
  StepKind kind = cmd == "stepIn" || cmd == "rewind/stepInBack"     ? StepKind::Into
                  : cmd == "stepOut" || cmd == "rewind/stepOutBack" ? StepKind::Out
                                                                    : StepKind::Over;
  if (a.granularity == "instruction" && kind != StepKind::Out) {
    // One instruction; "stepIn" and "next" differ only at a call, which gdb's stepi and
    // nexti treat alike at this level (DAP leaves it to the adapter).
    c.stopped(c.running([&] { return d.step_instruction(tid, dir); }), "step", dir);
    return;
  }
  if (const InterpFrame* top = c.script_on_top(tid)) {
    // The task runs Python or R code and its innermost frame shown is a script frame: step
    // by the script's lines (engine/debugger/python_stepper.h, r_stepper.h).
    const Interpreter& in = *c.scripts->interpreter(tid);
    try {
      if (in.python()) {
        const PythonReader& python = *in.python();
        c.stopped(c.running([&] { return d.step_python(tid, python, kind, dir); }), "step", dir);
        return;
      }
      if (in.r()) {
        if (top->line <= 0 && kind != StepKind::Out)
          throw Error("the R frame " + top->function +
                      " has no source line (byte code without srcref)");
        const RReader& r = *in.r();
        c.stopped(c.running([&] { return d.step_r(tid, r, kind, dir); }), "step", dir);
        return;
      }
    } catch (const Error& e) {
      c.out.output("console", std::string("rewind: ") + e.what() + "; stepping by C lines\n");
    }
  }
  c.stopped(c.running([&] { return d.step(tid, kind, dir, a.single_thread); }), "step", dir);
}

void pause(DapContext& c, const dap::NoArguments&, DapRequest& r) {
  // A running continue was interrupted when this request arrived (DapSession::on_arrival),
  // and its stop was reported; a program already stopped stays where it is and says so again.
  c.debugger();
  r.respond();
  {
    std::lock_guard lock(c.pause_mu);
    if (c.interrupting_pauses.erase(message_seq(r.message).value_or(-1))) return;
  }
  DebugStop s;
  s.stop = c.timeline->current();
  s.stop.reason = StopReason::Interrupted;
  c.stopped(s, "pause");
}

void restart(DapContext& c, const dap::NoArguments&, DapRequest& r) {
  Debugger& d = c.debugger();
  // Back to the start of the recording, then on as after configurationDone.
  r.respond();
  if (c.recorded) {
    // VS Code clears its debug console before a restart: the recording's output, shown as
    // it ran, is shown again. A program rebuilt since is not what this replays: say so.
    c.recorded->show(c.out, "rewind: the output of the recording of " + c.recorded->program());
    if (c.recorded->program_changed()) {
      // In the console (an "important" output would be a second notification in VS Code,
      // whose extension offers Record Again on the event).
      c.out.output("console", "rewind: " + c.recorded->program() +
                                  " has changed since it was recorded: this replays the "
                                  "recording of the old build. Record it again to debug "
                                  "the new one.\n");
      c.out.event("rewind/programChanged", {{"program", c.recorded->program()}});
    }
  }
  c.out.event("continued",
              {{"threadId", c.timeline->current().tid}, {"allThreadsContinued", true}});
  DebugStop s;
  s.stop = c.timeline->seek(1);
  d.refresh();
  d.reset_hit_counts();  // a hit condition counts from the start again, as in a new run
  if (c.client.invalidated_event) c.out.event("invalidated", {{"areas", json::array({"all"})}});
  if (c.stop_on_entry) {
    s.stop.reason = StopReason::TraceStart;
    c.stopped(s, "entry");
    return;
  }
  c.stopped(c.running([&] { return d.resume(Direction::Forward); }));
}

void seek(DapContext& c, const dap::SeekArguments& args, DapRequest& r) {
  if (args.change) return seek_change(c, *args.change, r);     // history.cpp
  if (args.call || args.log_hit) return seek_hit(c, args, r);  // hit_queries.cpp
  Debugger& d = c.debugger();
  const int64_t event = *args.event;
  uint64_t count = c.timeline->event_count();
  uint64_t from = c.timeline->current().event;
  if (event < 1 || uint64_t(event) > count)
    throw RequestError("event " + std::to_string(event) + " is not in this trace (events 1 to " +
                       std::to_string(count) + ")");
  c.out.event("continued",
              {{"threadId", c.timeline->current().tid}, {"allThreadsContinued", true}});
  DebugStop s;
  s.stop = c.running([&] {
              DebugStop moved;
              moved.stop = c.timeline->seek(uint64_t(event));
              return moved;
            }).stop;
  d.refresh();
  r.respond(c.when());
  if (s.stop.event < uint64_t(event)) {
    // The events that end the program (its exit_group, the exits, the trace's end) have no
    // point after them with a live task: say so rather than land silently earlier.
    const EventEntry* e = c.event_index().at(uint64_t(event));
    c.out.output("important", "rewind: event " + std::to_string(event) +
                                  (e ? " (" + e->text + ")" : std::string()) +
                                  " comes after the program's last instruction: the replay "
                                  "stops at the end of the recording, just after event " +
                                  std::to_string(s.stop.event) + "\n");
  }
  if (c.client.invalidated_event) c.out.event("invalidated", {{"areas", json::array({"all"})}});
  c.stopped(s, "goto", uint64_t(event) < from ? Direction::Backward : Direction::Forward);
}

}  // namespace rwd::handlers
