// The gdb remote serial protocol's framing (gdb manual, "Overview" of the Remote Protocol):
// `$payload#cs` with a two-hex-digit modulo-256 checksum, '}' escapes, '+'/'-' acks and the
// out-of-band interrupt byte 0x03.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rwd::gdb {

/// Splits a byte stream into packets. Feed bytes as they arrive; take packets out.
class PacketReader {
 public:
  /// One thing read from the stream.
  struct Item {
    enum Kind : uint8_t { Packet, Interrupt, BadChecksum } kind = Packet;
    std::string payload;  ///< Packet: unescaped payload
  };
  void feed(const char* data, size_t n) { buf_.append(data, n); }
  /// The next complete item, or nothing until more bytes arrive. Acks ('+', '-') between
  /// packets are skipped.
  std::optional<Item> next();

 private:
  std::string buf_;
};

/// `$payload#cs` with '#', '$', '}' and '*' escaped.
std::string frame(std::string_view payload);

/// Lower-case hex of `bytes`.
std::string to_hex(const uint8_t* bytes, size_t n);
inline std::string to_hex(const std::vector<uint8_t>& v) {
  return to_hex(v.data(), v.size());
}
inline std::string to_hex(std::string_view s) {
  return to_hex(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}
/// Bytes from hex digits; nothing if a digit is invalid or the length is odd.
std::optional<std::vector<uint8_t>> from_hex(std::string_view hex);
/// An unsigned hex number; nothing if empty or invalid.
std::optional<uint64_t> parse_hex(std::string_view s);
/// `v` in lower-case hex, without leading zeros (the protocol's numbers).
std::string hex_number(uint64_t v);

/// A thread-id of the remote protocol (gdb manual, "Packets", thread-id syntax): `TID`, or
/// with the multiprocess extensions `pPID.TID` or `pPID` (every thread of PID). Each number
/// is hex; -1 names every process or thread, 0 any one.
struct ThreadId {
  int64_t pid = 0;  ///< the process; 0 when the id names none (plain `TID`)
  int64_t tid = 0;  ///< the thread; -1 (every thread) for `pPID`
};
/// Parses a thread-id; nothing if it is malformed.
std::optional<ThreadId> parse_thread_id(std::string_view s);
/// `pPID.TID` when the multiprocess extensions are on, else `TID` (hex).
std::string format_thread_id(int64_t pid, int64_t tid, bool multiprocess);

}  // namespace rwd::gdb
