#include "engine/interp/script_condition.h"

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

/// An R local (r_frames.cpp's print form): a length-one logical, integer ("3L"), numeric or
/// character vector is a value; NA, longer vectors and other objects are Other.
PyValue r_value_of(const InterpVariable& v) {
  PyValue out;
  out.text = v.value;
  if (v.value == "NA" || v.value.rfind("c(", 0) == 0) return out;
  if (v.type == "integer" || v.type == "numeric") {
    char* end = nullptr;
    long double x = std::strtold(v.value.c_str(), &end);
    if (end == v.value.c_str()) return out;  // NaN, Inf: strtold reads them, "NaN" does not
    out.kind = PyValue::Kind::Number;
    out.number = x;
  } else if (v.type == "logical" && (v.value == "TRUE" || v.value == "FALSE")) {
    out.kind = PyValue::Kind::Number;
    out.number = v.value == "TRUE";
  } else if (v.type == "NULL") {
    out.kind = PyValue::Kind::None;
  } else if (v.type == "character" && v.value.size() >= 2 && v.value[0] == '"') {
    out.kind = PyValue::Kind::Str;
    out.text = unrepr(v.value);
  }
  return out;
}

PyValue value_of(ScriptLanguage lang, const InterpVariable& v) {
  if (lang == ScriptLanguage::R) return r_value_of(v);
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
  Parser(ScriptLanguage lang, const std::string& text, const std::vector<InterpVariable>* locals)
      : r_(lang == ScriptLanguage::R), s_(text), locals_(locals) {}

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
  /// Consumes R's operator `two` or `one` (`&&` or `&`) when it comes next.
  bool r_operator(const char* two, char one) {
    skip_space();
    if (s_.compare(i_, 2, two) == 0) {
      i_ += 2;
      return true;
    }
    if (i_ < s_.size() && s_[i_] == one) {
      ++i_;
      return true;
    }
    return false;
  }
  bool or_word() { return r_ ? r_operator("||", '|') : keyword("or"); }
  bool and_word() { return r_ ? r_operator("&&", '&') : keyword("and"); }
  bool not_word() {
    if (!r_) return keyword("not");
    skip_space();
    if (i_ >= s_.size() || s_[i_] != '!' || s_.compare(i_, 2, "!=") == 0) return false;
    ++i_;
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
    while (or_word()) {
      if (v)
        skip([&] { return and_expr(); });
      else
        v = and_expr();
    }
    return v;
  }
  bool and_expr() {
    bool v = not_expr();
    while (and_word()) {
      if (!v)
        skip([&] { return not_expr(); });
      else
        v = not_expr();
    }
    return v;
  }
  bool not_expr() {
    if (not_word()) return !not_expr();
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
    if (!r_ && keyword("is")) return keyword("not") ? "!=" : "==";
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
    bool digit_next = i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1]));
    if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '-' ||
        (ch == '.' && (!r_ || digit_next))) {
      char* end = nullptr;
      v.kind = PyValue::Kind::Number;
      v.number = std::strtold(s_.c_str() + i_, &end);
      if (end == s_.c_str() + i_) fail("\"" + s_.substr(i_) + "\" is not a number");
      i_ = size_t(end - s_.c_str());
      if (r_ && i_ < s_.size() && s_[i_] == 'L') ++i_;  // an integer literal: 2L
      return v;
    }
    // Names: Python's identifiers; R's may also hold and start with '.'.
    auto name_char = [&](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (r_ && c == '.');
    };
    if (!std::isalpha(static_cast<unsigned char>(ch)) && ch != '_' && !(r_ && ch == '.'))
      fail("unexpected \"" + s_.substr(i_) + "\"");
    size_t start = i_;
    while (i_ < s_.size() && name_char(s_[i_])) ++i_;
    std::string name = s_.substr(start, i_ - start);
    bool is_true = r_ ? name == "TRUE" || name == "T" : name == "True";
    bool is_false = r_ ? name == "FALSE" || name == "F" : name == "False";
    if (is_true || is_false) {
      v.kind = PyValue::Kind::Number;
      v.number = is_true;
      return v;
    }
    if (name == (r_ ? "NULL" : "None")) {
      v.kind = PyValue::Kind::None;
      return v;
    }
    if (!locals_ || dry_) return v;  // syntax check only, or not evaluated
    for (const InterpVariable& local : *locals_)
      if (local.name == name)
        return value_of(r_ ? ScriptLanguage::R : ScriptLanguage::Python, local);
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
    if (a.kind == PyValue::Kind::None)
      fail(r_ ? "NULL cannot be ordered" : "None cannot be ordered");
    if (o == "<") return c < 0;
    if (o == "<=") return c <= 0;
    if (o == ">") return c > 0;
    return c >= 0;
  }

  bool r_;  ///< R's syntax, else Python's
  const std::string& s_;
  const std::vector<InterpVariable>* locals_;
  size_t i_ = 0;
  bool dry_ = false;  ///< parsing a side that and/or does not evaluate
};

}  // namespace

bool script_condition_holds(ScriptLanguage lang, const std::string& condition,
                            const std::vector<InterpVariable>& locals) {
  return Parser(lang, condition, &locals).parse();
}

void check_script_condition(ScriptLanguage lang, const std::string& condition) {
  Parser(lang, condition, nullptr).parse();
}

std::string script_log_message(const std::string& message,
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
