#include "engine/symbols/value.h"

#include <charconv>
#include <cstring>

#include "engine/arch/registers.h"

namespace rwd {

Value Value::at(TypePtr type, uint64_t addr) {
  Value v;
  v.type = std::move(type);
  v.loc.kind = Location::Kind::Memory;
  v.loc.addr = addr;
  return v;
}

Value Value::of(TypePtr type, std::vector<uint8_t> bytes) {
  Value v;
  v.type = std::move(type);
  v.loc.kind = Location::Kind::Bytes;
  bytes.resize(v.type ? std::max<uint64_t>(type_size(*v.type), 0) : bytes.size());
  v.loc.bytes = std::move(bytes);
  return v;
}

Value Value::unavailable(TypePtr type, Location loc) {
  Value v;
  v.type = std::move(type);
  v.loc = std::move(loc);
  return v;
}

Value Value::from(TypePtr type, const Location& loc) {
  if (loc.kind == Location::Kind::Memory) return at(std::move(type), loc.addr);
  if (loc.kind == Location::Kind::Bytes) return of(std::move(type), loc.bytes);
  return unavailable(std::move(type), loc);
}

std::optional<std::vector<uint8_t>> value_bytes(const Value& v, Target& t, std::string* error) {
  size_t size = v.type ? size_t(type_size(*v.type)) : 0;
  if (v.bit_size) size = (v.bit_offset + v.bit_size + 7) / 8;
  switch (v.loc.kind) {
    case Location::Kind::Bytes: {
      std::vector<uint8_t> b = v.loc.bytes;
      b.resize(size);
      return b;
    }
    case Location::Kind::Memory: {
      auto b = t.read_memory(v.loc.addr, size);
      if (b.size() == size) return b;
      if (error) *error = "Cannot access memory at address " + hex(v.loc.addr);
      return std::nullopt;
    }
    case Location::Kind::OptimizedOut:
      if (error) *error = "value has been optimized out";
      return std::nullopt;
    case Location::Kind::Error:
      if (error) *error = v.loc.error;
      return std::nullopt;
  }
  return std::nullopt;
}

namespace {

bool is_signed(const Type* t) {
  if (t->kind == TypeKind::Enum) return !t->target || is_signed(strip(t->target.get()));
  return t->kind == TypeKind::Base &&
         (t->encoding == Encoding::Signed || t->encoding == Encoding::SignedChar);
}

bool is_char(const Type* t) {
  t = strip(t);
  return t && t->kind == TypeKind::Base && t->size == 1 &&
         (t->encoding == Encoding::SignedChar || t->encoding == Encoding::UnsignedChar);
}

std::string escape_char(uint8_t c, char quote) {
  switch (c) {
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    case '\\':
      return "\\\\";
    case 0:
      return "\\000";
    default:
      break;
  }
  if (c == uint8_t(quote)) return std::string("\\") + quote;
  if (c < 0x20 || c >= 0x7f) {
    char buf[8];
    snprintf(buf, sizeof buf, "\\%03o", c);
    return buf;
  }
  return std::string(1, char(c));
}

std::string format_double(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

std::string quoted(const std::vector<uint8_t>& s, bool truncated) {
  std::string out = "\"";
  for (uint8_t c : s) out += escape_char(c, '"');
  out += "\"";
  if (truncated) out += "...";
  return out;
}

/// A C string at addr, up to `limit` bytes; nullopt when the first byte is unreadable.
std::optional<std::pair<std::vector<uint8_t>, bool>> read_c_string(Target& t, uint64_t addr,
                                                                   size_t limit) {
  auto b = t.read_memory(addr, limit + 1);
  if (b.empty()) return std::nullopt;
  auto nul = std::find(b.begin(), b.end(), uint8_t(0));
  bool truncated = nul == b.end();
  b.erase(std::min(nul, b.begin() + long(std::min(b.size(), limit))), b.end());
  return std::make_pair(b, truncated);
}

TypePtr element_type(const Type* array) {
  if (array->dims.size() <= 1) return array->target;
  auto sub = std::make_shared<Type>(*array);
  sub->dims.erase(sub->dims.begin());
  sub->name.clear();
  return sub;
}

/// libstdc++'s std::string (the C++11 ABI): the characters of _M_dataplus._M_p, with
/// _M_string_length of them. nullopt for other types.
std::optional<std::string> std_string_summary(const Value& v, Target& t, size_t limit) {
  const Type* s = strip(v.type.get());
  if (!s || (s->name.rfind("basic_string<char", 0) != 0 &&
             s->name.rfind("std::__cxx11::basic_string<char", 0) != 0 &&
             s->name.rfind("std::basic_string<char", 0) != 0))
    return std::nullopt;
  auto plus = member(v, "_M_dataplus");
  auto len = member(v, "_M_string_length");
  if (!plus || !len) return std::nullopt;
  auto p = member(*plus, "_M_p");
  if (!p) return std::nullopt;
  auto addr = value_as_int(*p, t);
  auto n = value_as_int(*len, t);
  if (!addr || !n || *n < 0) return std::nullopt;
  size_t take = std::min<size_t>(size_t(*n), limit);
  auto bytes = t.read_memory(uint64_t(*addr), take);
  if (bytes.size() != take) return "<error: Cannot access memory at address " + hex(*addr) + ">";
  return quoted(bytes, take < size_t(*n));
}

std::string format(const Value& v, Target& t, const FormatOptions& opt, int depth);

std::string format_aggregate(const Value& v, const Type* s, Target& t, const FormatOptions& opt,
                             int depth) {
  if (s->declaration) return "<incomplete type>";
  if (auto str = std_string_summary(v, t, opt.max_elements)) return *str;
  if (depth >= opt.depth) return "{...}";
  std::string out = "{";
  bool first = true;
  for (const Member& m : s->members) {
    auto mv = member(v, m.name);
    if (!mv) continue;
    if (!first) out += ", ";
    first = false;
    if (m.base_class)
      out += "<" + m.name + "> = ";
    else if (!m.name.empty())
      out += m.name + " = ";
    out += format(*mv, t, opt, depth + 1);
  }
  return out + "}";
}

std::string format_array(const Value& v, const Type* s, Target& t, const FormatOptions& opt,
                         int depth) {
  uint64_t n = s->dims.empty() ? 0 : s->dims[0];
  if (s->dims.size() == 1 && is_char(s->target.get())) {
    std::string err;
    auto b = value_bytes(v, t, &err);
    if (!b) return "<error: " + err + ">";
    size_t len = std::min<size_t>(b->size(), opt.max_elements);
    // Trailing NULs are padding: print up to the first NUL when only NULs follow it.
    auto nul = std::find(b->begin(), b->end(), uint8_t(0));
    if (std::all_of(nul, b->end(), [](uint8_t c) { return c == 0; }))
      len = std::min<size_t>(len, size_t(nul - b->begin()));
    return quoted(std::vector<uint8_t>(b->begin(), b->begin() + long(len)),
                  len < b->size() && nul - b->begin() > long(len));
  }
  if (depth >= opt.depth) return "{...}";
  std::string out = "{";
  size_t shown = std::min<uint64_t>(n, opt.max_elements);
  std::vector<std::string> items;
  for (size_t i = 0; i < shown; ++i) {
    auto e = element(v, t, int64_t(i));
    items.push_back(e ? format(*e, t, opt, depth + 1) : "?");
  }
  // Runs of 10 or more equal elements print once, as gdb's "<repeats N times>".
  for (size_t i = 0; i < items.size();) {
    size_t j = i;
    while (j < items.size() && items[j] == items[i]) ++j;
    if (out.size() > 1) out += ", ";
    if (j - i >= 10) {
      out += items[i] + " <repeats " + std::to_string(j - i) + " times>";
      i = j;
    } else {
      out += items[i];
      ++i;
    }
  }
  if (shown < n) out += "...";
  return out + "}";
}

std::string format(const Value& v, Target& t, const FormatOptions& opt, int depth) {
  if (v.loc.kind == Location::Kind::OptimizedOut) return "<optimized out>";
  if (v.loc.kind == Location::Kind::Error) return "<error: " + v.loc.error + ">";
  const Type* s = strip(v.type.get());
  if (!s) return "<unknown type>";
  switch (s->kind) {
    case TypeKind::Struct:
    case TypeKind::Class:
    case TypeKind::Union:
      return format_aggregate(v, s, t, opt, depth);
    case TypeKind::Array:
      return format_array(v, s, t, opt, depth);
    case TypeKind::Reference:
    case TypeKind::RvalueReference: {
      auto d = dereference(v, t);
      std::string err;
      auto b = value_bytes(v, t, &err);
      if (!b) return "<error: " + err + ">";
      uint64_t addr = 0;
      memcpy(&addr, b->data(), std::min<size_t>(8, b->size()));
      return "@" + hex(addr) + ": " + (d ? format(*d, t, opt, depth) : "?");
    }
    case TypeKind::Void:
      return "void";
    case TypeKind::Function: {
      if (v.loc.kind != Location::Kind::Memory) return "{" + type_name(*s) + "} ?";
      std::string out = "{" + type_name(*s) + "} " + hex(v.loc.addr);
      std::string sym = opt.symbolize ? opt.symbolize(v.loc.addr) : "";
      return sym.empty() ? out : out + " <" + sym + ">";
    }
    case TypeKind::Unknown:
      return "<unknown type " + s->name + ">";
    default:
      break;
  }
  std::string err;
  auto bytes = value_bytes(v, t, &err);
  if (!bytes) return "<error: " + err + ">";
  if (s->kind == TypeKind::Base && s->encoding == Encoding::Float && !v.bit_size) {
    if (s->size == 4) {
      float f;
      memcpy(&f, bytes->data(), 4);
      return format_double(f);
    }
    if (s->size == 8) {
      double d;
      memcpy(&d, bytes->data(), 8);
      return format_double(d);
    }
    if (s->size == 16 || s->size == 10) {
      long double ld = 0;
      memcpy(&ld, bytes->data(), 10);
      return format_double(double(ld));
    }
  }
  auto iv = value_as_int(v, t);
  if (!iv) return "<error: cannot read value>";
  switch (s->kind) {
    case TypeKind::Base:
      if (s->encoding == Encoding::Bool) return *iv ? "true" : "false";
      if (is_char(s)) return std::to_string(*iv) + " '" + escape_char(uint8_t(*iv), '\'') + "'";
      if (s->encoding == Encoding::Unsigned || s->encoding == Encoding::UnsignedChar)
        return std::to_string(uint64_t(*iv) & (s->size >= 8 ? ~0ull : (1ull << (s->size * 8)) - 1));
      return std::to_string(*iv);
    case TypeKind::Enum:
      for (const auto& [name, value] : s->enumerators)
        if (value == *iv) return name;
      return std::to_string(*iv);
    case TypeKind::Pointer: {
      uint64_t p = uint64_t(*iv);
      std::string out = hex(p);
      const Type* target = strip(s->target.get());
      if (p && target && target->kind == TypeKind::Function && opt.symbolize) {
        std::string sym = opt.symbolize(p);
        if (!sym.empty()) out += " <" + sym + ">";
      } else if (p && is_char(s->target.get())) {
        auto str = read_c_string(t, p, opt.max_elements);
        if (!str) return out + " <error: Cannot access memory at address " + hex(p) + ">";
        out += " " + quoted(str->first, str->second);
      }
      return out;
    }
    default:
      return std::to_string(*iv);
  }
}

}  // namespace

std::optional<int64_t> value_as_int(const Value& v, Target& t) {
  const Type* s = strip(v.type.get());
  if (!s || !(s->kind == TypeKind::Base || s->kind == TypeKind::Enum ||
              s->kind == TypeKind::Pointer || s->kind == TypeKind::Reference ||
              s->kind == TypeKind::RvalueReference || s->kind == TypeKind::PointerToMember))
    return std::nullopt;
  auto b = value_bytes(v, t);
  if (!b) return std::nullopt;
  if (s->kind == TypeKind::Base && s->encoding == Encoding::Float) {
    auto d = value_as_double(v, t);
    return d ? std::optional<int64_t>(int64_t(*d)) : std::nullopt;
  }
  uint64_t raw = 0;
  memcpy(&raw, b->data(), std::min<size_t>(8, b->size()));
  if (v.bit_size) {
    raw >>= v.bit_offset;
    if (v.bit_size < 64) raw &= (1ull << v.bit_size) - 1;
    if (is_signed(s) && v.bit_size < 64 && (raw >> (v.bit_size - 1) & 1))
      raw |= ~((1ull << v.bit_size) - 1);
    return int64_t(raw);
  }
  size_t size = std::min<size_t>(b->size(), 8);
  if (size < 8 && size > 0) {
    if (is_signed(s) && (raw >> (size * 8 - 1) & 1))
      raw |= ~((1ull << (size * 8)) - 1);
    else
      raw &= (1ull << (size * 8)) - 1;
  }
  return int64_t(raw);
}

std::optional<double> value_as_double(const Value& v, Target& t) {
  const Type* s = strip(v.type.get());
  if (!s) return std::nullopt;
  if (s->kind == TypeKind::Base && s->encoding == Encoding::Float) {
    auto b = value_bytes(v, t);
    if (!b) return std::nullopt;
    if (s->size == 4) {
      float f;
      memcpy(&f, b->data(), 4);
      return f;
    }
    if (s->size == 8) {
      double d;
      memcpy(&d, b->data(), 8);
      return d;
    }
    long double ld = 0;
    memcpy(&ld, b->data(), std::min<size_t>(10, b->size()));
    return double(ld);
  }
  auto i = value_as_int(v, t);
  if (!i) return std::nullopt;
  if (s->kind == TypeKind::Base && (s->encoding == Encoding::Unsigned) && s->size == 8)
    return double(uint64_t(*i));
  return double(*i);
}

std::string format_value(const Value& v, Target& t, const FormatOptions& opt) {
  return format(v, t, opt, 0);
}

namespace {
/// The value at `offset` bytes into v with type `type` (a member or an element).
Value part_of(const Value& v, TypePtr type, uint64_t offset) {
  if (v.loc.kind == Location::Kind::Memory) return Value::at(std::move(type), v.loc.addr + offset);
  if (v.loc.kind == Location::Kind::Bytes) {
    std::vector<uint8_t> b;
    if (offset < v.loc.bytes.size())
      b.assign(v.loc.bytes.begin() + long(offset), v.loc.bytes.end());
    return Value::of(std::move(type), std::move(b));
  }
  return Value::unavailable(std::move(type), v.loc);
}
}  // namespace

std::optional<Value> member(const Value& v, const std::string& name) {
  const Type* s = strip(v.type.get());
  if (s && (s->kind == TypeKind::Reference || s->kind == TypeKind::RvalueReference))
    return std::nullopt;
  if (!s ||
      !(s->kind == TypeKind::Struct || s->kind == TypeKind::Class || s->kind == TypeKind::Union))
    return std::nullopt;
  for (const Member& m : s->members) {
    if (m.name == name) {
      Value out = part_of(v, m.type, m.offset);
      out.bit_size = m.bit_size;
      out.bit_offset = m.bit_offset;
      return out;
    }
  }
  // Anonymous members (unions, structs) and base classes are searched, as C and C++ do.
  for (const Member& m : s->members) {
    if (!m.name.empty() && !m.base_class) continue;
    if (auto inner = member(part_of(v, m.type, m.offset), name)) return inner;
  }
  return std::nullopt;
}

std::optional<Value> dereference(const Value& v, Target& t) {
  const Type* s = strip(v.type.get());
  if (!s || !(s->kind == TypeKind::Pointer || s->kind == TypeKind::Reference ||
              s->kind == TypeKind::RvalueReference))
    return std::nullopt;
  auto p = value_as_int(v, t);
  if (!p) return Value::unavailable(s->target, v.loc);
  return Value::at(s->target ? s->target : TypeReader::builtin("void"), uint64_t(*p));
}

std::optional<Value> element(const Value& v, Target& t, int64_t index) {
  const Type* s = strip(v.type.get());
  if (!s) return std::nullopt;
  if (s->kind == TypeKind::Array) {
    TypePtr et = element_type(s);
    return part_of(v, et, uint64_t(index) * type_size(*et));
  }
  if (s->kind == TypeKind::Pointer && s->target) {
    auto p = value_as_int(v, t);
    if (!p) return std::nullopt;
    return Value::at(s->target, uint64_t(*p) + uint64_t(index) * type_size(*s->target));
  }
  return std::nullopt;
}

size_t child_count(const Value& v, Target& t) {
  const Type* s = strip(v.type.get());
  if (!s || !v.available()) return 0;
  switch (s->kind) {
    case TypeKind::Struct:
    case TypeKind::Class:
    case TypeKind::Union:
      return s->declaration ? 0 : s->members.size();
    case TypeKind::Array:
      return s->dims.empty() ? 0 : size_t(s->dims[0]);
    case TypeKind::Pointer: {
      const Type* target = strip(s->target.get());
      if (!target || target->kind == TypeKind::Void || target->kind == TypeKind::Function) return 0;
      auto p = value_as_int(v, t);
      return p && *p ? 1 : 0;
    }
    case TypeKind::Reference:
    case TypeKind::RvalueReference: {
      auto d = dereference(v, t);
      return d ? child_count(*d, t) : 0;
    }
    default:
      return 0;
  }
}

std::vector<NamedValue> children(const Value& v, Target& t, size_t start, size_t count) {
  std::vector<NamedValue> out;
  const Type* s = strip(v.type.get());
  if (!s || !v.available()) return out;
  size_t n = child_count(v, t);
  size_t end = count > n ? n : std::min(n, start + count);
  switch (s->kind) {
    case TypeKind::Struct:
    case TypeKind::Class:
    case TypeKind::Union:
      for (size_t i = start; i < end; ++i) {
        const Member& m = s->members[i];
        Value mv = part_of(v, m.type, m.offset);
        mv.bit_size = m.bit_size;
        mv.bit_offset = m.bit_offset;
        out.push_back({m.name.empty() ? "<anonymous>" : m.name, mv});
      }
      break;
    case TypeKind::Array:
      for (size_t i = start; i < end; ++i)
        if (auto e = element(v, t, int64_t(i))) out.push_back({"[" + std::to_string(i) + "]", *e});
      break;
    case TypeKind::Pointer:
      if (start == 0 && n)
        if (auto d = dereference(v, t)) out.push_back({"*", *d});
      break;
    case TypeKind::Reference:
    case TypeKind::RvalueReference:
      if (auto d = dereference(v, t)) return children(*d, t, start, count);
      break;
    default:
      break;
  }
  return out;
}

}  // namespace rwd
