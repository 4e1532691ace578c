// Little-endian encoding of trace records. ByteReader never trusts a size from its input:
// every read is bounds-checked and a short buffer raises TraceError.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "engine/errors.h"

namespace rwd {

/// Makes room in `v` for `more` bytes at once, at least doubling its capacity when it grows:
/// data appended piece by piece (an event's regions) then moves to new pages once, not at
/// every regrowth (each new page costs a fault, about 10 us on a paravirtualised guest).
inline void make_room(std::vector<uint8_t>& v, size_t more) {
  if (v.size() + more > v.capacity()) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}

static_assert(std::endian::native == std::endian::little, "rewind supports little-endian x86-64");

/// Appends fixed-width little-endian integers, byte strings and length-prefixed strings.
class ByteWriter {
 public:
  void u8(uint8_t v) { buf_.push_back(v); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i32(int32_t v) { raw(&v, 4); }
  void i64(int64_t v) { raw(&v, 8); }
  /// Raw bytes, no length prefix.
  void raw(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  /// A u32 length followed by the bytes.
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  const std::vector<uint8_t>& data() const { return buf_; }
  std::vector<uint8_t>& data() { return buf_; }
  size_t size() const { return buf_.size(); }
  void clear() { buf_.clear(); }

 private:
  std::vector<uint8_t> buf_;
};

/// Reads what ByteWriter wrote. `what` names the input in error messages; offsets in errors
/// are relative to `base_offset` (e.g. the position of the record in its stream).
class ByteReader {
 public:
  ByteReader(std::span<const uint8_t> in, std::string what, uint64_t base_offset = 0)
      : in_(in), what_(std::move(what)), base_(base_offset) {}
  uint8_t u8() { return get<uint8_t>(); }
  uint32_t u32() { return get<uint32_t>(); }
  uint64_t u64() { return get<uint64_t>(); }
  int32_t i32() { return get<int32_t>(); }
  int64_t i64() { return get<int64_t>(); }
  void raw(void* out, size_t n) {
    need(n);
    std::memcpy(out, in_.data() + pos_, n);
    pos_ += n;
  }
  std::vector<uint8_t> bytes(size_t n) {
    need(n);
    std::vector<uint8_t> v(in_.begin() + pos_, in_.begin() + pos_ + n);
    pos_ += n;
    return v;
  }
  std::string str() {
    uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(in_.data()) + pos_, n);
    pos_ += n;
    return s;
  }
  /// Fails unless at least n more bytes are available.
  void need(size_t n) const {
    if (n > in_.size() - pos_)
      throw TraceError(what_, base_ + pos_,
                       "record truncated (needs " + std::to_string(n) + " bytes, " +
                           std::to_string(in_.size() - pos_) + " left)");
  }
  bool at_end() const { return pos_ == in_.size(); }
  size_t pos() const { return pos_; }
  size_t remaining() const { return in_.size() - pos_; }

 private:
  template <typename T>
  T get() {
    T v;
    raw(&v, sizeof v);
    return v;
  }
  std::span<const uint8_t> in_;
  std::string what_;
  uint64_t base_;
  size_t pos_ = 0;
};

}  // namespace rwd
