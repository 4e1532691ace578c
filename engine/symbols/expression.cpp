#include "engine/symbols/expression.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "engine/symbols/expression_parser.h"

namespace rwd {

namespace {

/// C's comparison operator `op` (==, !=, <, >, <=, >=) on two values of one type.
template <class T>
bool compare(const std::string& op, T x, T y) {
  if (op == "==") return x == y;
  if (op == "!=") return x != y;
  if (op == "<") return x < y;
  if (op == ">") return x > y;
  if (op == "<=") return x <= y;
  return x >= y;
}

// ---- Evaluation --------------------------------------------------------------------------

TypePtr pointer_to(TypePtr target) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::Pointer;
  t->size = 8;
  t->target = std::move(target);
  return t;
}

TypePtr char_array(size_t n) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::Array;
  t->target = TypeReader::builtin("char");
  t->dims = {n};
  return t;
}

Value int_value(int64_t v, const std::string& type = "int") {
  std::vector<uint8_t> b(8);
  memcpy(b.data(), &v, 8);
  return Value::of(TypeReader::builtin(type), b);
}

Value double_value(double d) {
  std::vector<uint8_t> b(8);
  memcpy(b.data(), &d, 8);
  return Value::of(TypeReader::builtin("double"), b);
}

class Evaluator {
 public:
  Evaluator(Target& t, FrameVariables& vars, size_t frame) : t_(t), vars_(vars), frame_(frame) {}

  bool is_type(const std::string& name) {
    if (vars_.lookup(frame_, name)) return false;
    return resolve_type_name(name) != nullptr;
  }

  Value eval(const Node& n) {
    switch (n.kind) {
      case Node::Int: {
        bool fits_int = n.ival <= 0x7fffffff && !n.is_long;
        if (n.is_unsigned)
          return int_value(int64_t(n.ival), fits_int ? "unsigned int" : "unsigned long");
        return int_value(int64_t(n.ival), fits_int ? "int" : "long");
      }
      case Node::Float:
        return double_value(n.fval);
      case Node::Char: {
        std::vector<uint8_t> b = {uint8_t(n.ival)};
        return Value::of(TypeReader::builtin("char"), b);
      }
      case Node::String: {
        std::vector<uint8_t> b(n.text.begin(), n.text.end());
        b.push_back(0);
        return Value::of(char_array(b.size()), b);
      }
      case Node::Name:
        return name(n.text);
      case Node::Register:
        return reg(n.text);
      case Node::Unary:
        return unary(n.text, *n.kids[0]);
      case Node::Binary:
        return binary(n.text, *n.kids[0], *n.kids[1]);
      case Node::Member:
      case Node::Arrow: {
        Value base = eval(*n.kids[0]);
        if (n.kind == Node::Arrow) {
          const Type* s = strip(base.type.get());
          if (!s || s->kind != TypeKind::Pointer)
            throw ExpressionError("The -> operator must be applied to a pointer value.");
          base = deref(base);
        } else {
          base = deref_reference(base);
        }
        const Type* s = strip(base.type.get());
        if (!s || !(s->kind == TypeKind::Struct || s->kind == TypeKind::Class ||
                    s->kind == TypeKind::Union))
          throw ExpressionError(
              "Attempt to extract a component of a value that is not a structure" +
              std::string(n.kind == Node::Arrow ? " pointer." : "."));
        auto m = member(base, n.text);
        if (!m) throw ExpressionError("There is no member named " + n.text + ".");
        return *m;
      }
      case Node::Index: {
        Value base = deref_reference(eval(*n.kids[0]));
        Value idx = eval(*n.kids[1]);
        const Type* s = strip(base.type.get());
        if (!s || !(s->kind == TypeKind::Array || s->kind == TypeKind::Pointer))
          throw ExpressionError("cannot subscript something of type `" + type_name(*base.type) +
                                "'");
        auto i = as_int(idx);
        if (s->kind == TypeKind::Pointer) check(base);
        auto e = element(base, t_, i);
        if (!e) throw ExpressionError("cannot subscript this value");
        return *e;
      }
      case Node::Cast:
        return cast(eval(*n.kids[0]), resolve(n.type));
      case Node::SizeofType:
        return int_value(int64_t(type_size(*resolve(n.type))), "unsigned long");
      case Node::SizeofExpr: {
        // sizeof does not evaluate its operand's value, only its type.
        Value v = eval(*n.kids[0]);
        return int_value(int64_t(type_size(*v.type)), "unsigned long");
      }
      case Node::Ternary:
        return truth(eval(*n.kids[0])) ? eval(*n.kids[1]) : eval(*n.kids[2]);
    }
    throw ExpressionError("cannot evaluate expression");
  }

 private:
  /// Throws when the value cannot be read (optimized out, unreadable memory).
  void check(const Value& v) {
    std::string err;
    if (v.loc.kind == Location::Kind::OptimizedOut)
      throw ExpressionError("value has been optimized out");
    if (!value_bytes(v, t_, &err)) throw ExpressionError(err);
  }

  Value deref_reference(const Value& v) {
    const Type* s = strip(v.type.get());
    if (s && (s->kind == TypeKind::Reference || s->kind == TypeKind::RvalueReference)) {
      check(v);
      return *dereference(v, t_);
    }
    return v;
  }

  Value deref(const Value& v) {
    Value p = deref_reference(v);
    const Type* s = strip(p.type.get());
    if (s && s->kind == TypeKind::Array) {  // *array is its first element
      auto e = element(p, t_, 0);
      if (e) return *e;
    }
    if (!s || s->kind != TypeKind::Pointer)
      throw ExpressionError("Attempt to take contents of a non-pointer value.");
    check(p);
    const Type* target = strip(s->target.get());
    if (!target || target->kind == TypeKind::Void)
      throw ExpressionError("Attempt to take contents of a non-pointer value.");
    return *dereference(p, t_);
  }

  bool is_float(const Value& v) {
    const Type* s = strip(v.type.get());
    return s && s->kind == TypeKind::Base && s->encoding == Encoding::Float;
  }
  bool is_pointer(const Value& v) {
    const Type* s = strip(v.type.get());
    return s && (s->kind == TypeKind::Pointer || s->kind == TypeKind::Array ||
                 s->kind == TypeKind::Function);
  }
  bool is_unsigned_type(const Value& v) {
    const Type* s = strip(v.type.get());
    return s && ((s->kind == TypeKind::Base &&
                  (s->encoding == Encoding::Unsigned || s->encoding == Encoding::UnsignedChar ||
                   s->encoding == Encoding::Bool)) ||
                 s->kind == TypeKind::Pointer);
  }

  int64_t as_int(const Value& v) {
    Value x = deref_reference(v);
    check(x);
    const Type* s = strip(x.type.get());
    // Arrays and functions decay to their address (C11 6.3.2.1).
    if (s && (s->kind == TypeKind::Array || s->kind == TypeKind::Function) &&
        x.loc.kind == Location::Kind::Memory)
      return int64_t(x.loc.addr);
    auto i = value_as_int(x, t_);
    if (!i) throw ExpressionError("Argument to arithmetic operation not a number or boolean.");
    return *i;
  }
  double as_double(const Value& v) {
    Value x = deref_reference(v);
    check(x);
    auto d = value_as_double(x, t_);
    if (!d) throw ExpressionError("Argument to arithmetic operation not a number or boolean.");
    return *d;
  }
  bool truth(const Value& v) { return is_float(v) ? as_double(v) != 0 : as_int(v) != 0; }

  /// The usual arithmetic conversions, simplified: the result type of an integer operation.
  std::string int_result(const Value& a, const Value& b) {
    auto size = [](const Value& v) { return type_size(*strip(v.type.get())); };
    bool wide = size(a) > 4 || size(b) > 4;
    bool uns = (is_unsigned_type(a) && size(a) >= 4) || (is_unsigned_type(b) && size(b) >= 4);
    return wide ? (uns ? "unsigned long" : "long") : (uns ? "unsigned int" : "int");
  }

  Value name(const std::string& n) {
    if (auto v = vars_.lookup(frame_, n)) return v->value;
    if (auto e = enumerator(n)) return *e;
    if (auto f = function(n)) return *f;
    throw ExpressionError("No symbol \"" + n + "\" in current context.");
  }

  std::optional<Value> enumerator(const std::string& n) {
    // Enumerators are constants of their enum type (looked up in the frame's module first).
    TypePtr found;
    int64_t value = 0;
    if (!find_enumerator(n, found, value)) return std::nullopt;
    std::vector<uint8_t> b(8);
    memcpy(b.data(), &value, 8);
    return Value::of(found, b);
  }

  bool find_enumerator(const std::string& n, TypePtr& type, int64_t& value);

  /// A function by name: a value of its function type at its entry address.
  std::optional<Value> function(const std::string& n) {
    for (auto [m, unit] : vars_.search_order(frame_)) {
      auto fns = m->functions_named(n);
      if (!fns.empty())
        return Value::at(m->types().read(fns.front()->die), m->to_runtime(fns.front()->entry));
    }
    return std::nullopt;
  }

  Value reg(const std::string& r) {
    LocationContext ctx = vars_.location_context(frame_);
    static const std::pair<const char*, int> names[] = {
        {"rax", 0},  {"rdx", 1},  {"rcx", 2},  {"rbx", 3},  {"rsi", 4},  {"rdi", 5},  {"rbp", 6},
        {"rsp", 7},  {"r8", 8},   {"r9", 9},   {"r10", 10}, {"r11", 11}, {"r12", 12}, {"r13", 13},
        {"r14", 14}, {"r15", 15}, {"rip", 16}, {"pc", 16},  {"sp", 7},   {"fp", 6}};
    for (auto& [name, num] : names) {
      if (r != name) continue;
      if (!ctx.regs.has(num)) throw ExpressionError("value is not available");
      bool code = num == 16, stack = num == 7 || num == 6;
      return int_value(int64_t(ctx.regs.value[size_t(num)]),
                       code || stack ? "unsigned long" : "long");
    }
    throw ExpressionError("Invalid register `$" + r + "'.");
  }

  Value unary(const std::string& op, const Node& arg) {
    if (op == "&") {
      Value v = eval(arg);
      if (v.bit_size)
        throw ExpressionError("Attempt to take address of value not located in memory.");
      if (v.loc.kind != Location::Kind::Memory)
        throw ExpressionError("Attempt to take address of value not located in memory.");
      return Value::of(pointer_to(v.type), [&] {
        std::vector<uint8_t> b(8);
        memcpy(b.data(), &v.loc.addr, 8);
        return b;
      }());
    }
    Value v = eval(arg);
    if (op == "*") return deref(v);
    if (op == "+")
      return is_float(v) ? double_value(as_double(v)) : int_value(as_int(v), int_result(v, v));
    if (op == "-")
      return is_float(v) ? double_value(-as_double(v)) : int_value(-as_int(v), int_result(v, v));
    if (op == "!") return int_value(!truth(v));
    if (op == "~") {
      if (is_float(v))
        throw ExpressionError("Argument to complement operation not an integer, boolean.");
      return int_value(~as_int(v), int_result(v, v));
    }
    throw ExpressionError("unknown operator " + op);
  }

  Value binary(const std::string& op, const Node& ln, const Node& rn) {
    if (op == "&&") {
      if (!truth(eval(ln))) return int_value(0);
      return int_value(truth(eval(rn)));
    }
    if (op == "||") {
      if (truth(eval(ln))) return int_value(1);
      return int_value(truth(eval(rn)));
    }
    Value a = deref_reference(eval(ln)), b = deref_reference(eval(rn));
    // Pointer arithmetic: pointer +/- integer scales by the pointee size; pointer - pointer
    // counts elements.
    if ((op == "+" || op == "-") && is_pointer(a) && !is_pointer(b) && !is_float(b))
      return pointer_offset(a, op == "+" ? as_int(b) : -as_int(b));
    if (op == "+" && is_pointer(b) && !is_pointer(a)) return pointer_offset(b, as_int(a));
    if (op == "-" && is_pointer(a) && is_pointer(b)) {
      uint64_t size = element_size(a);
      return int_value((as_int(a) - as_int(b)) / int64_t(size ? size : 1), "long");
    }
    bool fp = is_float(a) || is_float(b);
    if (op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=") {
      int r;
      if (fp)
        r = compare(op, as_double(a), as_double(b));
      else if (int_result(a, b).rfind("unsigned", 0) == 0)
        r = compare(op, uint64_t(as_int(a)), uint64_t(as_int(b)));
      else
        r = compare(op, as_int(a), as_int(b));
      return int_value(r);
    }
    if (fp) {
      if (op == "%" || op == "<<" || op == ">>" || op == "&" || op == "|" || op == "^")
        throw ExpressionError("Integer only operation " + op + ".");
      double x = as_double(a), y = as_double(b);
      if (op == "+") return double_value(x + y);
      if (op == "-") return double_value(x - y);
      if (op == "*") return double_value(x * y);
      if (op == "/") return double_value(x / y);  // IEEE: inf or nan, as C and gdb give
    }
    std::string rt = int_result(a, b);
    bool uns = rt.rfind("unsigned", 0) == 0;
    int64_t x = as_int(a), y = as_int(b);
    if (rt == "int" || rt == "unsigned int") {  // operate in 32 bits like C
      x = uns ? int64_t(uint32_t(x)) : int64_t(int32_t(x));
      y = uns ? int64_t(uint32_t(y)) : int64_t(int32_t(y));
    }
    int64_t r = 0;
    if (op == "+")
      r = int64_t(uint64_t(x) + uint64_t(y));
    else if (op == "-")
      r = int64_t(uint64_t(x) - uint64_t(y));
    else if (op == "*")
      r = int64_t(uint64_t(x) * uint64_t(y));
    else if (op == "/" || op == "%") {
      if (y == 0) throw ExpressionError("Division by zero");
      if (uns)
        r = op == "/" ? int64_t(uint64_t(x) / uint64_t(y)) : int64_t(uint64_t(x) % uint64_t(y));
      else if (x == INT64_MIN && y == -1)
        r = op == "/" ? x : 0;
      else
        r = op == "/" ? x / y : x % y;
    } else if (op == "<<")
      r = y >= 0 && y < 64 ? int64_t(uint64_t(x) << y) : 0;
    else if (op == ">>")
      r = y >= 0 && y < 64 ? (uns ? int64_t(uint64_t(x) >> y) : x >> y) : 0;
    else if (op == "&")
      r = x & y;
    else if (op == "|")
      r = x | y;
    else if (op == "^")
      r = x ^ y;
    if (rt == "int") r = int32_t(r);
    if (rt == "unsigned int") r = int64_t(uint32_t(r));
    return int_value(r, rt);
  }

  uint64_t element_size(const Value& p) {
    const Type* s = strip(p.type.get());
    TypePtr target = s->target;
    if (s->kind == TypeKind::Array && s->dims.size() > 1) {
      uint64_t n = type_size(*target);
      for (size_t i = 1; i < s->dims.size(); ++i) n *= s->dims[i];
      return n;
    }
    const Type* ts = strip(target.get());
    return ts && ts->kind != TypeKind::Void ? type_size(*ts) : 1;
  }

  Value pointer_offset(const Value& p, int64_t n) {
    const Type* s = strip(p.type.get());
    TypePtr target = s->target;
    int64_t base = as_int(p);
    int64_t addr = base + n * int64_t(element_size(p));
    TypePtr type = s->kind == TypeKind::Array ? pointer_to(target) : p.type;
    std::vector<uint8_t> b(8);
    memcpy(b.data(), &addr, 8);
    return Value::of(type, b);
  }

  TypePtr resolve_type_name(const std::string& name) {
    static const std::pair<const char*, const char*> aliases[] = {
        {"int", "int"},
        {"signed int", "int"},
        {"signed", "int"},
        {"unsigned", "unsigned int"},
        {"unsigned int", "unsigned int"},
        {"long", "long"},
        {"long int", "long"},
        {"long long", "long"},
        {"signed long", "long"},
        {"unsigned long", "unsigned long"},
        {"unsigned long long", "unsigned long"},
        {"long unsigned int", "unsigned long"},
        {"double", "double"},
        {"float", "float"},
        {"char", "char"},
        {"bool", "bool"},
        {"_Bool", "bool"},
        {"void", "void"}};
    for (auto& [a, b] : aliases)
      if (name == a) return TypeReader::builtin(b);
    if (name == "short" || name == "unsigned short" || name == "unsigned char" ||
        name == "signed char") {
      auto t = std::make_shared<Type>();
      t->kind = TypeKind::Base;
      t->name = name;
      t->size = name.find("short") != std::string::npos ? 2 : 1;
      bool uns = name.rfind("unsigned", 0) == 0;
      t->encoding = t->size == 1 ? (uns ? Encoding::UnsignedChar : Encoding::SignedChar)
                                 : (uns ? Encoding::Unsigned : Encoding::Signed);
      return t;
    }
    return vars_.lookup_type(frame_, name);
  }

  TypePtr resolve(const TypeSpec& ts) {
    TypePtr t = resolve_type_name(ts.name);
    if (!t) throw ExpressionError("No symbol \"" + ts.name + "\" in current context.");
    for (int i = 0; i < ts.pointers; ++i) t = pointer_to(t);
    return t;
  }

  Value cast(const Value& v0, const TypePtr& to) {
    Value v = deref_reference(v0);
    const Type* s = strip(to.get());
    if (!s) throw ExpressionError("Invalid cast.");
    if (s->kind == TypeKind::Struct || s->kind == TypeKind::Class || s->kind == TypeKind::Union ||
        s->kind == TypeKind::Array) {
      if (type_size(*strip(v.type.get())) != type_size(*s)) throw ExpressionError("Invalid cast.");
      Value out = v;
      out.type = to;
      return out;
    }
    std::vector<uint8_t> b(8);
    if (s->kind == TypeKind::Base && s->encoding == Encoding::Float) {
      double d = as_double(v);
      if (s->size == 4) {
        float f = float(d);
        memcpy(b.data(), &f, 4);
      } else {
        memcpy(b.data(), &d, 8);
      }
      return Value::of(to, b);
    }
    int64_t i;
    if (is_float(v))
      i = int64_t(as_double(v));
    else
      i = as_int(v);
    if (s->kind == TypeKind::Base && s->encoding == Encoding::Bool) i = i != 0;
    memcpy(b.data(), &i, 8);
    return Value::of(to, b);
  }

  Target& t_;
  FrameVariables& vars_;
  size_t frame_;
};

bool Evaluator::find_enumerator(const std::string& n, TypePtr& type, int64_t& value) {
  for (auto [m, unit] : vars_.search_order(frame_)) {
    if (auto e = m->dwarf()->enumerator_named(n, unit)) {
      type = m->types().read(e->first);
      value = e->second;
      return true;
    }
  }
  return false;
}

}  // namespace

Value evaluate_expression(const std::string& text, Target& target, FrameVariables& vars,
                          size_t frame) {
  Evaluator ev(target, vars, frame);
  NodePtr tree = parse_expression(text, [&](const std::string& name) { return ev.is_type(name); });
  Value v = ev.eval(*tree);
  // As gdb: an expression whose value cannot be read is an error, not a value.
  std::string err;
  if (v.loc.kind == Location::Kind::Memory && !value_bytes(v, target, &err))
    throw ExpressionError(err);
  return v;
}

void check_expression_syntax(const std::string& text) {
  parse_expression(text, nullptr);
}

}  // namespace rwd
