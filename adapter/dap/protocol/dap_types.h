// The DAP types rewind sends in response bodies and events, as typed structs written to JSON
// (DAP specification, "Types"), in namespace dap apart from the engine's types of the same
// names. Optional members are left out when unset.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

namespace rwd::dap {

/// DAP Source.
struct Source {
  std::string name;  ///< the file name
  std::string path;
  int source_reference = 0;  ///< 0: the client reads `path` itself
};

/// DAP Breakpoint: what a breakpoint request made of each breakpoint asked for.
struct Breakpoint {
  Breakpoint() = default;
  Breakpoint(int id, bool verified) : id(id), verified(verified) {}
  int id = 0;
  bool verified = false;
  std::optional<int> line;  ///< in the client's numbering
  std::optional<Source> source;
  std::string message;                ///< why not verified; "" for none
  std::string instruction_reference;  ///< "" for none
};

/// DAP Thread.
struct Thread {
  int64_t id = 0;
  std::string name;
};

/// DAP StackFrame.
struct StackFrame {
  StackFrame() = default;
  StackFrame(int id, std::string name, int line, int column)
      : id(id), name(std::move(name)), line(line), column(column) {}
  int id = 0;
  std::string name;
  int line = 0;  ///< 0 without a source line
  int column = 0;
  std::optional<Source> source;
  std::string instruction_pointer_reference;  ///< "" for none
  std::string module_id;                      ///< "" for none
  std::string presentation_hint;              ///< "" for none; "subtle" without source
};

/// DAP Scope.
struct Scope {
  Scope() = default;
  Scope(std::string name, std::string hint, int variables_reference)
      : name(std::move(name)),
        presentation_hint(std::move(hint)),
        variables_reference(variables_reference) {}
  std::string name;
  std::string presentation_hint;  ///< "" for none
  int variables_reference = 0;
  bool expensive = false;
};

/// DAP Variable; the fields evaluate's and setVariable's bodies share with it.
struct Variable {
  Variable() = default;
  Variable(std::string name, std::string value, std::string type = "")
      : name(std::move(name)), value(std::move(value)), type(std::move(type)) {}
  std::string name;
  std::string value;
  std::string type;
  int variables_reference = 0;
  std::optional<size_t> indexed_variables;
  std::optional<size_t> named_variables;
  std::string memory_reference;  ///< "" for none
};

/// DAP Module.
struct Module {
  Module() = default;
  Module(std::string id, std::string name, std::string path, std::string address_range)
      : id(std::move(id)),
        name(std::move(name)),
        path(std::move(path)),
        address_range(std::move(address_range)) {}
  std::string id;
  std::string name;
  std::string path;
  std::string address_range;
  std::string symbol_status;
  std::string symbol_file_path;  ///< "" for none
};

void to_json(nlohmann::json& j, const Source& s);
void to_json(nlohmann::json& j, const Breakpoint& b);
void to_json(nlohmann::json& j, const Thread& t);
void to_json(nlohmann::json& j, const StackFrame& f);
void to_json(nlohmann::json& j, const Scope& s);
void to_json(nlohmann::json& j, const Variable& v);
void to_json(nlohmann::json& j, const Module& m);

}  // namespace rwd::dap
