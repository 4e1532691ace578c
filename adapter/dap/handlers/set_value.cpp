// Changing values: setVariable and setExpression write to a diversion, a copy of the program
// that lives until the timeline moves (a replay cannot change history).
#include <cstring>

#include "adapter/dap/handlers/dap_handlers.h"

namespace rwd::handlers {

using nlohmann::json;

namespace {

/// Writes `value` (an expression) to `lvalue` in frame `frame` of `tid` and returns the
/// response body (DAP SetVariableResponse and SetExpressionResponse). Only numbers and
/// pointers in memory; throws RequestError otherwise.
json assign(DapContext& c, pid_t tid, size_t frame, const std::string& lvalue,
            const std::string& value) {
  Debugger& d = c.debugger();
  Value target = d.evaluate(tid, frame, lvalue);
  if (target.loc.kind != Location::Kind::Memory || target.bit_size)
    throw RequestError("cannot change \"" + lvalue + "\": it is not a value in memory");
  const Type* t = strip(target.type.get());
  bool number =
      t && (t->kind == TypeKind::Base || t->kind == TypeKind::Pointer || t->kind == TypeKind::Enum);
  if (!number) throw RequestError("cannot change \"" + lvalue + "\": only numbers and pointers");
  Value v = d.evaluate(tid, frame, value);
  size_t size = type_size(*target.type);
  std::vector<uint8_t> bytes(size);
  if (t->kind == TypeKind::Base && t->encoding == Encoding::Float) {
    auto x = value_as_double(v, d.target(tid));
    if (!x) throw RequestError("\"" + value + "\" is not a number");
    if (size == 4) {
      float f = float(*x);
      std::memcpy(bytes.data(), &f, 4);
    } else if (size == 8) {
      std::memcpy(bytes.data(), &*x, 8);
    } else {
      throw RequestError("cannot change a " + std::to_string(size) + "-byte float");
    }
  } else {
    auto x = value_as_int(v, d.target(tid));
    if (!x) throw RequestError("\"" + value + "\" is not an integer");
    for (size_t i = 0; i < size && i < 8; ++i) bytes[i] = uint8_t(uint64_t(*x) >> (8 * i));
  }
  // The write goes to a diversion (Timeline::write_memory), which refuses, with the reason,
  // where no copy can be made.
  c.timeline->write_memory(tid, target.loc.addr, bytes);
  d.refresh();
  c.out.output("console", "rewind: " + lvalue +
                              " changed in a diversion (a copy of the program); stepping or "
                              "continuing returns to the recording\n");
  if (c.client.invalidated_event)
    c.out.event("invalidated", {{"areas", json::array({"variables"})}});
  dap::Variable var = c.variable(lvalue, d.evaluate(tid, frame, lvalue), tid);
  return {
      {"value", var.value}, {"type", var.type}, {"variablesReference", var.variables_reference}};
}

}  // namespace

void set_variable(DapContext& c, const dap::SetVariableArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  VarRef ref = c.refs.variables(a.variables_reference);
  if (ref.kind == VarRef::Registers)
    throw RequestError("registers cannot be changed in a replay (memory can, in a diversion)");
  if (ref.kind != VarRef::Children) {
    r.respond(assign(c, ref.tid, ref.frame, a.name, a.value));
    return;
  }
  // A member or element: address it through its location.
  for (const NamedValue& child : children(ref.value, d.target(ref.tid))) {
    if (child.name != a.name) continue;
    if (child.value.loc.kind != Location::Kind::Memory)
      throw RequestError("cannot change \"" + a.name + "\": it is not in memory");
    std::string lvalue = "*(" + type_name(*child.value.type) + "*)" + hex(child.value.loc.addr);
    r.respond(assign(c, ref.tid, 0, lvalue, a.value));
    return;
  }
  throw RequestError("no member \"" + a.name + "\"");
}

void set_expression(DapContext& c, const dap::SetExpressionArguments& a, DapRequest& r) {
  FrameRef f = c.frame(a.frame_id);
  r.respond(assign(c, f.tid, f.frame, a.expression, a.value));
}

}  // namespace rwd::handlers
