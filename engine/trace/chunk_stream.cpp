#include "chunk_stream.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <cstring>
#include <memory>

#include "engine/errors.h"
#include "engine/trace/bytes.h"

namespace rwd {

namespace {
constexpr char kFileMagic[8] = {'R', 'W', 'N', 'D', 'S', 'T', 'R', 'M'};
constexpr uint32_t kChunkMagic = fourcc("CHNK");
constexpr size_t kFileHeaderBytes = 24;
constexpr size_t kChunkHeaderBytes = 24;
constexpr int kZstdLevel = 1;

uint64_t chunk_checksum(const uint8_t* header16, const uint8_t* payload, size_t n) {
  XXH64_state_t* st = XXH64_createState();
  XXH64_reset(st, 0);
  XXH64_update(st, header16, 16);
  XXH64_update(st, payload, n);
  uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  return h;
}

void write_all(int fd, const uint8_t* p, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw_errno("write " + path);
    }
    p += w;
    n -= size_t(w);
  }
}

/// Compresses `raw` (records of one chunk; split when over kMaxChunkBytes) and writes it to
/// `fd` as one or more chunks; `records` goes in the first chunk's header. Returns the bytes
/// written. Throws Error or SystemError naming `path`.
uint64_t write_chunks(int fd, const std::vector<uint8_t>& raw, uint32_t records,
                      const std::string& path) {
  uint64_t written = 0;
  size_t off = 0;
  while (off < raw.size()) {
    size_t n = std::min<size_t>(raw.size() - off, kMaxChunkBytes);
    size_t cap = ZSTD_compressBound(n);
    std::unique_ptr<uint8_t[]> out(new uint8_t[kChunkHeaderBytes + cap]);  // not zero-filled
    size_t c = ZSTD_compress(out.get() + kChunkHeaderBytes, cap, raw.data() + off, n, kZstdLevel);
    if (ZSTD_isError(c)) throw Error(path + ": zstd: " + ZSTD_getErrorName(c));
    ByteWriter h;
    h.u32(kChunkMagic);
    h.u32(uint32_t(n));
    h.u32(uint32_t(c));
    h.u32(off == 0 ? records : 0);
    uint64_t sum = chunk_checksum(h.data().data(), out.get() + kChunkHeaderBytes, c);
    h.u64(sum);
    std::memcpy(out.get(), h.data().data(), kChunkHeaderBytes);
    write_all(fd, out.get(), kChunkHeaderBytes + c, path);
    written += kChunkHeaderBytes + c;
    off += n;
  }
  return written;
}
}  // namespace

ChunkWriter::ChunkWriter(std::string path, uint32_t kind, SerialWorker* worker, uint64_t trace_id)
    : path_(std::move(path)), worker_(worker) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_errno("create " + path_);
  ByteWriter h;
  h.raw(kFileMagic, 8);
  h.u32(kTraceFormatVersion);
  h.u32(kind);
  h.u64(trace_id);
  write_all(fd_, h.data().data(), h.size(), path_);
  file_size_ = h.size();
}

ChunkWriter::~ChunkWriter() {
  try {
    flush();
    if (worker_) worker_->drain();  // its jobs write to fd_
  } catch (...) {
  }
  if (fd_ >= 0) ::close(fd_);
}

void ChunkWriter::append(const std::vector<uint8_t>& record) {
  buf_.insert(buf_.end(), record.begin(), record.end());
  ++records_;
}

void ChunkWriter::append_bytes(const void* p, size_t n) {
  auto* b = static_cast<const uint8_t*>(p);
  buf_.insert(buf_.end(), b, b + n);
}

void ChunkWriter::flush() {
  if (buf_.empty()) return;
  std::vector<uint8_t> raw;
  raw.swap(buf_);
  buf_.reserve(raw.capacity());  // the next chunk is likely as big: no regrowth, no copies
  uint32_t records = records_;
  records_ = 0;
  if (!worker_) {
    file_size_ += write_chunks(fd_, raw, records, path_);
    return;
  }
  size_t cost = raw.size();
  worker_->submit(cost, [this, raw = std::move(raw), records] {
    file_size_ += write_chunks(fd_, raw, records, path_);
  });
}

void ChunkWriter::finish() {
  flush();
  if (worker_) worker_->drain();
}

ChunkReader::ChunkReader(std::string path, uint32_t kind, bool tolerate_torn_tail,
                         std::optional<uint64_t> trace_id)
    : path_(std::move(path)), tolerate_(tolerate_torn_tail) {
  f_ = std::fopen(path_.c_str(), "rbe");
  if (!f_) throw TraceError(path_ + ": cannot open: " + std::strerror(errno));
  std::fseek(f_, 0, SEEK_END);
  size_ = uint64_t(std::ftell(f_));
  std::fseek(f_, 0, SEEK_SET);
  uint8_t h[kFileHeaderBytes];
  if (size_ < kFileHeaderBytes || std::fread(h, 1, kFileHeaderBytes, f_) != kFileHeaderBytes)
    throw TraceError(path_, 0, "file too short for a trace stream header");
  if (std::memcmp(h, kFileMagic, 8) != 0)
    throw TraceError(path_, 0, "not a rewind trace stream (bad magic)");
  ByteReader r({h + 8, kFileHeaderBytes - 8}, path_, 8);
  uint32_t version = r.u32(), k = r.u32();
  trace_id_ = r.u64();
  if (version > kTraceFormatVersion)
    throw TraceError(path_, 8,
                     "trace format version " + std::to_string(version) +
                         " is newer than this rewind supports (" +
                         std::to_string(kTraceFormatVersion) + "); upgrade rewind");
  if (version == 0) throw TraceError(path_, 8, "invalid trace format version 0");
  if (version < kTraceFormatVersion)
    throw TraceError(path_, 8,
                     "trace format version " + std::to_string(version) +
                         " is older than this rewind reads (" +
                         std::to_string(kTraceFormatVersion) + "); record the program again");
  if (k != kind) throw TraceError(path_, 12, "stream kind does not match its file name");
  if (trace_id && *trace_id != trace_id_)
    throw TraceError(path_, 16,
                     "belongs to another recording (trace id " + hex_id(trace_id_) +
                         ", the trace's meta says " + hex_id(*trace_id) +
                         "): files of two traces were mixed");
  pos_ = kFileHeaderBytes;
}

std::string hex_id(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)id);
  return buf;
}

ChunkReader::~ChunkReader() {
  if (f_) std::fclose(f_);
}

void ChunkReader::seek(uint64_t next, uint64_t chunk_offset) {
  if (next > size_ || std::fseek(f_, long(next), SEEK_SET) != 0)
    throw TraceError(path_, next, "cannot seek back in the trace");
  pos_ = next;
  chunk_offset_ = chunk_offset;
}

std::optional<std::vector<uint8_t>> ChunkReader::next() {
  std::vector<uint8_t> out;
  if (!next_into(out)) return std::nullopt;
  return out;
}

bool ChunkReader::next_into(std::vector<uint8_t>& out) {
  out.clear();
  if (pos_ == size_) return false;
  chunk_offset_ = pos_;
  auto torn = [&](const std::string& why) {
    if (tolerate_) {
      torn_ = true;
      pos_ = size_;
      return false;
    }
    throw TraceError(path_, chunk_offset_, why);
  };
  if (size_ - pos_ < kChunkHeaderBytes) return torn("truncated chunk header");
  uint8_t hb[kChunkHeaderBytes];
  if (std::fread(hb, 1, kChunkHeaderBytes, f_) != kChunkHeaderBytes)
    return torn("read error in chunk header");
  ByteReader h({hb, kChunkHeaderBytes}, path_, pos_);
  uint32_t magic = h.u32(), raw = h.u32(), comp = h.u32();
  h.u32();  // record count, informational
  uint64_t sum = h.u64();
  bool last = false;
  if (magic != kChunkMagic) {
    if (tolerate_ && pos_ + kChunkHeaderBytes >= size_) return torn("");
    throw TraceError(path_, chunk_offset_, "bad chunk magic (corrupted trace)");
  }
  if (raw > kMaxChunkBytes || comp > kMaxChunkBytes)
    throw TraceError(path_, chunk_offset_, "chunk size out of bounds (corrupted trace)");
  if (comp > size_ - pos_ - kChunkHeaderBytes)
    return torn("chunk extends past the end of the file (truncated trace)");
  last = pos_ + kChunkHeaderBytes + comp == size_;
  // Freed once decompressed: memory live across chunks raises the heap's high-water mark,
  // which is what costs page faults (rewind keeps freed memory, cli/main.cpp).
  std::unique_ptr<uint8_t[]> payload(new uint8_t[comp]);  // not zero-filled
  if (std::fread(payload.get(), 1, comp, f_) != comp) return torn("read error in chunk");
  if (chunk_checksum(hb, payload.get(), comp) != sum) {
    if (last && tolerate_) return torn("");
    throw TraceError(path_, chunk_offset_, "chunk checksum mismatch (corrupted trace)");
  }
  out.resize(raw);  // in the capacity `out` brings, where it is enough
  size_t d = ZSTD_decompress(out.data(), raw, payload.get(), comp);
  if (ZSTD_isError(d) || d != raw) {
    out.clear();
    throw TraceError(path_, chunk_offset_, "chunk does not decompress (corrupted trace)");
  }
  pos_ += kChunkHeaderBytes + comp;
  return true;
}

}  // namespace rwd
