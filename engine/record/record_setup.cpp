// Preparing a recording and rewind's own signals while it runs (record_setup.h).
#include "engine/record/record_setup.h"

#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/record/syscall_buffer.h"
#include "engine/record/task_cpu_clock.h"
#include "engine/trace/trace_dir.h"
#include "engine/trace/trace_files.h"

extern char** environ;

namespace rwd {

namespace {
volatile sig_atomic_t g_forward_to = 0;
volatile sig_atomic_t g_tick_due = 0;
volatile sig_atomic_t g_slice_due = 0;
volatile sig_atomic_t g_terminations = 0;  ///< SIGTERMs and SIGHUPs received

void forward_signal(int sig) {
  // The first goes to the program; the next ends the recording (take_end_request).
  g_terminations = g_terminations + 1;
  if (g_terminations == 1 && g_forward_to > 0) kill(g_forward_to, sig);
}

void on_timer_signal(int) {
  g_tick_due = 1;
}

void on_slice_signal(int) {
  g_slice_due = 1;
}

/// Adds LD_BIND_NOW=1 to `env` unless the user set LD_BIND_NOW (to anything) already.
/// The dynamic loader's lazy binding (_dl_runtime_resolve_xsavec, glibc's
/// sysdeps/x86_64/dl-trampoline.h) saves the vector registers on the stack with XSAVEC,
/// whose bytes depend on which register components the CPU tracks as in use (XINUSE, Intel
/// SDM vol. 1, 13.6): that differs between record and replay on some machines (a KVM guest
/// here), and the bytes left behind on the stack then differ at points whose digest covers
/// them (a signal's arrival in a frame with an unwritten slot). Binding every symbol at
/// start (ld.so(8), LD_BIND_NOW) leaves the resolver out.
void bind_now(std::vector<std::string>& env) {
  for (const auto& v : env)
    if (v.rfind("LD_BIND_NOW=", 0) == 0) return;
  env.push_back("LD_BIND_NOW=1");
}
}  // namespace

RecordSetup prepare_recording(const RecordOptions& opts) {
  RecordSetup s;
  s.program = find_program(opts.argv[0]);
  if (s.program.empty()) throw Error("cannot find program '" + opts.argv[0] + "'");
  if (!opts.output_dir.empty()) {
    s.dir = opts.output_dir;
    // Missing parents are made, as `mkdir -p` would; the directory itself must be new or
    // empty.
    std::error_code ec;
    std::filesystem::path parent = std::filesystem::absolute(s.dir, ec).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (::mkdir(s.dir.c_str(), 0755) != 0 && !(errno == EEXIST && is_empty_dir(s.dir)))
      throw SystemError("create trace directory " + s.dir, errno);
    // latest-trace follows it too, so that a bare `rewind replay` opens it (rr does the
    // same). Without a traces root (no HOME), the trace is only where -o put it.
    try {
      s.traces_root = traces_root();
    } catch (const Error&) {
    }
  } else {
    s.traces_root = traces_root();
    s.dir = create_trace_dir(s.traces_root, s.program.substr(s.program.find_last_of('/') + 1));
  }
  if (::mkdir((s.dir + "/" + kFilesDir).c_str(), 0755) != 0)
    throw SystemError("create " + s.dir + "/" + kFilesDir, errno);
  s.meta.argv = opts.argv;
  for (char** e = environ; *e; ++e) s.meta.env.push_back(*e);
  bind_now(s.meta.env);
  struct stat st;
  if (fstat(1, &st) == 0) s.stdout_st = st;
  if (fstat(2, &st) == 0) s.stderr_st = st;
  if (::stat("/proc", &st) == 0) s.proc_dev = st.st_dev;
  if (opts.syscall_buffer) {
    std::string lib = preload_library_path();
    if (lib.empty()) {
      fprintf(stderr,
              "rewind: librewind_preload.so is not next to rewind; recording without "
              "syscall buffering\n");
    } else {
      std::vector<const struct stat*> outputs;
      if (s.stdout_st) outputs.push_back(&*s.stdout_st);
      if (s.stderr_st) outputs.push_back(&*s.stderr_st);
      s.meta.env = preload_environment(s.meta.env, lib, outputs, s.proc_dev);
      s.syscall_buffer = true;
    }
  }
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd)) s.meta.cwd = cwd;
  s.meta.start_time = int64_t(time(nullptr));
  s.meta.ticks = "none";
  return s;
}

void handle_own_signals(pid_t root) {
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  g_forward_to = root;
  struct sigaction sa {};
  sa.sa_handler = forward_signal;  // no SA_RESTART: a second one must interrupt waitpid
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  sa.sa_handler = on_timer_signal;  // no SA_RESTART: the timer interrupts waitpid
  sigaction(SIGALRM, &sa, nullptr);
  sa.sa_handler = on_slice_signal;
  sigaction(kSliceSignal, &sa, nullptr);
}

bool take_tick() {
  if (!g_tick_due) return false;
  g_tick_due = 0;
  return true;
}

bool take_end_request() {
  static bool taken = false;
  if (taken || g_terminations < 2) return false;
  taken = true;
  return true;
}

bool take_slice_signal() {
  if (!g_slice_due) return false;
  g_slice_due = 0;
  return true;
}

void set_tick_timer(long first_us, long interval_us) {
  itimerval it{};
  it.it_value.tv_sec = first_us / 1'000'000;
  it.it_value.tv_usec = first_us % 1'000'000;
  it.it_interval.tv_sec = interval_us / 1'000'000;
  it.it_interval.tv_usec = interval_us % 1'000'000;
  setitimer(ITIMER_REAL, &it, nullptr);
}

std::string find_program(const std::string& name) {
  auto ok = [](const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return ok(name) ? name : "";
  const char* path = getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t i = 0;
  while (i <= dirs.size()) {
    size_t j = dirs.find(':', i);
    if (j == std::string::npos) j = dirs.size();
    std::string d = dirs.substr(i, j - i);
    std::string p = (d.empty() ? "." : d) + "/" + name;
    if (ok(p)) return p;
    i = j + 1;
  }
  return "";
}

}  // namespace rwd
