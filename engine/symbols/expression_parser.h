// The syntax tree of a C expression (expression.h) and its parser: tokens, precedence,
// casts, sizeof, as gdb reads C. Internal to engine/symbols; the evaluator walks the tree.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rwd {

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

/// Parses `text` into a tree. `is_type` says whether an identifier names a type (for casts
/// and sizeof); nullptr: only C's own type words do. Throws ExpressionError with gdb's
/// message ("A syntax error in expression, near `...'.", "Empty expression.").
NodePtr parse_expression(const std::string& text, std::function<bool(const std::string&)> is_type);

}  // namespace rwd
