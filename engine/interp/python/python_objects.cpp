#include "engine/interp/python/python_objects.h"

#include <charconv>
#include <cstring>

#include "engine/arch/registers.h"

namespace rwd {

namespace {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xc0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += char(0xe0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  } else {
    out += char(0xf0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3f));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  }
}

/// Python's repr of a str: single quotes (double when the text has a ' and no "), escapes.
std::string quote(const std::string& s) {
  char q = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\' || c == static_cast<unsigned char>(q)) {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + q;
}

/// A C string of at most `max` bytes at `addr`.
std::string c_string(InterpMemory& m, uint64_t addr, size_t max = 128) {
  std::vector<uint8_t> b = m.target().read_memory(addr, max);
  if (b.empty()) throw InterpReadError("unreadable string at 0x" + hex(addr));
  size_t n = 0;
  while (n < b.size() && b[n]) ++n;
  return std::string(b.begin(), b.begin() + long(n));
}

/// Decimal digits of a magnitude held in 30-bit digits, least significant first.
std::string decimal(std::vector<uint32_t> digits) {
  // Repeatedly divide by 10^9, collecting remainders.
  std::vector<uint32_t> chunks;
  while (!digits.empty()) {
    uint64_t rem = 0;
    for (size_t i = digits.size(); i-- > 0;) {
      uint64_t cur = (rem << 30) | digits[i];
      digits[i] = uint32_t(cur / 1000000000u);
      rem = cur % 1000000000u;
    }
    chunks.push_back(uint32_t(rem));
    while (!digits.empty() && digits.back() == 0) digits.pop_back();
  }
  if (chunks.empty()) return "0";
  std::string out = std::to_string(chunks.back());
  for (size_t i = chunks.size() - 1; i-- > 0;) {
    char buf[16];
    snprintf(buf, sizeof buf, "%09u", chunks[i]);
    out += buf;
  }
  return out;
}

std::string python_int(InterpMemory& m, const PythonLayout& l, uint64_t obj) {
  int64_t ndigits;
  bool negative;
  uint64_t size = m.u64(obj + py::kObSize);
  if (l.long_tag) {  // lv_tag: digit count << 3 | sign (0 positive, 1 zero, 2 negative)
    ndigits = int64_t(size >> 3);
    negative = (size & 3) == 2;
  } else {  // ob_size: the digit count, negative for negative numbers
    ndigits = std::abs(int64_t(size));
    negative = int64_t(size) < 0;
  }
  if (ndigits > 4000) throw InterpReadError("int with an implausible size");
  std::vector<uint8_t> raw = m.bytes(obj + py::kLongDigits, size_t(ndigits) * 4);
  std::vector<uint32_t> digits(static_cast<size_t>(ndigits), 0u);
  if (!raw.empty()) std::memcpy(digits.data(), raw.data(), raw.size());
  while (!digits.empty() && digits.back() == 0) digits.pop_back();
  std::string d = decimal(digits);
  return negative && d != "0" ? "-" + d : d;
}

std::string python_float(double v) {
  if (v != v) return "nan";
  if (v == 1.0 / 0.0) return "inf";
  if (v == -1.0 / 0.0) return "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string python_type_name(InterpMemory& m, uint64_t obj) {
  return python_type_object_name(m, m.u64(obj + py::kObType));
}

std::string python_type_object_name(InterpMemory& m, uint64_t type) {
  return c_string(m, m.u64(type + py::kTpName));
}

std::string python_str(InterpMemory& m, const PythonLayout& l, uint64_t obj, size_t max_chars) {
  uint64_t type = m.u64(obj + py::kObType);
  if (!(m.u64(type + py::kTpFlags) & py::kUnicodeSubclass))
    throw InterpReadError("not a str at 0x" + hex(obj));
  int64_t length = m.i64(obj + py::kStrLength);
  uint32_t state = m.u32(obj + py::kStrState);
  unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
  if (length < 0 || (kind != 1 && kind != 2 && kind != 4))
    throw InterpReadError("a str in an unexpected state at 0x" + hex(obj));
  uint64_t data = compact ? obj + uint64_t(ascii ? l.ascii_data : l.compact_data)
                          : m.u64(obj + uint64_t(l.compact_data));
  size_t n = std::min<size_t>(size_t(length), max_chars);
  std::vector<uint8_t> raw = m.bytes(data, n * kind);
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    uint32_t cp = kind == 1   ? raw[i]
                  : kind == 2 ? uint32_t(raw[2 * i] | raw[2 * i + 1] << 8)
                              : uint32_t(raw[4 * i] | raw[4 * i + 1] << 8 | raw[4 * i + 2] << 16 |
                                         uint32_t(raw[4 * i + 3]) << 24);
    append_utf8(out, cp);
  }
  if (n < size_t(length)) out += "...";
  return out;
}

std::string python_repr(InterpMemory& m, const PythonLayout& l, uint64_t obj, std::string& type,
                        int depth) {
  uint64_t type_obj = m.u64(obj + py::kObType);
  type = c_string(m, m.u64(type_obj + py::kTpName));
  uint64_t flags = m.u64(type_obj + py::kTpFlags);
  if (type == "NoneType") return "None";
  if (type == "bool") return python_int(m, l, obj) == "0" ? "False" : "True";
  if (flags & py::kLongSubclass) return python_int(m, l, obj);
  if (type == "float") return python_float(m.f64(obj + py::kFloatValue));
  if (flags & py::kUnicodeSubclass) return quote(python_str(m, l, obj, 200));
  if (flags & py::kBytesSubclass) {
    int64_t n = m.i64(obj + py::kObSize);
    if (n < 0) throw InterpReadError("bytes with a negative size");
    std::vector<uint8_t> b = m.bytes(obj + py::kBytesData, size_t(std::min<int64_t>(n, 200)));
    std::string s = "b" + quote(std::string(b.begin(), b.end()));
    return n > 200 ? s + "..." : s;
  }
  bool list = flags & py::kListSubclass, tuple = flags & py::kTupleSubclass;
  if (list || tuple) {
    int64_t n = m.i64(obj + py::kObSize);
    if (n < 0 || n > (int64_t(1) << 40)) throw InterpReadError("a container with a bad size");
    uint64_t items = list ? m.u64(obj + py::kListItems) : obj + uint64_t(l.tuple_items);
    std::string out = list ? "[" : "(";
    const int64_t shown = depth > 0 ? 0 : std::min<int64_t>(n, 5);
    for (int64_t i = 0; i < shown; ++i) {
      std::string item_type;
      if (i) out += ", ";
      out += python_repr(m, l, m.u64(items + 8 * uint64_t(i)), item_type, depth + 1);
    }
    if (n > shown) out += shown ? ", ..." : "...";
    if (tuple && n == 1) out += ",";
    out += list ? "]" : ")";
    if (n > shown) out += " (" + std::to_string(n) + " items)";
    return out;
  }
  if (flags & py::kDictSubclass)
    return "{dict of " + std::to_string(m.i64(obj + py::kDictUsed)) + "}";
  return "<" + type + " object at " + hex(obj) + ">";
}

std::vector<PythonLineEntry> python_line_entries(const std::vector<uint8_t>& table,
                                                 int firstlineno) {
  std::vector<PythonLineEntry> out;
  size_t i = 0;
  auto varint = [&]() -> uint64_t {
    uint64_t v = 0;
    int shift = 0;
    while (i < table.size()) {
      uint8_t b = table[i++];
      v |= uint64_t(b & 63) << shift;
      shift += 6;
      if (!(b & 64) || shift > 60) break;
    }
    return v;
  };
  auto svarint = [&]() -> int64_t {
    uint64_t v = varint();
    return (v & 1) ? -int64_t(v >> 1) : int64_t(v >> 1);
  };
  int64_t line = firstlineno;
  uint64_t addr = 0;
  while (i < table.size()) {
    uint8_t first = table[i++];
    if (!(first & 0x80)) break;  // not at an entry: a corrupt table
    unsigned code = (first >> 3) & 15, length = (first & 7) + 1;
    int64_t entry_line = line;
    bool has_line = true;
    if (code == 15) {
      has_line = false;
    } else if (code == 14) {
      entry_line = line += svarint();
      varint();  // end line
      varint();  // column
      varint();  // end column
    } else if (code == 13) {
      entry_line = line += svarint();
    } else if (code >= 10) {
      entry_line = line += code - 10;
      i += 2;  // start and end columns
    } else {
      i += 1;  // columns
    }
    out.push_back({addr, length, has_line ? int(entry_line) : 0});
    addr += length;
  }
  return out;
}

int python_line(const std::vector<uint8_t>& table, int firstlineno, uint64_t lasti) {
  for (const PythonLineEntry& e : python_line_entries(table, firstlineno))
    if (lasti >= e.start && lasti < e.start + e.length) return e.line;
  return 0;
}

}  // namespace rwd
