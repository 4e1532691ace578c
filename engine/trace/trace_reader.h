// Reads a trace directory written by TraceWriter, trusting nothing in it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/trace/chunk_stream.h"
#include "engine/trace/event.h"
#include "engine/trace/trace_meta.h"

namespace rwd {

/// Iterates over the events of a trace. A complete trace (one with `processes`) must be intact:
/// any truncation or corruption raises TraceError with file and offset. An interrupted trace
/// (recording killed) ends quietly at its last complete event; interrupted() then says so.
class TraceReader {
 public:
  /// Opens the trace directory `dir`. Throws TraceError.
  explicit TraceReader(std::string dir);
  ~TraceReader();
  const TraceMeta& meta() const { return meta_; }
  /// The summary written at the end of recording; nullopt for an interrupted trace.
  const std::optional<TraceSummary>& summary() const { return summary_; }
  /// The next event, or nullopt at the end (after End, or at the end of an interrupted trace).
  std::optional<Event> next();
  /// True once next() has returned nullopt without seeing an End event.
  bool interrupted() const { return interrupted_; }
  /// Number of the last event returned by next() (0 before the first).
  uint64_t last_event() const { return last_; }
  const std::string& dir() const { return dir_; }
  /// Where the reader stands: enough to continue reading from the same event later.
  struct Position {
    uint64_t events_next = 0, events_chunk = 0, data_next = 0, data_chunk = 0;
    std::vector<uint8_t> chunk;  ///< the current events chunk
    size_t chunk_pos = 0;
    std::vector<uint8_t> data_buf;  ///< data read ahead of the events
    uint64_t last = 0;
    bool done = false, interrupted = false;
  };
  /// The current position (copies the current chunk: some tens of KiB).
  Position position() const;
  /// Continues from `p`, taken from a reader of the same trace. Throws TraceError.
  void seek(const Position& p);
  /// Absolute path of a saved file named in an event (files/NAME). Throws TraceError if the
  /// name is not a plain file name or the file is missing.
  std::string file_path(const std::string& name) const;

 private:
  std::vector<uint8_t> read_data(size_t n);
  std::string dir_;
  TraceMeta meta_;
  std::optional<TraceSummary> summary_;
  int32_t root_pid_ = 0;  // the first process: its exit event must match the summary
  std::unique_ptr<ChunkReader> events_, data_;
  std::vector<uint8_t> chunk_;
  size_t chunk_pos_ = 0;
  /// The data chunk being read and where its unread bytes start: events take their data from
  /// here in order (copied once, into the event; no second buffer of read-ahead bytes).
  std::vector<uint8_t> data_chunk_;
  size_t data_pos_ = 0;
  uint64_t last_ = 0;
  bool done_ = false;
  bool interrupted_ = false;
};

/// Reads only `meta` of a trace (cheap; for `rewind ls`). Throws TraceError.
TraceMeta read_trace_meta(const std::string& dir);
/// Reads `processes` of a trace; nullopt when absent (interrupted recording). Throws TraceError.
std::optional<TraceSummary> read_trace_summary(const std::string& dir);

}  // namespace rwd
