// Linux signal numbers to the numbers of gdb's remote protocol (gdb/signals.def, "enum
// gdb_signal"), which differ from Linux's for many signals.
#pragma once

namespace rwd::gdb {

/// The gdb protocol number for Linux signal `sig`; 143 (GDB_SIGNAL_UNKNOWN) if it has none.
int to_gdb_signal(int sig);

}  // namespace rwd::gdb
