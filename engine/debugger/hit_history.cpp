#include "engine/debugger/hit_history.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "engine/errors.h"
#include "engine/symbols/call_stack.h"
#include "engine/symbols/expression.h"
#include "engine/symbols/page_cache.h"
#include "engine/symbols/value.h"
#include "engine/symbols/variables.h"

namespace rwd {

namespace {

bool in_sites(const std::vector<CodeSite>& sites, const CodeSite& s) {
  return std::binary_search(sites.begin(), sites.end(), s);
}

/// The function's return type (DW_AT_type of its DIE; Void when it has none); nullptr when
/// the frame has no debug information.
TypePtr return_type(const StackFrame& f) {
  if (!f.fn || !f.module) return nullptr;
  DwarfIndex* dw = f.module->dwarf();
  if (!dw) return nullptr;
  Die die = dw->file().die_at(f.fn->die);
  if (!die) return nullptr;
  return f.module->types().read(die.type());
}

/// A call waiting for its return: the task, where it returns to and its frame's canonical
/// frame address (the stack pointer once `ret` has run), the hit it is, its return type.
struct PendingReturn {
  pid_t tid = 0;
  uint64_t to = 0;
  uint64_t cfa = 0;
  size_t hit = 0;
  TypePtr type;
};

/// What a function returned, from the registers at its return (System V x86-64 ABI §3.2.3:
/// integers and pointers in rax, float and double in xmm0).
std::string returned_value(Timeline& tl, pid_t tid, const TypePtr& type, Target& target,
                           const FormatOptions& format) {
  if (!type) return "<unknown: no debug information>";
  const Type* t = strip(type.get());
  if (t->kind == TypeKind::Void) return "";
  uint64_t size = type_size(*t);
  std::vector<uint8_t> bytes;
  if (t->kind == TypeKind::Base && t->encoding == Encoding::Float) {
    auto fp = tl.fp_registers(tid);
    if (!fp || size > 8) return "<not shown: a long double>";
    bytes.resize(size);
    std::memcpy(bytes.data(), fp->xmm_space, size);
  } else if (is_scalar(*t) && size <= 8) {
    uint64_t rax = tl.registers(tid).rax;
    bytes.resize(size);
    std::memcpy(bytes.data(), &rax, size);
  } else {
    return "<not shown: a " + type_name(*type) + ">";
  }
  return format_value(Value::of(type, bytes), target, format);
}

}  // namespace

HitHistory HitQuery::run(const HitRequest& req, const QueryProgress& progress) {
  HitHistory h;
  bool calls = req.message.empty();
  h.what = req.file.empty() ? req.function : req.file + ":" + std::to_string(req.line);
  Run run(*this, req.first_event, req.last_event, progress);
  Timeline& tl = run.timeline();
  Debugger qd(tl);
  std::optional<ScriptLanguage> script;
  if (req.file.empty())
    script = qd.function_language(req.function);
  else if (PythonBreakpoints::is_python_source(req.file))
    script = ScriptLanguage::Python;
  else if (RBreakpoints::is_r_source(req.file))
    script = ScriptLanguage::R;
  if (script) return run_script(req, run, qd);
  // Bound as the session binds a breakpoint, in every file of the trace (the condition is
  // checked for its syntax here, and evaluated below at each hit).
  BreakpointSpec spec;
  spec.function = req.function;
  spec.file = req.file;
  spec.line = req.line;
  spec.condition = req.condition;
  std::vector<Breakpoint> bound = req.file.empty() ? qd.set_function_breakpoints({spec})
                                                   : qd.set_source_breakpoints(req.file, {spec});
  if (bound.empty() || bound[0].sites.empty())
    throw Error("no code for " + h.what + " in the program or its libraries" +
                (bound.empty() || bound[0].message.empty() ? "" : ": " + bound[0].message));
  h.sites = bound[0].sites;

  std::vector<PendingReturn> pending;
  // Breakpoints at return addresses, by runtime address: armed when first needed and kept
  // (each stop there is a return into that caller, the same count either way).
  struct ReturnSite {
    CodeSite site;
    bool also_hit = false;  // the breakpoint's own code too: told apart by the pending calls
  };
  std::map<uint64_t, ReturnSite> return_sites;
  FormatOptions format = symbolizing_options(qd.modules());
  while (auto stop = run.next(h.hits.size())) {
    const StopInfo& s = *stop;
    if (s.reason != StopReason::Breakpoint) continue;
    // Only the query's breakpoints are armed on this timeline: a stop at a return address
    // is a return (the frame whose CFA the stack pointer is now), any other a hit.
    if (auto r = return_sites.find(s.addr); r != return_sites.end()) {
      uint64_t rsp = tl.registers(s.tid).rsp;
      auto p = std::find_if(pending.begin(), pending.end(), [&](const PendingReturn& r) {
        return r.tid == s.tid && r.to == s.addr && r.cfa == rsp;
      });
      if (p != pending.end()) {
        RecordedHit& hit = h.hits[p->hit];
        hit.returned = true;
        hit.return_value = returned_value(tl, s.tid, p->type, qd.target(s.tid), format);
        pending.erase(p);
      }
      if (!r->second.also_hit) continue;
    }
    uint32_t ordinal = run.count();
    // Two physical frames are enough (the hit's and its caller's): read here, without the
    // debugger's per-point cache, the code mapped being the same as at the last hit.
    CachedTarget target(qd.target(s.tid));
    std::vector<StackFrame> st = build_call_stack(target, qd.modules(), s.tid, 4);
    if (st.empty() || !st[0].module) {
      qd.refresh();  // code mapped since: a library loaded after the last hit
      st = build_call_stack(target, qd.modules(), s.tid, 4);
    }
    FrameVariables vars(target, qd.modules(), st);
    if (!req.condition.empty()) {
      bool holds = true;  // one that cannot be evaluated holds, as for a breakpoint
      try {
        Value v = evaluate_expression(req.condition, target, vars, 0);
        if (auto i = value_as_int(v, target))
          holds = *i != 0;
        else if (auto f = value_as_double(v, target))
          holds = *f != 0;
      } catch (const Error&) {
      }
      if (!holds) continue;
    }
    RecordedHit hit;
    hit.event = s.event;
    hit.ordinal = ordinal;
    hit.tid = s.tid;
    hit.pc = s.addr;
    if (!st.empty()) {
      hit.function = st[0].function;
      hit.file = st[0].file;
      hit.line = st[0].line;
    }
    if (!calls) {
      qd.refresh();  // format_log reads through the debugger's view of this point
      hit.message = qd.format_log(s.tid, req.message);
    } else if (!st.empty()) {
      for (const Variable& v : vars.arguments(0)) {
        std::string value;
        try {
          value = format_value(v.value, target, format);
        } catch (const Error& e) {
          value = std::string("<") + e.what() + ">";
        }
        hit.arguments.emplace_back(v.name, value);
      }
      // The caller: the first frame of another physical frame; the call returns to its pc.
      auto caller = std::find_if(st.begin(), st.end(),
                                 [&](const StackFrame& f) { return f.physical != st[0].physical; });
      if (caller != st.end()) {
        hit.caller = caller->function;
        hit.caller_file = caller->file;
        hit.caller_line = caller->line;
        if (st[0].cfa && caller->pc) {
          pending.push_back({s.tid, caller->pc, st[0].cfa, h.hits.size(), return_type(st[0])});
          if (!return_sites.count(caller->pc)) {
            CodeSite to = tl.code_site(s.tid, caller->pc);
            bool also_hit = in_sites(h.sites, to);
            return_sites[caller->pc] = {to, also_hit};
            if (!also_hit) tl.add_breakpoint(to);
          }
        }
      }
    }
    h.hits.push_back(std::move(hit));
  }
  h.reached_event = run.reached();
  h.complete = run.complete();
  h.truncated = run.truncated();
  return h;
}

DebugStop go_to_hit(Debugger& d, const HitHistory& h, const RecordedHit& hit) {
  if (hit.position) return go_to_position(d, *hit.position);
  Timeline& tl = d.timeline();
  DebugStop out;
  {
    // The breakpoint's sites, where the user has none already, for the time of the run.
    struct Armed {
      Timeline& tl;
      std::vector<CodeSite> sites;
      ~Armed() {
        for (const CodeSite& site : sites) tl.remove_breakpoint(site);
      }
    } armed{tl, {}};
    for (const CodeSite& site : h.sites)
      if (!d.has_breakpoint_site(site)) {
        tl.add_breakpoint(site);
        armed.sites.push_back(site);
      }
    out.stop = find_counted_stop(tl, hit.event, hit.ordinal, [&](const StopInfo& s) {
      return s.reason == StopReason::Breakpoint && in_sites(h.sites, tl.code_site(s.tid, s.addr));
    });
  }
  d.refresh();
  if (out.stop.reason != StopReason::Breakpoint || out.stop.tid != hit.tid ||
      out.stop.addr != hit.pc || out.stop.event != hit.event)
    throw Error("the replay did not find the hit of event " + std::to_string(hit.event) +
                " again (it stopped at event " + std::to_string(out.stop.event) + ")");
  return out;
}

}  // namespace rwd
