#include "trace_writer.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fstream>

#include "engine/errors.h"
#include "engine/trace/bytes.h"
#include "engine/trace/event_codec.h"
#include "engine/trace/trace_files.h"

namespace rwd {

namespace {
// Flush a chunk when this much is pending, or when this long has passed since the last flush.
// Data chunks of 1 MiB rather than 4: the chunk buffers (the writer's two, the reader's one)
// are what a short recording or replay touches first, a page fault per 4 KiB (about 10 us on
// a paravirtualised guest); they compress as well (docs/performance.md, "Page faults in the
// trace's buffers").
constexpr size_t kFlushEventBytes = 256 << 10;
constexpr size_t kFlushDataBytes = 1 << 20;
constexpr int64_t kFlushIntervalNs = 100'000'000;
// Raw bytes queued for the compressor before flush() waits for it.
constexpr size_t kMaxQueuedBytes = 16 << 20;

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

namespace {

/// A fresh random trace id (getrandom(2); never 0).
uint64_t new_trace_id() {
  uint64_t id = 0;
  while (id == 0)
    if (getrandom(&id, sizeof id, 0) != sizeof id && errno != EINTR) throw_errno("getrandom");
  return id;
}

}  // namespace

int exit_code_for_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

TraceWriter::TraceWriter(std::string dir, const TraceMeta& meta)
    : dir_(std::move(dir)), compressor_(kMaxQueuedBytes), trace_id_(new_trace_id()) {
  if (::mkdir((dir_ + "/" + kFilesDir).c_str(), 0755) != 0 && errno != EEXIST)
    throw_errno("mkdir " + dir_ + "/" + kFilesDir);
  {
    std::ofstream v(dir_ + "/" + kVersionFile);
    v << kVersionLine << kTraceFormatVersion << "\n";
    if (!v) throw Error("cannot write " + dir_ + "/" + kVersionFile);
  }
  {
    ChunkWriter m(dir_ + "/" + kMetaFile, kMetaKind, nullptr, trace_id_);
    m.append(encode_meta(meta));
    m.finish();
  }
  events_ =
      std::make_unique<ChunkWriter>(dir_ + "/" + kEventsFile, kEventsKind, &compressor_, trace_id_);
  data_ = std::make_unique<ChunkWriter>(dir_ + "/" + kDataFile, kDataKind, &compressor_, trace_id_);
  // Room for a whole chunk and then some (its pages are touched only as data is written): the
  // first exec's memory (MiBs) then goes in without a regrowth, and nor do the small events
  // after it (a regrowth copies the chunk into freshly faulted pages, about 10 us a page on a
  // paravirtualised guest).
  data_->pending_bytes().reserve(kFlushDataBytes + kFlushDataBytes / 2);
  last_flush_ns_ = now_ns();
}

uint64_t TraceWriter::write(Event& e) {
  e.number = next_++;
  record_.clear();                                   // its capacity stays: no allocation per event
  encode_event(e, record_, data_->pending_bytes());  // the data straight into the data chunk
  events_->append(record_.data());
  if (events_->pending() >= kFlushEventBytes || data_->pending() >= kFlushDataBytes ||
      now_ns() - last_flush_ns_ >= kFlushIntervalNs)
    flush();
  return e.number;
}

void TraceWriter::flush() {
  data_->flush();
  events_->flush();
  last_flush_ns_ = now_ns();
}

void TraceWriter::finish(TraceSummary summary) {
  Event end;
  end.kind = EventKind::End;
  write(end);
  data_->finish();
  events_->finish();
  summary.events = last_event();
  summary.events_bytes = events_->file_size();
  summary.data_bytes = data_->file_size();
  std::string tmp = dir_ + "/" + kProcessesFile + ".tmp";
  {
    ChunkWriter p(tmp, kProcessesKind, nullptr, trace_id_);
    p.append(encode_summary(summary));
    p.finish();
  }
  if (::rename(tmp.c_str(), (dir_ + "/" + kProcessesFile).c_str()) != 0)
    throw_errno("rename " + tmp);
}

}  // namespace rwd
