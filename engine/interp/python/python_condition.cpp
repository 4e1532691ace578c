#include "engine/interp/python/python_condition.h"

#include <cctype>
#include <cstdlib>

#include "engine/errors.h"

namespace rwd {

namespace {

/// A value read from a local or written as a literal.
struct PyValue {
  enum class Kind { Number, Str, None, Other } kind = Kind::Other;
  long double number = 0;
  std::string text;  ///< a str's content, or an Other's repr
};

/// A str's content from its repr ('abc', "it's"), with the common escapes undone.
std::string unrepr(const std::string& repr) {
  std::string out;
  if (repr.size() < 2) return repr;
  for (size_t i = 1; i + 1 < repr.size(); ++i) {
    char ch = repr[i];
    if (ch != '\\' || i + 2 >= repr.size()) {
      out += ch;
      continue;
    }
    char e = repr[++i];
    out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
  }
  return out;
}

PyValue value_of(const InterpVariable& v) {
  PyValue out;
  if (v.type == "int" || v.type == "float") {
    out.kind = PyValue::Kind::Number;
    out.number = std::strtold(v.value.c_str(), nullptr);
  } else if (v.type == "bool") {
    out.kind = PyValue::Kind::Number;
    out.number = v.value == "True" ? 1 : 0;
  } else if (v.type == "NoneType") {
    out.kind = PyValue::Kind::None;
  } else if (v.type == "str" && v.value.size() >= 2 && (v.value[0] == '\'' || v.value[0] == '"')) {
    out.kind = PyValue::Kind::Str;
    out.text = unrepr(v.value);
  } else {
    out.text = v.value;
  }
  return out;
}

class Parser {
 public:
  Parser(const std::string& text, const std::vector<InterpVariable>* locals)
      : s_(text), locals_(locals) {}

  bool parse() {
    bool v = expr();
    skip_space();
    if (i_ != s_.size()) fail("unexpected \"" + s_.substr(i_) + "\"");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("cannot evaluate the condition \"" + s_ + "\": " + why);
  }
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  /// Consumes keyword `w` when it comes next as a whole word.
  bool keyword(const char* w) {
    skip_space();
    size_t n = std::char_traits<char>::length(w);
    if (s_.compare(i_, n, w) != 0) return false;
    if (i_ + n < s_.size() &&
        (std::isalnum(static_cast<unsigned char>(s_[i_ + n])) || s_[i_ + n] == '_'))
      return false;
    i_ += n;
    return true;
  }
  /// Parses what `next` parses without evaluating it (the short-circuited side of and/or).
  template <class F>
  void skip(F next) {
    bool was = dry_;
    dry_ = true;
    next();
    dry_ = was;
  }
  bool expr() {
    bool v = and_expr();
    while (keyword("or")) {
      if (v)
        skip([&] { return and_expr(); });
      else
        v = and_expr();
    }
    return v;
  }
  bool and_expr() {
    bool v = not_expr();
    while (keyword("and")) {
      if (!v)
        skip([&] { return not_expr(); });
      else
        v = not_expr();
    }
    return v;
  }
  bool not_expr() {
    if (keyword("not")) return !not_expr();
    return comparison();
  }
  std::string op() {
    skip_space();
    for (const char* o : {"==", "!=", "<=", ">=", "<", ">"}) {
      size_t n = std::char_traits<char>::length(o);
      if (s_.compare(i_, n, o) == 0) {
        i_ += n;
        return o;
      }
    }
    if (keyword("is")) return keyword("not") ? "!=" : "==";
    return "";
  }
  bool comparison() {
    skip_space();
    if (i_ < s_.size() && s_[i_] == '(') {
      ++i_;
      bool v = expr();
      skip_space();
      if (i_ >= s_.size() || s_[i_] != ')') fail("a \"(\" is not closed");
      ++i_;
      return v;
    }
    PyValue a = operand();
    std::string o = op();
    if (o.empty()) return truth(a);
    PyValue b = operand();
    return compare(a, o, b);
  }
  PyValue operand() {
    skip_space();
    if (i_ >= s_.size()) fail("an operand is missing");
    PyValue v;
    char ch = s_[i_];
    if (ch == '\'' || ch == '"') {
      size_t end = i_ + 1;
      while (end < s_.size() && s_[end] != ch) end += s_[end] == '\\' ? 2 : 1;
      if (end >= s_.size()) fail("a string is not closed");
      v.kind = PyValue::Kind::Str;
      v.text = unrepr(s_.substr(i_, end + 1 - i_));
      i_ = end + 1;
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.') {
      char* end = nullptr;
      v.kind = PyValue::Kind::Number;
      v.number = std::strtold(s_.c_str() + i_, &end);
      if (end == s_.c_str() + i_) fail("\"" + s_.substr(i_) + "\" is not a number");
      i_ = size_t(end - s_.c_str());
      return v;
    }
    if (!std::isalpha(static_cast<unsigned char>(ch)) && ch != '_')
      fail("unexpected \"" + s_.substr(i_) + "\"");
    size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
      ++i_;
    std::string name = s_.substr(start, i_ - start);
    if (name == "True" || name == "False") {
      v.kind = PyValue::Kind::Number;
      v.number = name == "True";
      return v;
    }
    if (name == "None") {
      v.kind = PyValue::Kind::None;
      return v;
    }
    if (!locals_ || dry_) return v;  // syntax check only, or not evaluated
    for (const InterpVariable& local : *locals_)
      if (local.name == name) return value_of(local);
    fail("\"" + name + "\" is not a local of this frame");
  }
  bool truth(const PyValue& v) const {
    if (!locals_ || dry_) return false;
    switch (v.kind) {
      case PyValue::Kind::Number:
        return v.number != 0;
      case PyValue::Kind::Str:
        return !v.text.empty();
      case PyValue::Kind::None:
        return false;
      default:
        fail("the truth of " + v.text + " cannot be read from memory");
    }
  }
  bool compare(const PyValue& a, const std::string& o, const PyValue& b) const {
    if (!locals_ || dry_) return false;
    int c = 0;  // <0, 0, >0
    if (a.kind == PyValue::Kind::Number && b.kind == PyValue::Kind::Number) {
      c = a.number < b.number ? -1 : a.number > b.number ? 1 : 0;
    } else if (a.kind == PyValue::Kind::Str && b.kind == PyValue::Kind::Str) {
      c = a.text.compare(b.text);  // UTF-8 byte order is code point order
    } else if (a.kind == PyValue::Kind::None && b.kind == PyValue::Kind::None) {
      c = 0;
    } else if (a.kind != PyValue::Kind::Other && b.kind != PyValue::Kind::Other &&
               (o == "==" || o == "!=")) {
      return o == "!=";  // different kinds are never equal
    } else {
      fail("cannot compare " + (a.text.empty() ? std::string("these values") : a.text) +
           " from memory");
    }
    if (o == "==") return c == 0;
    if (o == "!=") return c != 0;
    if (a.kind == PyValue::Kind::None) fail("None cannot be ordered");
    if (o == "<") return c < 0;
    if (o == "<=") return c <= 0;
    if (o == ">") return c > 0;
    return c >= 0;
  }

  const std::string& s_;
  const std::vector<InterpVariable>* locals_;
  size_t i_ = 0;
  bool dry_ = false;  ///< parsing a side that and/or does not evaluate
};

}  // namespace

bool python_condition_holds(const std::string& condition,
                            const std::vector<InterpVariable>& locals) {
  return Parser(condition, &locals).parse();
}

void check_python_condition(const std::string& condition) {
  Parser(condition, nullptr).parse();
}

std::string python_log_message(const std::string& message,
                               const std::vector<InterpVariable>& locals) {
  std::string out;
  for (size_t i = 0; i < message.size(); ++i) {
    size_t close = message[i] == '{' ? message.find('}', i) : std::string::npos;
    if (close == std::string::npos) {
      out += message[i];
      continue;
    }
    std::string name = message.substr(i + 1, close - i - 1);
    std::string value = "<no local " + name + ">";
    for (const InterpVariable& v : locals)
      if (v.name == name) value = v.value;
    out += value;
    i = close;
  }
  return out;
}

}  // namespace rwd
