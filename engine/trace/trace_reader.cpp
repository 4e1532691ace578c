#include "trace_reader.h"

#include <sys/stat.h>

#include <fstream>

#include "engine/errors.h"
#include "engine/trace/bytes.h"
#include "engine/trace/event_codec.h"
#include "engine/trace/saved_files.h"
#include "engine/trace/trace_files.h"

namespace rwd {

namespace {
void check_version(const std::string& dir) {
  std::string path = dir + "/" + kVersionFile;
  std::ifstream v(path);
  if (!v) {
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) throw TraceError(dir + ": no such trace");
    throw TraceError(dir + ": not a rewind trace (no " + kVersionFile + " file)");
  }
  std::string line;
  std::getline(v, line);
  std::string prefix = kVersionLine;
  if (line.compare(0, prefix.size(), prefix) != 0)
    throw TraceError(path, 0, "not a rewind trace version file");
  unsigned long version = 0;
  try {
    version = std::stoul(line.substr(prefix.size()));
  } catch (...) {
    throw TraceError(path, prefix.size(), "unreadable format version");
  }
  if (version > kTraceFormatVersion)
    throw TraceError(path, prefix.size(),
                     "trace format version " + std::to_string(version) +
                         " is newer than this rewind supports (" +
                         std::to_string(kTraceFormatVersion) + "); upgrade rewind");
  if (version < kTraceFormatVersion)
    throw TraceError(path, prefix.size(),
                     "trace format version " + std::to_string(version) +
                         " is older than this rewind reads (" +
                         std::to_string(kTraceFormatVersion) + "); record the program again");
}

/// The one record of a small stream (meta, processes); its header's trace id in `*id`
/// (checked against `*id` first when `expected`).
std::vector<uint8_t> single_record(const std::string& path, uint32_t kind, uint64_t* id,
                                   bool expected) {
  ChunkReader r(path, kind, false, expected ? std::optional<uint64_t>(*id) : std::nullopt);
  *id = r.trace_id();
  auto c = r.next();
  if (!c) throw TraceError(path, r.file_size(), "empty file");
  return *c;
}

/// The meta record of `dir`, and its trace id in `*id`.
TraceMeta meta_and_id(const std::string& dir, uint64_t* id) {
  check_version(dir);
  std::string p = dir + "/" + kMetaFile;
  return decode_meta(single_record(p, kMetaKind, id, false), p);
}

/// The summary of `dir`, whose stream must carry trace id `id`; nullopt when the recording
/// did not end normally.
std::optional<TraceSummary> summary_with_id(const std::string& dir, uint64_t id) {
  std::string p = dir + "/" + kProcessesFile;
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return std::nullopt;
  return decode_summary(single_record(p, kProcessesKind, &id, true), p);
}

}  // namespace

TraceMeta read_trace_meta(const std::string& dir) {
  uint64_t id = 0;
  return meta_and_id(dir, &id);
}

std::optional<TraceSummary> read_trace_summary(const std::string& dir) {
  std::string p = dir + "/" + kProcessesFile;
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return std::nullopt;
  uint64_t id = ChunkReader(dir + "/" + kMetaFile, kMetaKind, false).trace_id();
  return summary_with_id(dir, id);
}

TraceReader::TraceReader(std::string dir) : dir_(std::move(dir)) {
  uint64_t id = 0;  // read once, from meta: every other stream must carry it
  meta_ = meta_and_id(dir_, &id);
  summary_ = summary_with_id(dir_, id);
  bool tolerate = !summary_.has_value();
  events_ = std::make_unique<ChunkReader>(dir_ + "/" + kEventsFile, kEventsKind, tolerate, id);
  data_ = std::make_unique<ChunkReader>(dir_ + "/" + kDataFile, kDataKind, tolerate, id);
  if (summary_)
    for (const ProcessInfo& p : summary_->processes)
      if (p.ppid == 0) root_pid_ = p.pid;
  if (summary_) {
    if (events_->file_size() != summary_->events_bytes)
      throw TraceError(
          events_->path(), std::min(events_->file_size(), summary_->events_bytes),
          "file is " + std::to_string(events_->file_size()) + " bytes but the recording wrote " +
              std::to_string(summary_->events_bytes) + " (truncated or altered trace)");
    if (data_->file_size() != summary_->data_bytes)
      throw TraceError(data_->path(), std::min(data_->file_size(), summary_->data_bytes),
                       "file is " + std::to_string(data_->file_size()) +
                           " bytes but the recording wrote " +
                           std::to_string(summary_->data_bytes) + " (truncated or altered trace)");
  }
}

TraceReader::~TraceReader() = default;

std::vector<uint8_t> TraceReader::read_data(size_t n) {
  std::vector<uint8_t> out;
  // n comes from the trace: room is made for what the current chunk holds, not for n itself.
  out.reserve(std::min(n, data_chunk_.size() - data_pos_));
  while (out.size() < n) {
    if (data_pos_ == data_chunk_.size()) {
      data_pos_ = 0;
      // Freed before the next is read, so that the next chunk can take its memory: what
      // costs page faults is the heap's high-water mark (rewind keeps freed memory,
      // cli/main.cpp), and a chunk (MiBs) kept for its capacity raises it.
      std::vector<uint8_t>().swap(data_chunk_);
      if (!data_->next_into(data_chunk_))
        throw TraceError(data_->path(), data_->file_size(), "data stream ends early");
    }
    const size_t take = std::min(n - out.size(), data_chunk_.size() - data_pos_);
    out.insert(out.end(), data_chunk_.begin() + long(data_pos_),
               data_chunk_.begin() + long(data_pos_ + take));
    data_pos_ += take;
  }
  return out;
}

std::optional<Event> TraceReader::next() {
  if (done_) return std::nullopt;
  while (chunk_pos_ >= chunk_.size()) {
    chunk_pos_ = 0;
    if (!events_->next_into(chunk_)) {
      done_ = true;
      if (summary_)
        throw TraceError(events_->path(), events_->file_size(),
                         "events end before the End event (truncated trace)");
      interrupted_ = true;
      return std::nullopt;
    }
  }
  ByteReader r({chunk_.data() + chunk_pos_, chunk_.size() - chunk_pos_}, events_->path(),
               events_->chunk_offset());
  Event e;
  try {
    e = decode_event(r, [this](size_t n) { return read_data(n); });
  } catch (const TraceError&) {
    if (!summary_ && data_->torn()) {  // data lost with the interrupted recording
      done_ = interrupted_ = true;
      return std::nullopt;
    }
    throw;
  }
  chunk_pos_ += r.pos();
  if (e.number != last_ + 1)
    throw TraceError(events_->path(), events_->chunk_offset(),
                     "event " + std::to_string(e.number) + " follows event " +
                         std::to_string(last_) + " (corrupted trace)");
  last_ = e.number;
  if (e.number == 1) root_pid_ = e.tid;  // the first process's exec, whatever `processes` says
  if (e.kind == EventKind::Exit && summary_ && e.tid == root_pid_ &&
      e.status != summary_->root_status)
    throw TraceError(dir_ + "/" + kProcessesFile, 0,
                     "the first process's exit status (" + std::to_string(summary_->root_status) +
                         ") disagrees with its exit event " + std::to_string(e.number) + " (" +
                         std::to_string(e.status) + "): altered trace");
  if (e.kind == EventKind::End) {
    done_ = true;
    return std::nullopt;
  }
  return e;
}

TraceReader::Position TraceReader::position() const {
  Position p;
  p.events_next = events_->next_offset();
  p.events_chunk = events_->chunk_offset();
  p.data_next = data_->next_offset();
  p.data_chunk = data_->chunk_offset();
  p.chunk = chunk_;
  p.chunk_pos = chunk_pos_;
  p.data_buf.assign(data_chunk_.begin() + long(data_pos_), data_chunk_.end());
  p.last = last_;
  p.done = done_;
  p.interrupted = interrupted_;
  return p;
}

void TraceReader::seek(const Position& p) {
  events_->seek(p.events_next, p.events_chunk);
  data_->seek(p.data_next, p.data_chunk);
  chunk_ = p.chunk;
  chunk_pos_ = p.chunk_pos;
  data_chunk_.assign(p.data_buf.begin(), p.data_buf.end());
  data_pos_ = 0;
  last_ = p.last;
  done_ = p.done;
  interrupted_ = p.interrupted;
}

std::string TraceReader::file_path(const std::string& name) const {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    throw TraceError(events_->path(), events_->chunk_offset(), "bad saved-file name in event");
  check_saved_file(dir_, name);
  return dir_ + "/" + kFilesDir + "/" + name;
}

}  // namespace rwd
