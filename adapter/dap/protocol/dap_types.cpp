#include "adapter/dap/protocol/dap_types.h"

namespace rwd::dap {

using nlohmann::json;

namespace {
void set_if(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}
}  // namespace

void to_json(json& j, const Source& s) {
  j = {{"name", s.name}, {"path", s.path}};
  if (s.source_reference) j["sourceReference"] = s.source_reference;
}

void to_json(json& j, const Breakpoint& b) {
  j = {{"id", b.id}, {"verified", b.verified}};
  if (b.line) j["line"] = *b.line;
  if (b.source) j["source"] = *b.source;
  set_if(j, "message", b.message);
  set_if(j, "instructionReference", b.instruction_reference);
}

void to_json(json& j, const Thread& t) {
  j = {{"id", t.id}, {"name", t.name}};
}

void to_json(json& j, const StackFrame& f) {
  j = {{"id", f.id}, {"name", f.name}, {"line", f.line}, {"column", f.column}};
  set_if(j, "instructionPointerReference", f.instruction_pointer_reference);
  set_if(j, "moduleId", f.module_id);
  if (f.source) j["source"] = *f.source;
  set_if(j, "presentationHint", f.presentation_hint);
}

void to_json(json& j, const Scope& s) {
  j = {{"name", s.name}, {"variablesReference", s.variables_reference}, {"expensive", s.expensive}};
  set_if(j, "presentationHint", s.presentation_hint);
}

void to_json(json& j, const Variable& v) {
  j = {{"name", v.name},
       {"value", v.value},
       {"type", v.type},
       {"variablesReference", v.variables_reference}};
  if (v.indexed_variables) j["indexedVariables"] = *v.indexed_variables;
  if (v.named_variables) j["namedVariables"] = *v.named_variables;
  set_if(j, "memoryReference", v.memory_reference);
}

void to_json(json& j, const Module& m) {
  j = {{"id", m.id},           {"name", m.name},
       {"path", m.path},       {"addressRange", m.address_range},
       {"isOptimized", false}, {"symbolStatus", m.symbol_status}};
  set_if(j, "symbolFilePath", m.symbol_file_path);
}

}  // namespace rwd::dap
