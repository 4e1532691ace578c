#include "engine/symbols/types.h"

#include <dwarf.h>

namespace rwd {

const Type* strip(const Type* t) {
  while (t &&
         (t->kind == TypeKind::Typedef || t->kind == TypeKind::Const ||
          t->kind == TypeKind::Volatile) &&
         t->target)
    t = t->target.get();
  return t;
}

TypePtr strip(const TypePtr& t) {
  TypePtr p = t;
  while (p &&
         (p->kind == TypeKind::Typedef || p->kind == TypeKind::Const ||
          p->kind == TypeKind::Volatile) &&
         p->target)
    p = p->target;
  return p;
}

bool is_scalar(const Type& t) {
  const Type* s = strip(&t);
  return s->kind == TypeKind::Base || s->kind == TypeKind::Enum || s->kind == TypeKind::Pointer;
}

uint64_t type_size(const Type& t) {
  const Type* s = strip(&t);
  if (s->kind == TypeKind::Array) {
    uint64_t n = s->target ? type_size(*s->target) : 0;
    for (uint64_t d : s->dims) n *= d;
    return n ? n : s->size;
  }
  if (s->kind == TypeKind::Reference || s->kind == TypeKind::RvalueReference ||
      s->kind == TypeKind::Pointer)
    return 8;
  return s->size;
}

namespace {

/// C declarator syntax: the type around a declarator `inner` ("*", "(*)[3]", ...).
std::string compose(const Type* t, const std::string& inner) {
  auto leaf = [&](const std::string& n) { return inner.empty() ? n : n + " " + inner; };
  if (!t) return leaf("void");
  switch (t->kind) {
    case TypeKind::Pointer:
    case TypeKind::Reference:
    case TypeKind::RvalueReference: {
      std::string op = t->kind == TypeKind::Pointer     ? "*"
                       : t->kind == TypeKind::Reference ? "&"
                                                        : "&&";
      const Type* target = t->target.get();
      bool paren =
          target && (target->kind == TypeKind::Array || target->kind == TypeKind::Function);
      return compose(target, paren ? "(" + op + inner + ")" : op + inner);
    }
    case TypeKind::Array: {
      std::string dims;
      for (uint64_t d : t->dims) dims += d ? "[" + std::to_string(d) + "]" : "[]";
      return compose(t->target.get(), inner + dims);
    }
    case TypeKind::Function: {
      std::string params;
      for (size_t i = 0; i < t->params.size(); ++i)
        params += (i ? ", " : "") + type_name(*t->params[i]);
      return compose(t->target.get(), inner + "(" + (params.empty() ? "void" : params) + ")");
    }
    case TypeKind::Const:
    case TypeKind::Volatile: {
      std::string q = t->kind == TypeKind::Const ? "const" : "volatile";
      const Type* target = t->target.get();
      if (target && target->kind == TypeKind::Pointer) return compose(target, q + " " + inner);
      // A qualified array is an array of qualified elements (C11 6.7.3p9), which GCC's DWARF
      // qualifies too: "volatile long [512]", not "volatile volatile long [512]".
      if (target && target->kind == TypeKind::Array && target->target &&
          target->target->kind == t->kind)
        return compose(target, inner);
      return q + " " + compose(target, inner);
    }
    case TypeKind::Struct:
      return leaf(t->name.empty() ? "struct {...}" : "struct " + t->name);
    case TypeKind::Union:
      return leaf(t->name.empty() ? "union {...}" : "union " + t->name);
    case TypeKind::Enum:
      return leaf(t->name.empty() ? "enum {...}" : "enum " + t->name);
    case TypeKind::Void:
      return leaf("void");
    default:
      return leaf(t->name.empty() ? "?" : t->name);
  }
}

Encoding encoding_of(uint64_t ate, uint64_t size) {
  switch (ate) {
    case DW_ATE_signed:
      return Encoding::Signed;
    case DW_ATE_unsigned:
      return Encoding::Unsigned;
    case DW_ATE_signed_char:
      return Encoding::SignedChar;
    case DW_ATE_unsigned_char:
      return Encoding::UnsignedChar;
    case DW_ATE_UTF:
      return size == 1 ? Encoding::UnsignedChar : Encoding::Unsigned;
    case DW_ATE_float:
      return Encoding::Float;
    case DW_ATE_boolean:
      return Encoding::Bool;
    default:
      return Encoding::Other;
  }
}

}  // namespace

std::string type_name(const Type& t) {
  return compose(&t, "");
}

TypeReader::~TypeReader() {
  for (auto& [off, t] : cache_) {
    t->target.reset();
    t->members.clear();
    t->params.clear();
  }
}

TypePtr TypeReader::builtin(const std::string& name) {
  static std::map<std::string, TypePtr> types = [] {
    std::map<std::string, TypePtr> m;
    auto add = [&](const char* n, uint64_t size, Encoding e) {
      auto t = std::make_shared<Type>();
      t->kind = TypeKind::Base;
      t->name = n;
      t->size = size;
      t->encoding = e;
      m[n] = t;
    };
    add("int", 4, Encoding::Signed);
    add("unsigned int", 4, Encoding::Unsigned);
    add("long", 8, Encoding::Signed);
    add("unsigned long", 8, Encoding::Unsigned);
    add("double", 8, Encoding::Float);
    add("float", 4, Encoding::Float);
    add("char", 1, Encoding::SignedChar);
    add("bool", 1, Encoding::Bool);
    auto v = std::make_shared<Type>();
    v->kind = TypeKind::Void;
    v->name = "void";
    m["void"] = v;
    return m;
  }();
  auto it = types.find(name);
  return it == types.end() ? nullptr : it->second;
}

TypePtr TypeReader::read(std::optional<DieOffset> off) {
  if (!off) return builtin("void");
  if (auto it = cache_.find(*off); it != cache_.end()) return it->second;
  auto t = std::make_shared<Type>();
  cache_[*off] = t;  // before reading members: a member may point back here
  Die d = file_.die_at(*off);
  if (!d) return t;
  t->name = d.string(DW_AT_name);
  t->size = d.udata(DW_AT_byte_size).value_or(0);
  int tag = d.tag();
  if (!t->name.empty() && tag != DW_TAG_base_type && qualify_) {
    std::string q = qualify_(*off);
    if (!q.empty()) t->name = q;
  }
  switch (tag) {
    case DW_TAG_base_type:
      t->kind = TypeKind::Base;
      t->encoding = encoding_of(d.udata(DW_AT_encoding).value_or(0), t->size);
      break;
    case DW_TAG_unspecified_type:
      t->kind = t->name == "decltype(nullptr)" ? TypeKind::Pointer : TypeKind::Unknown;
      if (t->kind == TypeKind::Pointer) t->size = 8;
      break;
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type:
      t->kind = tag == DW_TAG_pointer_type     ? TypeKind::Pointer
                : tag == DW_TAG_reference_type ? TypeKind::Reference
                                               : TypeKind::RvalueReference;
      if (!t->size) t->size = 8;
      t->target = read(d.ref(DW_AT_type));
      break;
    case DW_TAG_ptr_to_member_type:
      t->kind = TypeKind::PointerToMember;
      t->target = read(d.ref(DW_AT_type));
      if (!t->size) t->size = 8;
      break;
    case DW_TAG_typedef:
    case DW_TAG_const_type:
    case DW_TAG_volatile_type:
    case DW_TAG_restrict_type:
    case DW_TAG_atomic_type:
      t->kind = tag == DW_TAG_typedef         ? TypeKind::Typedef
                : tag == DW_TAG_const_type    ? TypeKind::Const
                : tag == DW_TAG_volatile_type ? TypeKind::Volatile
                                              : TypeKind::Typedef;  // restrict/_Atomic: as is
      t->target = read(d.ref(DW_AT_type));
      if (tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type) t->name = "";
      break;
    case DW_TAG_enumeration_type:
      t->kind = TypeKind::Enum;
      if (d.has(DW_AT_type)) t->target = read(d.ref(DW_AT_type));
      for (const Die& e : d.children())
        if (e.tag() == DW_TAG_enumerator) {
          // DW_FORM_dataN values carry no sign (DWARF 5 §7.5.6): an unsigned enum's 130 in
          // one byte is 130, not -126.
          const Type* under = strip(t->target.get());
          bool is_unsigned = under && (under->encoding == Encoding::Unsigned ||
                                       under->encoding == Encoding::UnsignedChar);
          int64_t v = is_unsigned ? int64_t(e.udata(DW_AT_const_value).value_or(0))
                                  : e.sdata(DW_AT_const_value).value_or(0);
          t->enumerators.emplace_back(e.string(DW_AT_name), v);
        }
      t->declaration = d.flag(DW_AT_declaration);
      break;
    case DW_TAG_array_type:
      t->kind = TypeKind::Array;
      t->target = read(d.ref(DW_AT_type));
      for (const Die& s : d.children()) {
        if (s.tag() != DW_TAG_subrange_type) continue;
        if (auto c = s.udata(DW_AT_count))
          t->dims.push_back(*c);
        else if (s.has(DW_AT_upper_bound) && s.sdata(DW_AT_upper_bound).value_or(-1) >= 0)
          t->dims.push_back(uint64_t(*s.sdata(DW_AT_upper_bound)) + 1);
        else
          t->dims.push_back(0);
      }
      if (t->dims.empty()) t->dims.push_back(0);
      break;
    case DW_TAG_subroutine_type:
    case DW_TAG_subprogram:  // a function's own type: the same shape
      t->kind = TypeKind::Function;
      t->name.clear();
      t->target = read(d.ref(DW_AT_type));
      for (const Die& p : d.children())
        if (p.tag() == DW_TAG_formal_parameter) t->params.push_back(read(p.ref(DW_AT_type)));
      break;
    case DW_TAG_structure_type:
    case DW_TAG_class_type:
    case DW_TAG_union_type:
      t->kind = tag == DW_TAG_structure_type ? TypeKind::Struct
                : tag == DW_TAG_class_type   ? TypeKind::Class
                                             : TypeKind::Union;
      t->declaration = d.flag(DW_AT_declaration);
      for (const Die& m : d.children()) {
        int mt = m.tag();
        if (mt != DW_TAG_member && mt != DW_TAG_inheritance) continue;
        if (mt == DW_TAG_member && (m.flag(DW_AT_declaration) || m.flag(DW_AT_external)))
          continue;  // a static member: not part of the object
        Member mem;
        mem.type = read(m.ref(DW_AT_type));
        mem.base_class = mt == DW_TAG_inheritance;
        mem.name = mem.base_class ? type_name(*mem.type) : m.string(DW_AT_name);
        mem.offset = m.udata(DW_AT_data_member_location).value_or(0);
        if (auto bits = m.udata(DW_AT_bit_size)) {
          mem.bit_size = uint32_t(*bits);
          uint64_t bit_pos;  // from the object's start, least significant bit first
          if (auto dbo = m.udata(DW_AT_data_bit_offset)) {
            bit_pos = *dbo;
          } else {  // DWARF 2/3: counted from the most significant bit of the storage unit
            uint64_t storage = m.udata(DW_AT_byte_size).value_or(type_size(*mem.type));
            bit_pos =
                mem.offset * 8 + storage * 8 - m.udata(DW_AT_bit_offset).value_or(0) - mem.bit_size;
          }
          mem.offset = bit_pos / 8;
          mem.bit_offset = uint32_t(bit_pos % 8);
        }
        t->members.push_back(std::move(mem));
      }
      break;
    default:
      t->kind = TypeKind::Unknown;
      break;
  }
  return t;
}

}  // namespace rwd
