#include "adapter/gdb/gdb_signals.h"

#include <signal.h>

namespace rwd::gdb {

namespace {
/// Linux number -> gdb number, from gdb/signals.def.
struct Entry {
  int linux_sig, gdb_sig;
};
constexpr Entry kTable[] = {
    {SIGHUP, 1},      {SIGINT, 2},   {SIGQUIT, 3},   {SIGILL, 4},   {SIGTRAP, 5},  {SIGABRT, 6},
    {SIGFPE, 8},      {SIGKILL, 9},  {SIGBUS, 10},   {SIGSEGV, 11}, {SIGSYS, 12},  {SIGPIPE, 13},
    {SIGALRM, 14},    {SIGTERM, 15}, {SIGURG, 16},   {SIGSTOP, 17}, {SIGTSTP, 18}, {SIGCONT, 19},
    {SIGCHLD, 20},    {SIGTTIN, 21}, {SIGTTOU, 22},  {SIGIO, 23},   {SIGXCPU, 24}, {SIGXFSZ, 25},
    {SIGVTALRM, 26},  {SIGPROF, 27}, {SIGWINCH, 28}, {SIGUSR1, 30}, {SIGUSR2, 31}, {SIGPWR, 32},
    {SIGSTKFLT, 143},
};
constexpr int kRealtimeBase = 45;  // GDB_SIGNAL_REALTIME_34 is 46; 33..63 map in two runs
}  // namespace

int to_gdb_signal(int sig) {
  for (const auto& e : kTable)
    if (e.linux_sig == sig) return e.gdb_sig;
  if (sig == 32) return 77;                                       // GDB_SIGNAL_REALTIME_32
  if (sig >= 33 && sig <= 63) return kRealtimeBase + (sig - 33);  // REALTIME_33 is 45
  return 143;
}

}  // namespace rwd::gdb
