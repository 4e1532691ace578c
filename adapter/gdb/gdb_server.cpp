#include "adapter/gdb/gdb_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <asio/read.hpp>
#include <asio/write.hpp>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "adapter/gdb/gdb_files.h"
#include "adapter/gdb/gdb_monitor.h"
#include "adapter/gdb/gdb_packet.h"
#include "adapter/gdb/gdb_processes.h"
#include "adapter/gdb/gdb_signals.h"
#include "engine/errors.h"

namespace rwd::gdb {

namespace {

/// gdb's amd64 register order for the 'g' packet (amd64_register_names): the 16 general
/// registers, rip, then eflags and the six segment registers as 32-bit values. The x87 and
/// SSE registers that follow are not sent (gdb shows them unavailable).
struct GdbRegister {
  size_t offset;  ///< byte offset in Registers
  int size;       ///< bytes sent
};
constexpr GdbRegister kRegisters[] = {
    {offsetof(Registers, rax), 8}, {offsetof(Registers, rbx), 8}, {offsetof(Registers, rcx), 8},
    {offsetof(Registers, rdx), 8}, {offsetof(Registers, rsi), 8}, {offsetof(Registers, rdi), 8},
    {offsetof(Registers, rbp), 8}, {offsetof(Registers, rsp), 8}, {offsetof(Registers, r8), 8},
    {offsetof(Registers, r9), 8},  {offsetof(Registers, r10), 8}, {offsetof(Registers, r11), 8},
    {offsetof(Registers, r12), 8}, {offsetof(Registers, r13), 8}, {offsetof(Registers, r14), 8},
    {offsetof(Registers, r15), 8}, {offsetof(Registers, rip), 8}, {offsetof(Registers, eflags), 4},
    {offsetof(Registers, cs), 4},  {offsetof(Registers, ss), 4},  {offsetof(Registers, ds), 4},
    {offsetof(Registers, es), 4},  {offsetof(Registers, fs), 4},  {offsetof(Registers, gs), 4},
};

/// orig_rax, number 57 in gdb's amd64 GNU/Linux layout (after the x87 and SSE registers that
/// rewind does not send): gdb writes -1 there before calling a function in the program.
constexpr uint64_t kOrigRaxNumber = 57;
constexpr GdbRegister kOrigRax = {offsetof(Registers, orig_rax), 8};

/// The register numbered `n` that rewind reads and writes, or nullptr.
const GdbRegister* gdb_register(uint64_t n) {
  if (n < std::size(kRegisters)) return &kRegisters[n];
  return n == kOrigRaxNumber ? &kOrigRax : nullptr;
}

std::string register_hex(const Registers& r, const GdbRegister& g) {
  const auto* base = reinterpret_cast<const uint8_t*>(&r) + g.offset;
  return to_hex(base, size_t(g.size));  // little-endian, as the target stores it
}

/// Stores `g.size` little-endian bytes from `bytes` into its field of `r` (a 4-byte register
/// is zero-extended into its 8-byte field).
void set_register(Registers& r, const GdbRegister& g, const uint8_t* bytes) {
  uint64_t v = 0;
  std::memcpy(&v, bytes, size_t(g.size));
  std::memcpy(reinterpret_cast<uint8_t*>(&r) + g.offset, &v, 8);
}

/// Splits "a,b" (or "a:b") into two hex numbers.
std::optional<std::pair<uint64_t, uint64_t>> two_numbers(std::string_view s, char sep) {
  size_t i = s.find(sep);
  if (i == std::string_view::npos) return std::nullopt;
  auto a = parse_hex(s.substr(0, i)), b = parse_hex(s.substr(i + 1));
  if (!a || !b) return std::nullopt;
  return std::make_pair(*a, *b);
}

/// A qXfer read reply for `data` at "offset,length": 'm' + chunk, or 'l' + the last chunk.
std::string xfer_reply(const std::string& data, std::string_view range) {
  auto r = two_numbers(range, ',');
  if (!r) return "E00";
  if (r->first >= data.size()) return "l";
  std::string chunk = data.substr(r->first, r->second);
  return (r->first + chunk.size() >= data.size() ? "l" : "m") + chunk;
}

class Session {
 public:
  Session(Timeline& tl, asio::ip::tcp::socket& socket, const std::string& trace_dir)
      : tl_(tl), monitor_(tl, trace_dir), socket_(socket) {
    last_stop_ = tl_.current();
    thread_ = stop_thread_ = last_stop_.tid;
  }

  void run() {
    std::vector<char> buf(65536);
    for (;;) {
      asio::error_code ec;
      size_t n = socket_.read_some(asio::buffer(buf), ec);
      if (ec) return;  // gdb went away
      reader_.feed(buf.data(), n);
      while (auto item = reader_.next()) {
        if (item->kind == PacketReader::Item::BadChecksum) {
          if (acks_) send_raw("-");
          continue;
        }
        if (item->kind == PacketReader::Item::Interrupt)
          continue;  // operations are not interruptible yet
        if (acks_) send_raw("+");
        bool go_on = true;
        try {
          go_on = handle(item->payload);
        } catch (const Error&) {
          send("E01");  // e.g. registers of a task that no longer exists at this point
        }
        if (!go_on) return;
        if (no_ack_next_) acks_ = false;  // QStartNoAckMode was answered (with an ack)
      }
    }
  }

 private:
  /// gdb shows a failed packet only as "Remote failure reply: E01": why a run failed (a
  /// divergence, a broken trace) is said on stderr too, once (the packets after it fail the
  /// same way).
  void report(const Error& e) {
    if (e.what() == reported_) return;
    reported_ = e.what();
    fprintf(stderr, "rewind: %s\n", e.what());
  }
  std::string reported_;
  void send_raw(const std::string& s) { asio::write(socket_, asio::buffer(s)); }
  void send(std::string_view payload) { send_raw(frame(payload)); }

  /// Handles one packet; false when the session ends.
  bool handle(const std::string& p) {
    if (p.empty()) return send(""), true;
    std::string_view v(p);
    switch (p[0]) {
      case '?':
        send(stop_reply(last_stop_, true, kind_of(last_stop_), thread_id(last_stop_.tid)));
        return true;
      case 'g':
        send(read_registers());
        return true;
      case 'p':
        send(read_register(v.substr(1)));
        return true;
      case 'm':
        send(read_memory(v.substr(1)));
        return true;
      case 'M':
        send(write_memory(v.substr(1)));
        return true;
      case 'P':
        send(write_register(v.substr(1)));
        return true;
      case 'G':
        send(write_registers(v.substr(1)));
        return true;
      case 'X':
        send("");  // binary writes: gdb falls back to M
        return true;
      case 'H':
        // Hg picks the thread whose registers and memory gdb reads; Hc the one that 's' and
        // 'bs' step (gdb's remote protocol, "H op thread-id"). Reading another thread's
        // registers (info threads, thread apply) must not move the step. gdb sends "Hc0"
        // (any thread) before a reverse step in all-stop mode: the thread that stopped last,
        // the one gdb shows, steps.
        // With the multiprocess extensions gdb names a process ("Hgp2a.0": any thread of it)
        // before it reads memory or inserts a breakpoint in that inferior.
        if (p.size() > 2) {
          auto id = parse_thread_id(v.substr(2));
          if (!id) return send("E00"), true;
          pid_t tid = id->tid > 0 ? pid_t(id->tid) : 0;
          if (v[1] == 'c')
            step_thread_ = tid;
          else if (tid)
            thread_ = tid;
          else if (pid_t any = id->pid > 0 ? first_task_of(pid_t(id->pid)) : 0)
            thread_ = any;
        }
        send("OK");
        return true;
      case 'T':
        send(alive(v.substr(1)) ? "OK" : "E01");
        return true;
      case 'Z':
      case 'z':
        send(breakpoint(p[0] == 'Z', v.substr(1)));
        return true;
      case 'c':
        return run([&] { return interruptible([&] { return tl_.resume_forward(); }); });
      case 's':
        return run([&] { return tl_.step_forward(step_thread()); });
      case 'b':
        if (p == "bc")
          return run([&] { return interruptible([&] { return tl_.resume_backward(); }); });
        if (p == "bs") return run([&] { return tl_.step_backward(step_thread()); });
        send("");
        return true;
      case 'k':
        return false;
      case 'D':
        // "D;PID" (multiprocess) detaches one inferior: gdb sends one per process it knows
        // and closes the connection after the last, which ends the session.
        send("OK");
        if (!multiprocess() || p.size() < 3) return false;
        if (auto pid = parse_hex(v.substr(2))) processes_.detach(pid_t(*pid));
        return true;
      case 'q':
      case 'Q':
        send(query(p));
        return true;
      case 'v':
        return verbose(p);
      default:
        send("");
        return true;
    }
  }

  /// Runs a timeline operation on another thread while watching the connection for gdb's
  /// interrupt byte (Ctrl-C), which asks the timeline to stop where it is.
  StopInfo interruptible(const std::function<StopInfo()>& op) {
    std::optional<StopInfo> result;
    std::exception_ptr error;
    std::atomic<bool> done{false};
    std::thread worker([&] {
      try {
        result = op();
      } catch (...) {
        error = std::current_exception();
      }
      done = true;
    });
    int fd = socket_.native_handle();
    while (!done) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[256];
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        tl_.interrupt();  // gdb went away: stop, then the session ends
        break;
      }
      for (ssize_t i = 0; i < n; ++i)
        if (buf[i] == '\x03') tl_.interrupt();
      // Anything else during a run (all-stop mode sends nothing else) is dropped.
    }
    worker.join();
    if (error) std::rethrow_exception(error);
    return *result;
  }

  /// Runs `op` (a continue or step) and sends gdb its stop reply; runs it again while it
  /// stops where gdb is not to hear of (GdbProcesses::reply). A stop held back for a fork
  /// event gdb had to hear of first is reported instead, without moving.
  bool run(const std::function<StopInfo()>& op) {
    for (;;) {
      StopInfo s;
      try {
        s = held_ ? *held_ : op();
      } catch (const Error& e) {
        report(e);  // a continue or step that failed: a divergence, a broken trace
        throw;
      }
      held_.reset();
      auto reply = processes_.reply(s, kind_of(s), held_);
      if (!reply && s.reason != StopReason::TraceStart && s.reason != StopReason::TraceEnd &&
          s.reason != StopReason::Interrupted)
        continue;
      // A process's end names no thread (W or X): gdb's threads stay as they were.
      bool exit_notice = reply && (reply->front() == 'W' || reply->front() == 'X');
      if (!exit_notice) {
        last_stop_ = s;
        thread_ = stop_thread_ = s.tid;
      }
      // An exec replaced the process's memory, breakpoints and all: gdb inserts those of the
      // new program afresh (gdb manual, "Stop Reply Packets", exec).
      if (pid_t execed = processes_.last_exec()) forget_breakpoints(execed);
      send(reply ? *reply : stop_reply(s, false, kind_of(s), thread_id(s.tid)));
      return true;
    }
  }

  /// Drops gdb's breakpoints in process `pid` (the timeline's sites that no other process's
  /// breakpoint wants).
  void forget_breakpoints(pid_t pid) {
    std::vector<CodeSite> dropped;
    for (auto it = breakpoints_.begin(); it != breakpoints_.end();) {
      if (it->first.first != pid) {
        ++it;
        continue;
      }
      dropped.push_back(it->second);
      it = breakpoints_.erase(it);
    }
    for (const CodeSite& site : dropped) unwant(site);
  }

  /// Removes `site` from the timeline unless a breakpoint of gdb's still names it.
  void unwant(const CodeSite& site) {
    for (auto& [key, other] : breakpoints_)
      if (other == site) return;
    tl_.remove_breakpoint(site);
  }

  WatchKind kind_of(const StopInfo& s) const {
    for (auto& w : watches_)
      if (w.addr == s.addr) return w.kind;
    return WatchKind::Write;
  }

  bool verbose(const std::string& p) {
    if (p == "vCont?") return send("vCont;c;C;s;S"), true;
    if (p.rfind("vCont;", 0) == 0) {
      // The first action decides: "s:TID" steps that thread, "c" continues.
      std::string_view act = std::string_view(p).substr(6);
      act = act.substr(0, act.find(';'));
      char a = act.empty() ? 'c' : act[0];
      size_t colon = act.find(':');
      if (colon != std::string_view::npos) {
        auto id = parse_thread_id(act.substr(colon + 1));
        if (id && id->tid > 0) thread_ = pid_t(id->tid);
      }
      if (a == 's' || a == 'S') return run([&] { return tl_.step_forward(thread_); });
      return run([&] { return interruptible([&] { return tl_.resume_forward(); }); });
    }
    if (p.rfind("vFile:", 0) == 0) return send(files_.handle(p)), true;
    if (p.rfind("vKill", 0) == 0) {
      send("OK");
      return false;
    }
    send("");  // vMustReplyEmpty, vFile and the rest
    return true;
  }

  std::string query(const std::string& p) {
    std::string_view v(p);
    if (v.rfind("qSupported", 0) == 0) {
      // The multiprocess extensions (gdb manual, "General Query Packets", qSupported): each
      // process of the trace is an inferior of its own in gdb, its threads "pPID.TID".
      std::string extra = processes_.negotiate(v);
      return std::string("PacketSize=20000;QStartNoAckMode+;swbreak+;ReverseContinue+;") +
             "ReverseStep+;qXfer:auxv:read+;qXfer:exec-file:read+" + extra;
    }
    if (v == "QStartNoAckMode") {
      no_ack_next_ = true;
      return "OK";
    }
    if (v == "qC") return "QC" + thread_id(thread_);
    if (v == "qAttached" || v.rfind("qAttached:", 0) == 0) return "1";
    if (v == "qfThreadInfo") {
      std::string s = "m";
      for (auto& t : refresh_tasks())
        s += (s.size() > 1 ? "," : "") + format_thread_id(t.pid, t.tid, multiprocess());
      return s;
    }
    if (v == "qsThreadInfo") return "l";
    if (v.rfind("qThreadExtraInfo,", 0) == 0) {
      // Shown by `info threads` after the thread: "PROGRAM [PID/TID]", so that a thread of
      // another process of the trace (a fork()ed child) is told apart.
      auto id = parse_thread_id(v.substr(17));
      if (!id) return "E00";
      for (const TaskInfo& t : refresh_tasks())
        if (t.tid == pid_t(id->tid)) return to_hex(task_display_name(t));
      return "E01";
    }
    if (v.rfind("qRcmd,", 0) == 0) return monitor(v.substr(6));
    if (v.rfind("qXfer:auxv:read::", 0) == 0) {
      auto bytes = tl_.auxv(thread_);
      return xfer_reply(std::string(bytes.begin(), bytes.end()), v.substr(17));
    }
    if (v.rfind("qXfer:exec-file:read:", 0) == 0) {
      // The annex is a process's pid (multiprocess) or empty: the program that process runs
      // now (a fork()ed child's, or the one an exec loaded), else the trace's first.
      std::string_view rest = v.substr(21);
      size_t colon = rest.find(':');
      if (colon == std::string_view::npos) return "E00";
      auto pid = parse_hex(rest.substr(0, colon));
      pid_t task = pid ? first_task_of(pid_t(*pid)) : thread_;
      std::string file = task ? tl_.program_file(task) : "";
      return xfer_reply(file.empty() ? tl_.executable() : file, rest.substr(colon + 1));
    }
    if (v.rfind("qSymbol", 0) == 0) return "OK";
    return "";
  }

  /// `monitor` commands (gdb_monitor.h): the text goes to gdb's console in an O packet.
  std::string monitor(std::string_view hex_cmd) {
    auto bytes = from_hex(hex_cmd);
    if (!bytes) return "E01";
    send("O" + to_hex(monitor_.run(std::string(bytes->begin(), bytes->end()), thread_,
                                   last_stop_.event)));
    if (auto moved = monitor_.take_moved()) {
      // monitor goto: the replay stands elsewhere now (gdb reads registers again once told).
      last_stop_ = *moved;
      thread_ = stop_thread_ = moved->tid;
    }
    return "OK";
  }

  std::string read_registers() {
    Registers r = tl_.registers(thread_);
    std::string s;
    for (const auto& g : kRegisters) s += register_hex(r, g);
    return s;
  }

  std::string read_register(std::string_view num) {
    auto n = parse_hex(num);
    if (!n) return "E00";
    const GdbRegister* g = gdb_register(*n);
    if (!g) return "";  // not sent: gdb shows it unavailable
    return register_hex(tl_.registers(thread_), *g);
  }

  std::string read_memory(std::string_view args) {
    auto r = two_numbers(args, ',');
    if (!r) return "E00";
    auto bytes = tl_.read_memory(thread_, r->first, size_t(std::min<uint64_t>(r->second, 16384)));
    if (bytes.empty() && r->second > 0) return "E14";  // EFAULT
    return to_hex(bytes);
  }

  /// M ADDR,LEN:HEX. The write goes to a diversion (the timeline keeps the replay intact).
  std::string write_memory(std::string_view args) {
    size_t colon = args.find(':');
    if (colon == std::string_view::npos) return "E00";
    auto r = two_numbers(args.substr(0, colon), ',');
    auto bytes = from_hex(args.substr(colon + 1));
    if (!r || !bytes || bytes->size() != r->second) return "E00";
    tl_.write_memory(thread_, r->first, *bytes);
    return "OK";
  }

  /// P N=HEX for one of the registers in kRegisters.
  std::string write_register(std::string_view args) {
    size_t eq = args.find('=');
    if (eq == std::string_view::npos) return "E00";
    auto n = parse_hex(args.substr(0, eq));
    auto bytes = from_hex(args.substr(eq + 1));
    if (!n || !bytes) return "E00";
    const GdbRegister* known = gdb_register(*n);
    if (!known) return "E01";  // not one rewind handles (x87, SSE)
    const GdbRegister& g = *known;
    if (bytes->size() != size_t(g.size)) return "E00";
    Registers r = tl_.registers(thread_);
    set_register(r, g, bytes->data());
    tl_.set_registers(thread_, r);
    return "OK";
  }

  /// G HEX: the registers in kRegisters order (as many as given).
  std::string write_registers(std::string_view hex) {
    auto bytes = from_hex(hex);
    if (!bytes) return "E00";
    Registers r = tl_.registers(thread_);
    size_t at = 0;
    for (const auto& g : kRegisters) {
      if (at + size_t(g.size) > bytes->size()) break;
      set_register(r, g, bytes->data() + at);
      at += size_t(g.size);
    }
    tl_.set_registers(thread_, r);
    return "OK";
  }

  bool alive(std::string_view id_text) {
    auto id = parse_thread_id(id_text);
    if (!id) return false;
    for (auto& x : refresh_tasks())
      if (x.tid == pid_t(id->tid) && (id->pid <= 0 || x.pid == pid_t(id->pid))) return true;
    return false;
  }

  std::vector<TaskInfo> refresh_tasks() { return processes_.tasks(); }
  pid_t first_task_of(pid_t pid) { return processes_.first_task_of(pid); }
  pid_t pid_of(pid_t tid) { return processes_.pid_of(tid); }
  std::string thread_id(pid_t tid) { return processes_.thread_id(tid); }
  bool multiprocess() const { return processes_.multiprocess(); }

  /// Z/z TYPE,ADDR,KIND: 0/1 breakpoints, 2 write, 3 read, 4 access watchpoints.
  std::string breakpoint(bool insert, std::string_view args) {
    if (args.size() < 2 || args[1] != ',') return "E00";
    char type = args[0];
    std::string_view rest = args.substr(2);
    size_t comma = rest.find(',');
    if (comma == std::string_view::npos) return "E00";
    auto addr = parse_hex(rest.substr(0, comma)), len = parse_hex(rest.substr(comma + 1));
    if (!addr || !len) return "E00";
    if (type == '0' || type == '1') {
      // gdb names a breakpoint by its address in the process it debugs: with the
      // multiprocess extensions the one its last Hg named, else the last stop's. The site
      // made at insertion is the one to remove, wherever the replay is by then. Two
      // inferiors that run the same code (a fork()ed child) insert the same site: it stays
      // until neither wants it.
      pid_t in = multiprocess() ? thread_ : last_stop_.tid;
      auto key = std::make_pair(multiprocess() ? pid_of(in) : 0, *addr);
      if (insert) {
        if (breakpoints_.count(key)) return "OK";
        CodeSite site{"", *addr};
        try {
          site = tl_.code_site(in, *addr);
        } catch (const Error&) {
          // No live task: an address breakpoint.
        }
        tl_.add_breakpoint(site);
        breakpoints_[key] = site;
      } else if (auto it = breakpoints_.find(key); it != breakpoints_.end()) {
        CodeSite site = it->second;
        breakpoints_.erase(it);
        unwant(site);
      }
      return "OK";
    }
    if (type < '2' || type > '4') return "";
    // x86 has no read-only watchpoint: a read watchpoint watches reads and writes.
    WatchKind kind = type == '2' ? WatchKind::Write : WatchKind::ReadWrite;
    // Without the CPU's debug registers only writes can be watched: an empty reply tells gdb
    // that this kind is not supported ("Target does not support this type of hardware
    // watchpoint"), which is true here.
    if (kind == WatchKind::ReadWrite && !hardware_debug_registers()) return "";
    if (insert) {
      if (!tl_.add_watchpoint(*addr, int(*len), kind)) return "E01";
      watches_.push_back({*addr, kind});
    } else {
      tl_.remove_watchpoint(*addr, int(*len), kind);
      std::erase_if(watches_, [&](const W& w) { return w.addr == *addr && w.kind == kind; });
    }
    return "OK";
  }

  struct W {
    uint64_t addr;
    WatchKind kind;
  };
  Timeline& tl_;
  MonitorCommands monitor_;
  HostFiles files_{[this](pid_t pid, pid_t tid, std::string_view name) {
    return processes_.proc_file(pid, tid, name);
  }};
  asio::ip::tcp::socket& socket_;
  PacketReader reader_;
  bool acks_ = true, no_ack_next_ = false;
  StopInfo last_stop_;
  pid_t thread_ = 0;       ///< Hg: registers and memory; set to the thread of each stop
  pid_t step_thread_ = 0;  ///< Hc: the thread 's' and 'bs' step; 0: any
  pid_t stop_thread_ = 0;  ///< the thread of the last stop reply
  /// The thread a step moves: Hc's, else the last stop's, else the general thread.
  pid_t step_thread() const {
    return step_thread_ ? step_thread_ : stop_thread_ ? stop_thread_ : thread_;
  }
  std::vector<W> watches_;
  /// gdb's software breakpoints by (recorded pid, address); pid 0 without multiprocess.
  std::map<std::pair<pid_t, uint64_t>, CodeSite> breakpoints_;
  GdbProcesses processes_{tl_};
  std::optional<StopInfo> held_;  ///< a stop gdb has still to hear of (GdbProcesses::reply)
};

}  // namespace

std::string stop_reply(const StopInfo& s, bool first, WatchKind watch_kind,
                       std::string_view thread_id) {
  std::string thread = "thread:" + std::string(thread_id) + ";";
  switch (s.reason) {
    case StopReason::Breakpoint:
      return "T05swbreak:;" + thread;
    case StopReason::Watchpoint:
      return std::string("T05") + (watch_kind == WatchKind::Write ? "watch" : "awatch") + ":" +
             hex_number(s.addr) + ";" + thread;
    case StopReason::Signal: {
      char buf[8];
      snprintf(buf, sizeof buf, "T%02x", to_gdb_signal(s.signo));
      return buf + thread;
    }
    case StopReason::TraceStart:
      return first ? "T05" + thread : "T05replaylog:begin;" + thread;
    case StopReason::TraceEnd:
      return "T05replaylog:end;" + thread;
    case StopReason::Interrupted:
      return "T02" + thread;      // SIGINT, as gdb expects after its Ctrl-C
    case StopReason::CodeMapped:  // not asked for by this server; gdb's own name for it
      return "T05library:;" + thread;
    case StopReason::Step:
    case StopReason::Seek:
    case StopReason::Forked:  // GdbProcesses::reply makes those that gdb asked for
    case StopReason::Execed:
    case StopReason::ProcessExited:
      return "T05" + thread;
  }
  return "T05" + thread;
}

void serve(Timeline& timeline, asio::ip::tcp::socket& socket, const std::string& trace_dir) {
  Session s(timeline, socket, trace_dir);
  s.run();
}

}  // namespace rwd::gdb
