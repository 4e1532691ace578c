// Changed parts of a value (value_diff.h).
#include "engine/symbols/value_diff.h"

#include <algorithm>
#include <cstring>

namespace rwd {

namespace {

/// The most parts describe_change names.
constexpr size_t kShownParts = 8;

/// Whether `t` is a char type (an array of them reads as a string).
bool is_char(const Type& t) {
  const Type* s = strip(&t);
  return s && s->kind == TypeKind::Base &&
         (s->encoding == Encoding::SignedChar || s->encoding == Encoding::UnsignedChar);
}

/// Walks the parts of a value whose bytes differ, skipping ranges that are equal.
class DiffWalk {
 public:
  DiffWalk(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, size_t limit)
      : a_(a), b_(b), limit_(limit) {}

  void value(const TypePtr& type, uint64_t off, const std::string& path) {
    const Type* t = type ? strip(type.get()) : nullptr;
    if (!t) return leaf({path, type, off});
    if ((t->kind == TypeKind::Struct || t->kind == TypeKind::Class) && !t->members.empty()) {
      for (const Member& m : t->members) {
        // Anonymous members and base classes: their members are named as the value's own.
        std::string sub = m.name.empty() || m.base_class ? path : path + "." + m.name;
        if (m.bit_size) {
          if (bits(off + m.offset, m.bit_offset, m.bit_size, a_) !=
              bits(off + m.offset, m.bit_offset, m.bit_size, b_))
            leaf({sub, m.type, off + m.offset, m.bit_size, m.bit_offset});
          continue;
        }
        uint64_t size = m.type ? type_size(*m.type) : 0;
        if (size && !same(off + m.offset, size)) value(m.type, off + m.offset, sub);
      }
      return;
    }
    if (t->kind == TypeKind::Array && t->target && is_char(*t->target))
      return leaf({path, type, off});  // a string: shown whole
    if (t->kind == TypeKind::Array && t->target && !t->dims.empty() &&
        std::find(t->dims.begin(), t->dims.end(), 0) == t->dims.end() && type_size(*t->target))
      return elements(t->target, t->dims, 0, off, path);
    leaf({path, type, off});
  }

  std::vector<ValuePart> parts;
  size_t differing = 0;

 private:
  void elements(const TypePtr& element, const std::vector<uint64_t>& dims, size_t d, uint64_t off,
                const std::string& path) {
    uint64_t stride = type_size(*element);
    for (size_t i = d + 1; i < dims.size(); ++i) stride *= dims[i];
    for (uint64_t i = 0; i < dims[d]; ++i) {
      uint64_t at = off + i * stride;
      if (same(at, stride)) continue;
      std::string sub = path + "[" + std::to_string(i) + "]";
      if (d + 1 < dims.size())
        elements(element, dims, d + 1, at, sub);
      else
        value(element, at, sub);
    }
  }

  void leaf(ValuePart p) {
    if (differing++ < limit_) parts.push_back(std::move(p));
  }

  /// Whether [off, off + size) is the same in both images (bytes past either's end differ).
  bool same(uint64_t off, uint64_t size) const {
    if (off + size > a_.size() || off + size > b_.size()) return false;
    return std::memcmp(a_.data() + off, b_.data() + off, size) == 0;
  }

  /// A bitfield's bits in image `v` (`off`: its storage's first byte; `shift`: bits from
  /// that byte's least significant bit; `width` bits at most 64); all ones when past the end.
  static uint64_t bits(uint64_t off, uint32_t shift, uint32_t width,
                       const std::vector<uint8_t>& v) {
    uint64_t n = (uint64_t(shift) + width + 7) / 8;
    if (off + n > v.size() || n > 8) return ~0ull;
    uint64_t raw = 0;
    std::memcpy(&raw, v.data() + off, n);
    raw >>= shift;
    return width < 64 ? raw & ((1ull << width) - 1) : raw;
  }

  const std::vector<uint8_t>& a_;
  const std::vector<uint8_t>& b_;
  size_t limit_;
};

/// Part `p`'s value in image `bytes`, as format_value shows it.
std::string show_part(const ValuePart& p, const std::vector<uint8_t>& bytes, Target& t,
                      const FormatOptions& opt) {
  uint64_t size = p.bit_size ? (uint64_t(p.bit_offset) + p.bit_size + 7) / 8
                             : (p.type ? type_size(*p.type) : 0);
  if (p.offset + size > bytes.size()) return "<unknown>";
  Value v = Value::of(p.type, std::vector<uint8_t>(bytes.begin() + long(p.offset),
                                                   bytes.begin() + long(p.offset + size)));
  v.bit_size = p.bit_size;
  v.bit_offset = p.bit_offset;
  return format_value(v, t, opt);
}

}  // namespace

std::vector<ValuePart> changed_parts(const TypePtr& type, const std::vector<uint8_t>& before,
                                     const std::vector<uint8_t>& after, size_t limit,
                                     size_t* more) {
  DiffWalk walk(before, after, limit);
  if (before.size() != after.size())
    walk.parts.push_back({"", type, 0});  // one image is short: the whole value differs
  else
    walk.value(type, 0, "");
  if (more) *more = walk.differing > walk.parts.size() ? walk.differing - walk.parts.size() : 0;
  return walk.parts;
}

std::string changed_name(const std::string& expression, const std::string& member) {
  if (member.empty()) return expression;
  if (member.find(", ") == std::string::npos) return expression + member;
  return expression + " (" + member + ")";
}

ChangeText describe_change(const TypePtr& type, const std::vector<uint8_t>& before,
                           const std::vector<uint8_t>& after, Target& t, const FormatOptions& opt) {
  ChangeText out;
  auto whole = [&](const std::vector<uint8_t>& bytes) {
    return bytes.empty() ? std::string("<unknown>") : format_value(Value::of(type, bytes), t, opt);
  };
  size_t more = 0;
  std::vector<ValuePart> parts;
  if (!before.empty() && !after.empty())
    parts = changed_parts(type, before, after, kShownParts, &more);
  if (parts.empty() || (parts.size() == 1 && parts[0].path.empty())) {
    out.old_value = whole(before);
    out.new_value = whole(after);
    return out;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const char* sep = i ? ", " : "";
    out.member += sep + parts[i].path;
    out.old_value += sep + show_part(parts[i], before, t, opt);
    out.new_value += sep + show_part(parts[i], after, t, opt);
  }
  if (more) {
    std::string tail = ", … (+" + std::to_string(more) + " more)";
    out.member += tail;
    out.old_value += ", …";
    out.new_value += ", …";
  }
  return out;
}

}  // namespace rwd
