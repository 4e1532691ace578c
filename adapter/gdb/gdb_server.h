// A gdb remote-protocol server over a timeline (gdb manual, "Remote Protocol"), so that gdb
// drives a replay forwards and backwards as it drives rr.
#pragma once

#include <asio/ip/tcp.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/timeline/timeline.h"

namespace rwd::gdb {

/// Serves one gdb connection on the connected `socket` until gdb detaches, kills or
/// disconnects. Packets it does not know get the empty reply, as the protocol asks; writes
/// to memory and registers are refused with an error (diversions are not built yet).
/// `trace_dir` is the trace the timeline replays (monitor history replays it again).
/// Throws Error on a broken connection.
void serve(Timeline& timeline, asio::ip::tcp::socket& socket, const std::string& trace_dir);

/// The stop-reply packet payload for `stop` (a T packet with the thread, and swbreak,
/// watch/awatch or replaylog:begin/end where they apply). `first` marks the initial stop,
/// which gdb must not see as the start of the replay log. `thread_id` names the stopped
/// thread as the connection does ("TID", or "pPID.TID" with the multiprocess extensions).
std::string stop_reply(const StopInfo& stop, bool first, WatchKind watch_kind,
                       std::string_view thread_id);

}  // namespace rwd::gdb
