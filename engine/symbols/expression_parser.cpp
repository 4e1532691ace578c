// The C expression parser (expression_parser.h).
#include "engine/symbols/expression_parser.h"

#include <cctype>
#include <cstring>

#include "engine/symbols/expression.h"

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

}  // namespace

NodePtr parse_expression(const std::string& text, std::function<bool(const std::string&)> is_type) {
  return Parser(text, std::move(is_type)).parse();
}

}  // namespace rwd
