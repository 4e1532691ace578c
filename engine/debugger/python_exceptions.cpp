#include "engine/debugger/python_exceptions.h"

#include <algorithm>
#include <filesystem>

#include "engine/debugger/timeline_target.h"
#include "engine/interp/python/python_code.h"
#include "engine/interp/python/python_exception.h"

namespace rwd {

namespace {

/// Whether `file` is the program's own code rather than the interpreter's: not a frozen
/// module ("<frozen importlib._bootstrap>"), not in the standard library (.../lib/python3.N/)
/// and not an installed package.
bool own_code(const std::string& file) {
  return !file.empty() && file[0] != '<' && file.find("/lib/python3.") == std::string::npos &&
         file.find("/site-packages/") == std::string::npos &&
         file.find("/dist-packages/") == std::string::npos;
}

/// The source line of code unit `unit` (from the start of the bytecode) in `code`, 0 when
/// none.
int line_of_unit(const PythonCode& code, uint64_t unit) {
  for (const PythonLineEntry& e : code.lines)
    if (unit >= e.start && unit < e.start + e.length) return e.line;
  return 0;
}

/// Where frame `frame` (a _PyInterpreterFrame) stands: its code's file, and the line of its
/// instruction `instr` (a runtime address in its bytecode).
void place_of(InterpMemory& mem, const PythonReader& py, uint64_t frame, uint64_t instr,
              ExceptionStop& e) {
  uint64_t code = py.frame_code(mem, frame);
  PythonCode c = read_python_code(mem, py.layout(), code);
  e.file = c.file;
  uint64_t start = code + uint64_t(py.layout().code_code_adaptive);
  e.line = instr >= start ? line_of_unit(c, (instr - start) / 2) : 0;
}

}  // namespace

bool PythonExceptions::trace_has_python() {
  if (has_python_) return *has_python_;
  has_python_ = false;
  std::error_code ec;
  std::filesystem::path files = std::filesystem::path(tl_.executable()).parent_path();
  for (const auto& entry : std::filesystem::directory_iterator(files, ec)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with("python") || name.starts_with("libpython")) {
      has_python_ = true;
      break;
    }
  }
  return *has_python_;
}

void PythonExceptions::plant(const char* name, uint64_t& at) {
  plant_at(python_.function(name), at);
}

void PythonExceptions::plant_at(uint64_t a, uint64_t& at) {
  if (at || !a) return;
  try {
    CodeSite site = tl_.code_site(tl_.current().tid, a);
    refs_.add(site);
    planted_.push_back(site);
    at = a;
  } catch (const Error&) {
  }
}

void PythonExceptions::prepare() {
  if (!stops_.raised && !stops_.uncaught) return;
  if (!python_.reader()) return;
  // Only raises the filters stop at need the raise breakpoint (each hit is a stop of a few
  // ms): an uncaught exception's raise is found from its report (back_to).
  if (stops_.raised || target_) plant("PyTraceBack_Here", traceback_here_);
  if (stops_.uncaught && !display_) {
    // 3.14 no longer exports _PyErr_Display. A stripped build (Debian's) leaves it unnamed:
    // it is then PyErr_Display's one call to an unnamed function (GCC's clone of it without
    // the unused type, or the function itself), which sys.excepthook makes through
    // PyErr_Display and threading.excepthook directly. Else PyErr_Display(unused, value,
    // traceback), which only the main thread's report passes through.
    plant("_PyErr_Display", display_);
    display_args_ = display_ ? DisplayArgs::FileTypeValueTraceback : DisplayArgs::Unknown;
    if (!display_) {
      std::vector<uint64_t> callees = python_.unnamed_callees("PyErr_Display");
      if (callees.size() == 1) plant_at(callees[0], display_);
    }
    if (!display_) {
      plant("PyErr_Display", display_);
      display_args_ = DisplayArgs::UnusedValueTraceback;
    }
  }
}

void PythonExceptions::end_resume() {
  for (const CodeSite& site : planted_) refs_.remove(site);
  planted_.clear();
  traceback_here_ = display_ = 0;
}

void PythonExceptions::begin_resume(Direction dir) {
  dir_ = dir;
  in_flight_.clear();
  target_.reset();
  skip_tid_ = 0;
  passing_.reset();
  if (!stops_.raised && !stops_.uncaught) return;
  bool noted = at_noted();
  if (dir == Direction::Forward) {
    if (noted && !noted_->report) passing_ = noted_->raise;
    in_flight_ = exceptions_in_flight();
    return;
  }
  if (noted) {
    if (noted_->report)
      target_ = noted_->raise;  // from the report of an uncaught exception: its raise
    else
      skip_tid_ = noted_->at.tid;  // from a raise: its own PyTraceBack_Here call comes first
    return;
  }
  // An exception propagating here, or else the innermost one being handled (an except or
  // finally clause): its raise.
  std::vector<std::optional<Raise>> here = raises_in_flight(tl_.current().tid);
  if (!here.empty()) target_ = here.front();
}

std::vector<std::optional<PythonExceptions::Raise>> PythonExceptions::raises_in_flight(pid_t tid) {
  std::vector<std::optional<Raise>> out;
  const PythonReader* py = python_.reader();
  if (!py) return out;
  try {
    TimelineTarget t(tl_, tid);
    InterpMemory mem(t);
    uint64_t tstate = thread_state(mem, *py, tid);
    if (!tstate) return out;
    std::vector<PythonException> all;
    if (auto exc = python_current_exception(mem, py->layout(), tstate)) all.push_back(*exc);
    for (PythonException& e : python_handled_exceptions(mem, py->layout(), tstate))
      all.push_back(std::move(e));
    for (const PythonException& e : all) {
      out.emplace_back();
      if (e.traceback && python_type_name(mem, e.traceback) == "traceback")
        out.back() = Raise{tid, python_traceback_innermost(mem, e.traceback).frame_object};
    }
  } catch (const Error&) {
    out.clear();  // a task of another program, or an interpreter in the middle of an update
  }
  return out;
}

std::optional<PythonExceptions::RaiseCall> PythonExceptions::raise_call(InterpMemory& mem,
                                                                        const PythonReader& py,
                                                                        pid_t tid,
                                                                        uint64_t frame_object) {
  try {
    RaiseCall c;
    c.tstate = thread_state(mem, py, tid);
    if (!c.tstate) return std::nullopt;
    // Most calls are an exception propagating: told apart with the fewest reads (each page
    // is a request to the replay) before the exception itself is read.
    c.frame = python_frame_of_object(mem, frame_object);
    c.instr = mem.u64(py.step_word(c.frame));
    // A traceback already: propagating from a callee, unless the frame's instruction is a
    // `raise` (of an exception object that was raised before).
    if (python_current_traceback(mem, py.layout(), c.tstate) &&
        mem.bytes(c.instr, 1).at(0) != uint8_t(py.layout().op_raise_varargs))
      return std::nullopt;
    return c;
  } catch (const Error&) {
    return std::nullopt;  // the interpreter in the middle of an update
  }
}

bool PythonExceptions::wanted(InterpMemory& mem, const PythonReader& py, const RaiseCall& c) {
  if (!stops_.raised) return false;
  try {
    uint64_t code = py.frame_code(mem, c.frame);
    if (!own_code(
            python_str(mem, py.layout(), mem.u64(code + uint64_t(py.layout().code_filename)))))
      return false;
    return stops_.types.empty() || std::find(stops_.types.begin(), stops_.types.end(),
                                             python_current_exception_type(
                                                 mem, py.layout(), c.tstate)) != stops_.types.end();
  } catch (const Error&) {
    return false;
  }
}

std::optional<ExceptionStop> PythonExceptions::describe(InterpMemory& mem, const PythonReader& py,
                                                        const RaiseCall& c) {
  try {
    auto exc = python_current_exception(mem, py.layout(), c.tstate);
    if (!exc) return std::nullopt;
    ExceptionStop e;
    e.type = exc->type;
    e.message = exc->message;
    place_of(mem, py, c.frame, c.instr, e);
    return e;
  } catch (const Error&) {
    return std::nullopt;
  }
}

uint64_t PythonExceptions::thread_state(InterpMemory& mem, const PythonReader& py, pid_t tid) {
  // A thread's state stays while it lives; one freed and reused by another thread names
  // that thread's tid.
  auto known = tstates_.find(tid);
  if (known != tstates_.end() &&
      mem.u64(known->second + uint64_t(py.layout().tstate_native_thread_id)) == uint64_t(tid))
    return known->second;
  uint64_t tstate = py.thread_state(mem, tid);
  if (tstate) tstates_[tid] = tstate;
  return tstate;
}

std::set<PythonExceptions::Raise> PythonExceptions::exceptions_in_flight() {
  std::set<Raise> out;
  for (const TaskInfo& task : tl_.tasks())
    for (const std::optional<Raise>& r : raises_in_flight(task.tid))
      if (r) out.insert(*r);
  return out;
}

StopInfo PythonExceptions::land(const StopInfo& s) {
  Registers entry = tl_.registers(s.tid);
  uint64_t ret = 0;
  {
    TimelineTarget t(tl_, s.tid);
    InterpMemory mem(t);
    ret = mem.u64(entry.rsp);  // PyTraceBack_Here's return address, in the eval loop
  }
  TempBreakpoint back(refs_, tl_, s.tid, ret);
  for (;;) {
    StopInfo n = tl_.resume_forward();
    if (n.reason == StopReason::Breakpoint && n.tid == s.tid && n.addr == ret &&
        tl_.registers(n.tid).rsp > entry.rsp)
      return n;
    if (n.reason == StopReason::Breakpoint || n.reason == StopReason::Watchpoint ||
        n.reason == StopReason::CodeMapped)
      continue;
    return n;  // a signal or the end came first
  }
}

bool PythonExceptions::is_raise(const StopInfo& s, const Raise& r) {
  if (s.reason != StopReason::Breakpoint || s.addr != traceback_here_ || s.tid != r.tid ||
      tl_.registers(s.tid).rdi != r.frame_object)
    return false;
  const PythonReader* py = python_.reader();
  if (!py) return false;
  TimelineTarget t(tl_, s.tid);
  InterpMemory mem(t);
  return raise_call(mem, *py, s.tid, r.frame_object).has_value();
}

StopInfo PythonExceptions::back_to(const Raise& r) {
  plant("PyTraceBack_Here", traceback_here_);
  for (;;) {
    StopInfo n = tl_.resume_backward();
    if (is_raise(n, r)) return n;
    if (n.reason == StopReason::TraceStart || n.reason == StopReason::Interrupted) return n;
    // Breakpoints, watchpoints and signals between the raise and its report: passed over.
  }
}

void PythonExceptions::note_stop(const StopInfo& s, std::optional<Raise> raise, bool report) {
  try {
    noted_ = Noted{s, tl_.registers(s.tid), raise, report};
  } catch (const Error&) {
    noted_.reset();
  }
}

bool PythonExceptions::at_noted() {
  if (!noted_) return false;
  StopInfo now = tl_.current();
  if (now.event != noted_->at.event || now.tid != noted_->at.tid) return false;
  try {
    return registers_equal(tl_.registers(now.tid), noted_->regs);
  } catch (const Error&) {
    return false;
  }
}

PythonExceptions::Outcome PythonExceptions::on_stop(const StopInfo& s, Direction dir) {
  Outcome out;
  if (s.addr == traceback_here_) {
    const PythonReader* py = python_.reader();
    if (!py) return out;
    Raise here{s.tid, tl_.registers(s.tid).rdi};  // PyTraceBack_Here(PyFrameObject*)
    std::optional<ExceptionStop> e;
    {
      TimelineTarget t(tl_, s.tid);
      InterpMemory mem(t);
      std::optional<RaiseCall> call = raise_call(mem, *py, s.tid, here.frame_object);
      if (!call) return out;  // propagating through a caller
      if (dir == Direction::Backward && skip_tid_ == s.tid) {
        skip_tid_ = 0;
        return out;
      }
      if (target_ != here && !wanted(mem, *py, *call)) return out;
      e = describe(mem, *py, *call);
      if (!e) return out;
    }
    out.stop = true;
    out.at = land(s);
    if (out.at.reason != StopReason::Breakpoint) return out;
    out.exception = e;
    note_stop(out.at, here, false);
    return out;
  }
  if (s.addr != display_ || !stops_.uncaught) return out;
  // _PyErr_Display(file, type, value, traceback): type in 3.11 (3.12 on: unused, the value's);
  // PyErr_Display(unused, value, traceback) where only that one is exported (3.14).
  const PythonReader* py = python_.reader();
  if (!py) return out;
  Registers r = tl_.registers(s.tid);
  ExceptionStop e;
  std::optional<Raise> raise;
  try {
    TimelineTarget t(tl_, s.tid);
    InterpMemory mem(t);
    bool three = display_args_ == DisplayArgs::UnusedValueTraceback;
    if (display_args_ == DisplayArgs::Unknown) {
      // A clone without the type has the traceback (or None) third, the function itself the
      // type (NULL since 3.12) second and the value third.
      std::string third = r.rdx ? python_type_name(mem, r.rdx) : "";
      three = third == "traceback" || third == "NoneType";
    }
    if (three) {
      r.rcx = r.rdx;
      r.rdx = r.rsi;
      r.rsi = 0;
    }
    PythonException exc =
        python_exception(mem, py->layout(), py->layout().minor == 11 ? r.rsi : 0, r.rdx, r.rcx);
    e.type = exc.type;
    e.message = exc.message;
    if (r.rcx && python_type_name(mem, r.rcx) == "traceback") {
      PythonTracebackEntry tb = python_traceback_innermost(mem, r.rcx);
      raise = Raise{s.tid, tb.frame_object};
      uint64_t frame = python_frame_of_object(mem, tb.frame_object);
      uint64_t code = py->frame_code(mem, frame);
      place_of(mem, *py, frame,
               code + uint64_t(py->layout().code_code_adaptive) + uint64_t(tb.lasti), e);
    }
  } catch (const Error&) {
    // Reported, but not readable: stop at the report.
  }
  e.uncaught = true;
  // Forwards, an exception propagating or handled where the continue began was raised before.
  bool raised_since = raise && (dir == Direction::Backward || !in_flight_.count(*raise));
  if (!raised_since) {
    // Raised before this continue began: stop at the report (reverse-continue goes back to
    // the raise), unless the continue began at that raise.
    if (raise && passing_ == raise) return out;
    e.at_report = true;
    out.stop = true;
    out.at = s;
    out.exception = e;
    note_stop(s, raise, true);
    return out;
  }
  out.stop = true;
  StopInfo back = back_to(*raise);
  if (!is_raise(back, *raise)) {
    out.at = back;
    return out;
  }
  out.at = land(back);
  if (out.at.reason != StopReason::Breakpoint) return out;
  out.exception = e;
  note_stop(out.at, raise, false);
  return out;
}

}  // namespace rwd
