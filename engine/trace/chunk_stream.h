// One stream file of a trace: a header followed by self-checking, zstd-compressed chunks.
// Layout (little-endian), documented for users in docs/trace-format.md:
//   header: "RWNDSTRM" (8 bytes), u32 format version, u32 stream kind (FourCC),
//           u64 trace id (random, the same in every stream of one trace)
//   chunk:  u32 'CHNK', u32 raw size, u32 compressed size, u32 record count,
//           u64 XXH64 of the 16 header bytes before it and the compressed payload, payload
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/trace/serial_worker.h"

namespace rwd {

/// Trace format version written by this build; readers refuse newer versions.
/// 2: events carry buffered syscall records; 3: every stream header holds the trace id;
/// 4: mmap events name the shared file they map (Event::shared_file); 5: cpuid is emulated
/// (Cpuid events; a version 4 trace ran it natively, and its replay would fault on them);
/// 6: points carry a digest of their stack window (Event::stack_digest); 7: and of the memory
/// around their registers' values (Event::register_digest); 8: syscall events carry the bytes
/// a write into /proc/PID/mem put into a recorded process (Event::written_memory); 9: the
/// preload library's descriptor cache; 10: brk is buffered, and replay makes it for real
/// where the library makes it (run_call_in_replay); 11: so are rt_sigaction and
/// rt_sigprocmask; 12: points carry the stack words above their rsp (Event::stack_words).
constexpr uint32_t kTraceFormatVersion = 12;
/// Largest raw or compressed chunk accepted by the reader, in bytes (bounds every allocation).
constexpr uint32_t kMaxChunkBytes = 64u << 20;

/// FourCC of a stream kind, e.g. fourcc("EVNT").
constexpr uint32_t fourcc(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 | uint32_t(uint8_t(s[2])) << 16 |
         uint32_t(uint8_t(s[3])) << 24;
}

/// Writes one stream. Records are appended to an in-memory chunk; flush() compresses the chunk,
/// writes it with one write(2) and starts the next. Without a worker, bytes written by flush()
/// survive a crash of this process (they are in the page cache). With one, flush() hands the
/// chunk to the worker, which compresses and writes it in the background, in order with the
/// other writers sharing that worker; a crash loses what it had not written yet, and a reader
/// sees a torn tail. finish() waits for the worker and reports any failed write.
class ChunkWriter {
 public:
  /// Creates (truncates) `path`. `worker`, if given, compresses and writes this stream's chunks
  /// and must outlive the writer. `trace_id` goes in the header (every stream of a trace has
  /// the same). Throws SystemError.
  ChunkWriter(std::string path, uint32_t kind, SerialWorker* worker = nullptr,
              uint64_t trace_id = 0);
  /// Flushes and waits for the worker; errors are dropped here (call finish() to see them).
  ~ChunkWriter();
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  /// Appends one record (its bytes are never split across chunks).
  void append(const std::vector<uint8_t>& record);
  /// Appends raw bytes that may be split across chunks (the data stream).
  void append_bytes(const void* p, size_t n);
  /// The current chunk's bytes, for a caller that appends raw bytes in place (as append_bytes
  /// does, without a copy through a buffer of its own).
  std::vector<uint8_t>& pending_bytes() { return buf_; }
  /// Bytes waiting in the current chunk.
  size_t pending() const { return buf_.size(); }
  /// Writes the pending chunk, if any (or queues it on the worker). Throws SystemError or Error
  /// (including a failure of an earlier chunk on the worker).
  void flush();
  /// flush(), then waits until the worker has written every chunk. Throws SystemError or
  /// Error for any chunk that failed. The file is then whole in the page cache: it survives
  /// this process being killed, as every write(2) does. It is not forced to disk
  /// (fdatasync(2)): a new trace replaces nothing, and rr forces a trace's files only where
  /// it rewrites an existing trace (`rr pack`). The four fdatasyncs of a recording cost 2-3 ms
  /// on this project's machines, about a tenth of a recording of /bin/true (docs/performance.md,
  /// "No fdatasync when a recording ends"). A machine crash
  /// before the kernel's writeback can leave a torn or zeroed tail, which the reader reports
  /// by its chunk checksums.
  void finish();
  /// Total bytes written to the file so far (header and chunks); every chunk after finish().
  uint64_t file_size() const { return file_size_; }

 private:
  std::string path_;
  int fd_ = -1;
  SerialWorker* worker_ = nullptr;
  std::vector<uint8_t> buf_;
  uint32_t records_ = 0;
  std::atomic<uint64_t> file_size_ = 0;
};

/// Reads one stream chunk by chunk, verifying header, version, sizes and checksums.
class ChunkReader {
 public:
  /// Opens `path` and checks its header. `tolerate_torn_tail`: an incomplete or unreadable
  /// last chunk ends the stream quietly (recording was interrupted) instead of raising.
  /// `trace_id`, when given, must be the id in the header (a stream of another recording
  /// swapped in is refused). Throws TraceError naming the file and offset.
  ChunkReader(std::string path, uint32_t kind, bool tolerate_torn_tail,
              std::optional<uint64_t> trace_id = std::nullopt);
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  /// The next chunk's decompressed bytes, or nullopt at the end of the stream.
  std::optional<std::vector<uint8_t>> next();
  /// next() into `out`, whose capacity is reused (the events stream's reader passes the same
  /// vector for every chunk). Returns false at the end of the stream (`out` is then empty).
  /// Throws TraceError as next() does.
  bool next_into(std::vector<uint8_t>& out);
  /// Offset in the file where the chunk last returned by next() starts.
  uint64_t chunk_offset() const { return chunk_offset_; }
  /// True when next() ended at a torn tail rather than a clean end of file.
  bool torn() const { return torn_; }
  const std::string& path() const { return path_; }
  /// The trace id in the stream's header.
  uint64_t trace_id() const { return trace_id_; }
  /// Size of the file in bytes.
  uint64_t file_size() const { return size_; }
  /// Where the next chunk starts (with chunk_offset(), what seek() takes back).
  uint64_t next_offset() const { return pos_; }
  /// Goes back (or forward) to a place saved from next_offset() and chunk_offset(): the
  /// next chunk read starts at `next`. Throws TraceError if the file cannot seek.
  void seek(uint64_t next, uint64_t chunk_offset);

 private:
  std::string path_;
  FILE* f_ = nullptr;
  uint64_t size_ = 0;
  uint64_t pos_ = 0;
  uint64_t chunk_offset_ = 0;
  bool tolerate_ = false;
  bool torn_ = false;
  uint64_t trace_id_ = 0;
};

/// A trace id as 16 hexadecimal digits (for messages).
std::string hex_id(uint64_t id);

}  // namespace rwd
