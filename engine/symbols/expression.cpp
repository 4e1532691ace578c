#include "engine/symbols/expression.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

namespace rwd {

namespace {

// ---- Tokens ------------------------------------------------------------------------------

enum class Tok { End, Int, Float, Char, String, Ident, Register, Punct };

struct Token {
  Tok kind = Tok::End;
  std::string text;  ///< identifier, punctuation, register name (without $), string contents
  uint64_t ival = 0;
  double fval = 0;
  bool is_unsigned = false, is_long = false;
  size_t pos = 0;
};

[[noreturn]] void syntax_error(const std::string& rest) {
  throw ExpressionError("A syntax error in expression, near `" + rest + "'.");
}

std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  static const char* puncts[] = {
      "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "::", "+", "-", "*", "/", "%",
      "<",  ">",  "&",  "|",  "^",  "!",  "~",  "(",  ")",  "[",  "]", ".", "?", ":", ","};
  auto escape = [&](size_t& j) -> uint8_t {
    char c = s[j++];
    if (c != '\\') return uint8_t(c);
    if (j >= s.size()) syntax_error(s.substr(j - 1));
    char e = s[j++];
    switch (e) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        int v = e - '0';
        for (int k = 0; k < 2 && j < s.size() && s[j] >= '0' && s[j] <= '7'; ++k)
          v = v * 8 + (s[j++] - '0');
        return uint8_t(v);
      }
      case 'x': {
        int v = 0;
        while (j < s.size() && isxdigit(uint8_t(s[j])))
          v = v * 16 + (isdigit(uint8_t(s[j])) ? s[j] - '0' : (tolower(s[j]) - 'a' + 10)), ++j;
        return uint8_t(v);
      }
      default:
        return uint8_t(e);
    }
  };
  while (i < s.size()) {
    char c = s[i];
    if (isspace(uint8_t(c))) {
      ++i;
      continue;
    }
    Token t;
    t.pos = i;
    if (isdigit(uint8_t(c)) || (c == '.' && i + 1 < s.size() && isdigit(uint8_t(s[i + 1])))) {
      size_t j = i;
      bool is_float = false;
      if (c == '0' && j + 1 < s.size() && (s[j + 1] == 'x' || s[j + 1] == 'X')) {
        j += 2;
        while (j < s.size() && isxdigit(uint8_t(s[j]))) ++j;
      } else {
        while (j < s.size() && isdigit(uint8_t(s[j]))) ++j;
        if (j < s.size() && s[j] == '.') {
          is_float = true;
          ++j;
          while (j < s.size() && isdigit(uint8_t(s[j]))) ++j;
        }
        if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
          is_float = true;
          ++j;
          if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
          while (j < s.size() && isdigit(uint8_t(s[j]))) ++j;
        }
      }
      std::string num = s.substr(i, j - i);
      if (is_float) {
        t.kind = Tok::Float;
        t.fval = strtod(num.c_str(), nullptr);
        if (j < s.size() && (s[j] == 'f' || s[j] == 'F')) ++j;
      } else {
        t.kind = Tok::Int;
        errno = 0;
        t.ival = strtoull(num.c_str(), nullptr, 0);
        if (errno) throw ExpressionError("Numeric constant too large.");
        if (num.size() > 1 && num[0] == '0' && num[1] != 'x' && num[1] != 'X' &&
            num.find_first_of("89") != std::string::npos)
          throw ExpressionError("Invalid number \"" + num + "\".");
        while (j < s.size() && strchr("uUlL", s[j])) {
          if (s[j] == 'u' || s[j] == 'U')
            t.is_unsigned = true;
          else
            t.is_long = true;
          ++j;
        }
      }
      if (j < s.size() && (isalnum(uint8_t(s[j])) || s[j] == '_'))
        throw ExpressionError("Invalid number \"" + s.substr(i, j - i + 1) + "\".");
      i = j;
    } else if (isalpha(uint8_t(c)) || c == '_' || c == '$') {
      size_t j = i + 1;
      while (j < s.size() && (isalnum(uint8_t(s[j])) || s[j] == '_')) ++j;
      t.kind = c == '$' ? Tok::Register : Tok::Ident;
      t.text = c == '$' ? s.substr(i + 1, j - i - 1) : s.substr(i, j - i);
      i = j;
    } else if (c == '\'') {
      size_t j = i + 1;
      if (j >= s.size()) throw ExpressionError("Unmatched single quote.");
      t.kind = Tok::Char;
      t.ival = escape(j);
      if (j >= s.size() || s[j] != '\'') throw ExpressionError("Unmatched single quote.");
      i = j + 1;
    } else if (c == '"') {
      size_t j = i + 1;
      t.kind = Tok::String;
      while (j < s.size() && s[j] != '"') t.text += char(escape(j));
      if (j >= s.size()) throw ExpressionError("Unterminated string in expression.");
      i = j + 1;
    } else {
      bool found = false;
      for (const char* p : puncts) {
        size_t n = strlen(p);
        if (s.compare(i, n, p) == 0) {
          t.kind = Tok::Punct;
          t.text = p;
          i += n;
          found = true;
          break;
        }
      }
      if (!found)
        throw ExpressionError("Invalid character '" + std::string(1, c) + "' in expression.");
    }
    out.push_back(t);
  }
  Token end;
  end.pos = s.size();
  out.push_back(end);
  return out;
}

// ---- Syntax tree -------------------------------------------------------------------------

/// A type as written in a cast or sizeof: base words or a name, then pointer stars.
struct TypeSpec {
  std::string name;  ///< "int", "unsigned long", "struct node", "geo::Shape", "color"
  int pointers = 0;
};

struct Node {
  enum Kind {
    Int,
    Float,
    Char,
    String,
    Name,
    Register,
    Unary,
    Binary,
    Member,
    Arrow,
    Index,
    Cast,
    SizeofType,
    SizeofExpr,
    Ternary
  } kind;
  std::string text;  ///< name, operator, member, string contents
  uint64_t ival = 0;
  double fval = 0;
  bool is_unsigned = false, is_long = false;
  TypeSpec type;
  std::vector<std::unique_ptr<Node>> kids;
};
using NodePtr = std::unique_ptr<Node>;

NodePtr make(Node::Kind k, std::string text = "") {
  auto n = std::make_unique<Node>();
  n->kind = k;
  n->text = std::move(text);
  return n;
}

const char* const kTypeWords[] = {"int",      "char",   "short", "long", "unsigned", "signed",
                                  "float",    "double", "void",  "bool", "_Bool",    "const",
                                  "volatile", "struct", "union", "enum", "class"};

bool is_type_word(const std::string& w) {
  for (const char* k : kTypeWords)
    if (w == k) return true;
  return false;
}

class Parser {
 public:
  Parser(const std::string& text, std::function<bool(const std::string&)> is_type)
      : text_(text), toks_(tokenize(text)), is_type_(std::move(is_type)) {}

  NodePtr parse() {
    if (peek().kind == Tok::End) throw ExpressionError("Empty expression.");
    NodePtr n = ternary();
    if (peek().kind != Tok::End) syntax_error(text_.substr(peek().pos));
    return n;
  }

 private:
  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  bool is(const char* p, size_t k = 0) const {
    return peek(k).kind == Tok::Punct && peek(k).text == p;
  }
  void expect(const char* p) {
    if (!is(p)) syntax_error(text_.substr(peek().pos));
    ++pos_;
  }

  NodePtr ternary() {
    NodePtr c = binary(0);
    if (!is("?")) return c;
    ++pos_;
    NodePtr a = ternary();
    expect(":");
    NodePtr b = ternary();
    NodePtr n = make(Node::Ternary);
    n->kids.push_back(std::move(c));
    n->kids.push_back(std::move(a));
    n->kids.push_back(std::move(b));
    return n;
  }

  static int precedence(const std::string& op) {
    static const std::pair<const char*, int> table[] = {
        {"||", 1}, {"&&", 2}, {"|", 3}, {"^", 4},  {"&", 5},  {"==", 6},
        {"!=", 6}, {"<", 7},  {">", 7}, {"<=", 7}, {">=", 7}, {"<<", 8},
        {">>", 8}, {"+", 9},  {"-", 9}, {"*", 10}, {"/", 10}, {"%", 10}};
    for (auto& [o, p] : table)
      if (op == o) return p;
    return -1;
  }

  NodePtr binary(int min_prec) {
    NodePtr lhs = unary();
    for (;;) {
      const Token& t = peek();
      int p = t.kind == Tok::Punct ? precedence(t.text) : -1;
      if (p < 0 || p <= min_prec - 1 || p < min_prec) break;
      std::string op = t.text;
      ++pos_;
      NodePtr rhs = binary(p + 1);
      NodePtr n = make(Node::Binary, op);
      n->kids.push_back(std::move(lhs));
      n->kids.push_back(std::move(rhs));
      lhs = std::move(n);
    }
    return lhs;
  }

  /// True when the tokens at pos_ + 1 start a type name followed by ')'.
  bool cast_ahead() const {
    const Token& t = peek(1);
    if (t.kind != Tok::Ident) return false;
    if (is_type_word(t.text)) return true;
    // A name that is a type (typedef, class) and not a variable: "(color) 6", "(node *) p".
    size_t k = 1;
    std::string name = t.text;
    while (peek(k + 1).kind == Tok::Punct && peek(k + 1).text == "::" &&
           peek(k + 2).kind == Tok::Ident) {
      name += "::" + peek(k + 2).text;
      k += 2;
    }
    size_t j = k + 1;
    while (peek(j).kind == Tok::Punct && peek(j).text == "*") ++j;
    if (!(peek(j).kind == Tok::Punct && peek(j).text == ")")) return false;
    return is_type_ && is_type_(name);
  }

  TypeSpec type_spec() {
    TypeSpec ts;
    std::vector<std::string> words;
    while (peek().kind == Tok::Ident) {
      std::string w = peek().text;
      if (w == "const" || w == "volatile") {
        ++pos_;
        continue;
      }
      if (w == "struct" || w == "union" || w == "enum" || w == "class") {
        ++pos_;
        if (peek().kind != Tok::Ident) syntax_error(text_.substr(peek().pos));
        words.push_back(w + " " + peek().text);
        ++pos_;
        break;
      }
      if (!is_type_word(w) && !words.empty()) break;
      words.push_back(w);
      ++pos_;
      while (!is_type_word(w) && is("::") && peek(1).kind == Tok::Ident) {
        words.back() += "::" + peek(1).text;
        pos_ += 2;
      }
      if (!is_type_word(w)) break;
    }
    for (size_t i = 0; i < words.size(); ++i) ts.name += (i ? " " : "") + words[i];
    while (is("*")) {
      ++ts.pointers;
      ++pos_;
    }
    if (ts.name.empty()) syntax_error(text_.substr(peek().pos));
    return ts;
  }

  NodePtr unary() {
    const Token& t = peek();
    if (t.kind == Tok::Punct && (t.text == "-" || t.text == "+" || t.text == "!" || t.text == "~" ||
                                 t.text == "*" || t.text == "&")) {
      std::string op = t.text;
      ++pos_;
      NodePtr n = make(Node::Unary, op);
      n->kids.push_back(unary());
      return n;
    }
    if (t.kind == Tok::Ident && t.text == "sizeof") {
      ++pos_;
      if (is("(") && cast_ahead()) {
        ++pos_;
        NodePtr n = make(Node::SizeofType);
        n->type = type_spec();
        expect(")");
        return n;
      }
      NodePtr n = make(Node::SizeofExpr);
      n->kids.push_back(unary());
      return n;
    }
    if (is("(") && cast_ahead()) {
      ++pos_;
      NodePtr n = make(Node::Cast);
      n->type = type_spec();
      expect(")");
      n->kids.push_back(unary());
      return n;
    }
    return postfix(primary());
  }

  NodePtr postfix(NodePtr n) {
    for (;;) {
      if (is("[")) {
        ++pos_;
        NodePtr idx = ternary();
        expect("]");
        NodePtr x = make(Node::Index);
        x->kids.push_back(std::move(n));
        x->kids.push_back(std::move(idx));
        n = std::move(x);
      } else if (is(".") || is("->")) {
        bool arrow = is("->");
        ++pos_;
        if (peek().kind != Tok::Ident) syntax_error(text_.substr(peek().pos));
        NodePtr x = make(arrow ? Node::Arrow : Node::Member, peek().text);
        ++pos_;
        x->kids.push_back(std::move(n));
        n = std::move(x);
      } else {
        return n;
      }
    }
  }

  NodePtr primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Int: {
        NodePtr n = make(Node::Int);
        n->ival = t.ival;
        n->is_unsigned = t.is_unsigned;
        n->is_long = t.is_long;
        ++pos_;
        return n;
      }
      case Tok::Float: {
        NodePtr n = make(Node::Float);
        n->fval = t.fval;
        ++pos_;
        return n;
      }
      case Tok::Char: {
        NodePtr n = make(Node::Char);
        n->ival = t.ival;
        ++pos_;
        return n;
      }
      case Tok::String: {
        NodePtr n = make(Node::String, t.text);
        ++pos_;
        return n;
      }
      case Tok::Register: {
        NodePtr n = make(Node::Register, t.text);
        ++pos_;
        return n;
      }
      case Tok::Ident: {
        std::string name = t.text;
        ++pos_;
        while (is("::") && peek(1).kind == Tok::Ident) {
          name += "::" + peek(1).text;
          pos_ += 2;
        }
        return make(Node::Name, name);
      }
      case Tok::Punct:
        if (t.text == "(") {
          ++pos_;
          NodePtr n = ternary();
          expect(")");
          return n;
        }
        break;
      case Tok::End:
        break;
    }
    syntax_error(text_.substr(t.pos));
  }

  std::string text_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::function<bool(const std::string&)> is_type_;
};

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
      auto fns = m->dwarf()->functions_named(n);
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
      if (fp) {
        double x = as_double(a), y = as_double(b);
        r = op == "=="   ? x == y
            : op == "!=" ? x != y
            : op == "<"  ? x < y
            : op == ">"  ? x > y
            : op == "<=" ? x <= y
                         : x >= y;
      } else if (int_result(a, b).rfind("unsigned", 0) == 0) {
        uint64_t x = uint64_t(as_int(a)), y = uint64_t(as_int(b));
        r = op == "=="   ? x == y
            : op == "!=" ? x != y
            : op == "<"  ? x < y
            : op == ">"  ? x > y
            : op == "<=" ? x <= y
                         : x >= y;
      } else {
        int64_t x = as_int(a), y = as_int(b);
        r = op == "=="   ? x == y
            : op == "!=" ? x != y
            : op == "<"  ? x < y
            : op == ">"  ? x > y
            : op == "<=" ? x <= y
                         : x >= y;
      }
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
  Parser p(text, [&](const std::string& name) { return ev.is_type(name); });
  NodePtr tree = p.parse();
  Value v = ev.eval(*tree);
  // As gdb: an expression whose value cannot be read is an error, not a value.
  std::string err;
  if (v.loc.kind == Location::Kind::Memory && !value_bytes(v, target, &err))
    throw ExpressionError(err);
  return v;
}

void check_expression_syntax(const std::string& text) {
  Parser p(text, nullptr);
  p.parse();
}

}  // namespace rwd
