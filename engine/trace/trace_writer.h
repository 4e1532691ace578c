// Writes a trace directory (docs/trace-format.md): version, meta, events, data, files/,
// and processes at the end.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/trace/bytes.h"
#include "engine/trace/chunk_stream.h"
#include "engine/trace/event.h"
#include "engine/trace/trace_meta.h"

namespace rwd {

/// Appends events to a new trace. Chunks are flushed often (by size and by time), data before
/// events, so a crash of the recorder loses at most the last fraction of a second. One
/// background thread compresses and writes the flushed chunks, in that order (zstd is slower
/// than the program being recorded when it reads many files: about 100 MB/s on the development
/// VM), so the recorder and its tracees go on meanwhile.
class TraceWriter {
 public:
  /// Creates the trace files in the existing, empty directory `dir`. Throws SystemError.
  TraceWriter(std::string dir, const TraceMeta& meta);
  /// Numbers `e` (next event number) and appends it. Returns the number.
  uint64_t write(Event& e);
  /// The data stream's pending bytes, for a caller that puts an event's memory regions there
  /// itself before write()s it (marking them MemoryRegion::in_data, in the order of
  /// Event::memory): an exec's MiBs are then read from the tracee once, straight into the
  /// chunk, not into a buffer of their own first. No other event may be written in between,
  /// and a caller that fails before its write() must cut the bytes it appended.
  std::vector<uint8_t>& next_event_data() { return data_->pending_bytes(); }
  /// Writes the End event, writes out the streams (ChunkWriter::finish) and then `processes`,
  /// by a rename, so that a trace with `processes` has every event.
  void finish(TraceSummary summary);
  /// Flushes pending chunks now (data first, then events).
  void flush();
  /// True when events or data wait in memory for the next flush.
  bool has_pending() const { return events_->pending() || data_->pending(); }
  const std::string& dir() const { return dir_; }
  /// Number of the last event written (0 before the first).
  uint64_t last_event() const { return next_ - 1; }

 private:
  std::string dir_;
  SerialWorker compressor_;  // outlives events_ and data_, which queue jobs on it
  uint64_t trace_id_;        // random, in the header of every stream of this trace
  std::unique_ptr<ChunkWriter> events_, data_;
  ByteWriter record_;  // the event being encoded; kept so that its capacity is reused
  uint64_t next_ = 1;
  int64_t last_flush_ns_ = 0;
};

}  // namespace rwd
