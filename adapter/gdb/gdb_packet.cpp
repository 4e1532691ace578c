#include "adapter/gdb/gdb_packet.h"

#include <cstdint>
#include <cstdio>

namespace rwd::gdb {

namespace {
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<PacketReader::Item> PacketReader::next() {
  for (;;) {
    size_t i = 0;
    while (i < buf_.size() && buf_[i] != '$' && buf_[i] != '\x03') ++i;
    buf_.erase(0, i);  // acks and noise before a packet
    if (buf_.empty()) return std::nullopt;
    if (buf_[0] == '\x03') {
      buf_.erase(0, 1);
      return Item{Item::Interrupt, {}};
    }
    size_t hash = buf_.find('#');
    if (hash == std::string::npos || hash + 2 >= buf_.size()) return std::nullopt;
    std::string raw = buf_.substr(1, hash - 1);
    int hi = hex_digit(buf_[hash + 1]), lo = hex_digit(buf_[hash + 2]);
    buf_.erase(0, hash + 3);
    unsigned sum = 0;
    for (unsigned char c : raw) sum += c;
    if (hi < 0 || lo < 0 || (sum & 0xff) != unsigned(hi * 16 + lo))
      return Item{Item::BadChecksum, {}};
    std::string payload;
    for (size_t k = 0; k < raw.size(); ++k) {
      if (raw[k] == '}' && k + 1 < raw.size())
        payload += char(raw[++k] ^ 0x20);
      else
        payload += raw[k];
    }
    return Item{Item::Packet, std::move(payload)};
  }
}

std::string frame(std::string_view payload) {
  std::string out = "$";
  unsigned sum = 0;
  for (char c : payload) {
    if (c == '#' || c == '$' || c == '}' || c == '*') {
      out += '}';
      sum += '}';
      c = char(c ^ 0x20);
    }
    out += c;
    sum += static_cast<unsigned char>(c);
  }
  static const char* kHex = "0123456789abcdef";
  out += '#';
  out += kHex[(sum >> 4) & 0xf];
  out += kHex[sum & 0xf];
  return out;
}

std::string to_hex(const uint8_t* bytes, size_t n) {
  static const char* kHex = "0123456789abcdef";
  std::string s;
  s.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    s += kHex[bytes[i] >> 4];
    s += kHex[bytes[i] & 0xf];
  }
  return s;
}

std::optional<std::vector<uint8_t>> from_hex(std::string_view hex) {
  if (hex.size() % 2) return std::nullopt;
  std::vector<uint8_t> out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(uint8_t(hi * 16 + lo));
  }
  return out;
}

std::optional<uint64_t> parse_hex(std::string_view s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d = hex_digit(c);
    if (d < 0) return std::nullopt;
    v = v * 16 + uint64_t(d);
  }
  return v;
}

namespace {

/// One number of a thread-id: hex, or "-1".
std::optional<int64_t> id_number(std::string_view s) {
  if (s == "-1") return -1;
  auto v = parse_hex(s);
  if (!v || *v > uint64_t(INT32_MAX)) return std::nullopt;
  return int64_t(*v);
}

std::string id_hex(int64_t v) {
  return v < 0 ? "-1" : hex_number(uint64_t(v));
}

}  // namespace

std::string hex_number(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "%llx", (unsigned long long)v);
  return buf;
}

std::optional<ThreadId> parse_thread_id(std::string_view s) {
  ThreadId id;
  if (s.empty() || s[0] != 'p') {
    auto tid = id_number(s);
    if (!tid) return std::nullopt;
    id.tid = *tid;
    return id;
  }
  s.remove_prefix(1);
  size_t dot = s.find('.');
  auto pid = id_number(s.substr(0, dot));
  if (!pid) return std::nullopt;
  id.pid = *pid;
  id.tid = -1;
  if (dot != std::string_view::npos) {
    auto tid = id_number(s.substr(dot + 1));
    if (!tid) return std::nullopt;
    id.tid = *tid;
  }
  return id;
}

std::string format_thread_id(int64_t pid, int64_t tid, bool multiprocess) {
  return multiprocess ? "p" + id_hex(pid) + "." + id_hex(tid) : id_hex(tid);
}

}  // namespace rwd::gdb
