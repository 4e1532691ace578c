#include "engine/symbols/variables.h"

#include <dwarf.h>

#include <cstring>
#include <functional>

namespace rwd {

LocationContext FrameVariables::location_context(size_t i) {
  const StackFrame& f = frames_.at(i);
  LocationContext ctx;
  ctx.target = &target_;
  ctx.regs = f.regs;
  ctx.cfa = f.cfa;
  ctx.pc = f.lookup_pc();
  ctx.bias = f.module ? f.module->bias() : 0;
  ctx.entry_value = [this, i](int reg) { return entry_value(i, reg); };
  if (f.physical == 0) {
    if (auto fp = target_.fp_registers(f.tid)) {
      std::array<uint8_t, 256> x;
      memcpy(x.data(), fp->xmm_space, 256);
      ctx.xmm = x;
    }
  }
  DwarfIndex* dw = f.module ? f.module->dwarf() : nullptr;
  if (dw && f.fn) {
    Die fn = dw->file().die_at(f.fn->die);
    Location base = evaluate_location(fn, DW_AT_frame_base, ctx);
    // DW_OP_call_frame_cfa gives an address; a register frame base gives its contents.
    if (base.kind == Location::Kind::Memory) ctx.frame_base = base.addr;
    if (base.kind == Location::Kind::Bytes && base.bytes.size() >= 8) {
      uint64_t v;
      memcpy(&v, base.bytes.data(), 8);
      ctx.frame_base = v;
    }
  }
  return ctx;
}

std::optional<uint64_t> FrameVariables::entry_value(size_t i, int reg) {
  // The caller's DW_TAG_call_site for this return address lists, per register parameter,
  // an expression for its value at the call (DW_AT_call_value, DWARF 5 section 3.4.2).
  const StackFrame& callee = frames_.at(i);
  size_t c = i + 1;
  while (c < frames_.size() && frames_[c].physical == callee.physical) ++c;
  if (c >= frames_.size() || !frames_[c].return_address || !frames_[c].module || !frames_[c].fn)
    return std::nullopt;
  const StackFrame& caller = frames_[c];
  DwarfIndex* dw = caller.module->dwarf();
  if (!dw) return std::nullopt;
  uint64_t ret = caller.module->to_link(caller.pc);
  std::optional<uint64_t> result;
  std::function<bool(const Die&)> search = [&](const Die& parent) -> bool {
    for (const Die& d : parent.children()) {
      int tag = d.tag();
      if (tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site) {
        auto pc = d.udata(DW_AT_call_return_pc);
        if (!pc) pc = d.udata(DW_AT_low_pc);
        if (!pc || *pc != ret) continue;
        for (const Die& p : d.children()) {
          if (p.tag() != DW_TAG_call_site_parameter && p.tag() != DW_TAG_GNU_call_site_parameter)
            continue;
          bool matches = false;
          p.with_raw_attr(DW_AT_location, [&](Dwarf_Attribute a) {
            Dwarf_Unsigned len = 0;
            Dwarf_Ptr ptr = nullptr;
            if (dwarf_formexprloc(a, &len, &ptr, nullptr) == DW_DLV_OK && len == 1)
              matches = static_cast<const uint8_t*>(ptr)[0] == DW_OP_reg0 + reg;
          });
          if (!matches) continue;
          LocationContext ctx = location_context(c);
          int at = p.has(DW_AT_call_value) ? DW_AT_call_value : DW_AT_GNU_call_site_value;
          Location v = evaluate_location(p, at, ctx);
          if (v.kind == Location::Kind::Bytes && v.bytes.size() >= 8) {
            uint64_t x;
            memcpy(&x, v.bytes.data(), 8);
            result = x;
          } else if (v.kind == Location::Kind::Memory) {
            result = v.addr;  // DW_AT_call_value describes a value, not a place
          }
          return true;
        }
        return true;
      }
      if (tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine)
        if (search(d)) return true;
    }
    return false;
  };
  Die fn = dw->file().die_at(caller.fn->die);
  if (fn) search(fn);
  return result;
}

Variable FrameVariables::read_variable(size_t i, const Die& die, bool argument) {
  const StackFrame& f = frames_.at(i);
  Variable v;
  v.name = die.name();
  v.argument = argument;
  TypePtr type = f.module->types().read(die.type());
  if (die.has(DW_AT_const_value)) {
    std::vector<uint8_t> bytes(8);
    bool block = false;
    die.with_raw_attr(DW_AT_const_value, [&](Dwarf_Attribute a) {
      Dwarf_Block* b = nullptr;
      if (dwarf_formblock(a, &b, nullptr) == DW_DLV_OK) {
        auto* p = static_cast<const uint8_t*>(b->bl_data);
        bytes.assign(p, p + b->bl_len);
        block = true;
      }
    });
    if (!block) {
      int64_t c = die.sdata(DW_AT_const_value).value_or(0);
      memcpy(bytes.data(), &c, 8);
    }
    v.value = Value::of(type, bytes);
    return v;
  }
  v.value = Value::from(type, evaluate_location(die, DW_AT_location, location_context(i)));
  return v;
}

void FrameVariables::collect(size_t i, const Die& scope, uint64_t pc, std::vector<Variable>& args,
                             std::vector<Variable>& locals, int depth) {
  std::vector<Variable> mine;
  for (const Die& d : scope.children()) {
    int tag = d.tag();
    if (tag == DW_TAG_formal_parameter && depth == 0) {
      args.push_back(read_variable(i, d, true));
    } else if (tag == DW_TAG_variable) {
      if (d.flag(DW_AT_declaration) || d.name().empty()) continue;
      mine.push_back(read_variable(i, d, false));
    } else if (tag == DW_TAG_lexical_block) {
      for (const auto& r : d.ranges())
        if (r.contains(pc)) {
          collect(i, d, pc, args, locals, depth + 1);  // inner block first
          break;
        }
    }
  }
  locals.insert(locals.end(), mine.begin(), mine.end());
}

std::vector<Variable> FrameVariables::arguments(size_t i) {
  const StackFrame& f = frames_.at(i);
  std::vector<Variable> args, locals;
  if (!f.module || !f.scope || !f.module->dwarf()) return args;
  Die scope = f.module->dwarf()->file().die_at(f.scope);
  for (const Die& d : scope.children())
    if (d.tag() == DW_TAG_formal_parameter) args.push_back(read_variable(i, d, true));
  return args;
}

std::vector<Variable> FrameVariables::locals(size_t i) {
  const StackFrame& f = frames_.at(i);
  std::vector<Variable> args, locals;
  if (!f.module || !f.scope || !f.module->dwarf()) return locals;
  Die scope = f.module->dwarf()->file().die_at(f.scope);
  collect(i, scope, f.lookup_pc(), args, locals, 0);
  return locals;
}

std::vector<Variable> FrameVariables::unit_globals(size_t i) {
  const StackFrame& f = frames_.at(i);
  std::vector<Variable> out;
  DwarfIndex* dw = f.module ? f.module->dwarf() : nullptr;
  if (!dw || !f.fn) return out;
  for (const GlobalVariable* g : dw->globals_of(f.fn->unit)) {
    Die d = dw->file().die_at(g->die);
    if (!d) continue;
    Variable v = read_variable(i, d, false);
    v.name = g->name;
    out.push_back(std::move(v));
  }
  return out;
}

std::optional<Variable> FrameVariables::lookup(size_t i, const std::string& name) {
  for (auto& v : locals(i))
    if (v.name == name) return v;
  for (auto& v : arguments(i))
    if (v.name == name) return v;
  // The frame's own unit first (file statics), then every module's globals.
  for (auto [m, unit] : search_order(i)) {
    DwarfIndex* dw = m->dwarf();
    auto found = dw->globals_named(name, unit);
    if (found.empty()) continue;
    Die d = dw->file().die_at(found.front()->die);
    if (!d) continue;
    LocationContext ctx;
    ctx.target = &target_;
    ctx.bias = m->bias();
    Variable v;
    v.name = name;
    v.value = Value::from(m->types().read(d.type()), evaluate_location(d, DW_AT_location, ctx));
    return v;
  }
  return std::nullopt;
}

std::vector<std::pair<Module*, std::optional<size_t>>> FrameVariables::search_order(size_t i) {
  const StackFrame& f = frames_.at(i);
  std::vector<std::pair<Module*, std::optional<size_t>>> out;
  if (f.module && f.module->dwarf())
    out.emplace_back(f.module, f.fn ? std::optional<size_t>(f.fn->unit) : std::nullopt);
  for (const auto& m : modules_.modules())
    if (m.get() != f.module && m->dwarf()) out.emplace_back(m.get(), std::nullopt);
  return out;
}

TypePtr FrameVariables::lookup_type(size_t i, const std::string& name) {
  std::string plain = name;
  for (const char* prefix : {"struct ", "union ", "enum ", "class "})
    if (plain.rfind(prefix, 0) == 0) plain = plain.substr(strlen(prefix));
  for (auto [m, unit] : search_order(i))
    if (auto off = m->dwarf()->type_named(plain, unit)) return m->types().read(*off);
  return nullptr;
}

}  // namespace rwd
