#include "engine/symbols/call_stack.h"

#include <dwarf.h>

#include "engine/symbols/source_path.h"

namespace rwd {

namespace {

/// Source file number `n` of a unit (DW_AT_call_file, DW_AT_decl_file) as a path.
std::string unit_file(DwarfIndex& dw, size_t unit, uint64_t n) {
  Die cu = dw.file().die_at(dw.units()[unit].die);
  char** files = nullptr;
  Dwarf_Signed count = 0;
  std::string out;
  if (!cu || dwarf_srcfiles(cu.raw(), &files, &count, nullptr) != DW_DLV_OK) return out;
  // DWARF 5 numbers files from 0; earlier versions from 1 (DWARF 5 section 6.2.4).
  int64_t index = cu.version() >= 5 ? int64_t(n) : int64_t(n) - 1;
  if (index >= 0 && index < count) out = normal_source_path(files[index]);
  for (Dwarf_Signed i = 0; i < count; ++i) dwarf_dealloc(dw.file().dbg(), files[i], DW_DLA_STRING);
  dwarf_dealloc(dw.file().dbg(), files, DW_DLA_LIST);
  return out;
}

}  // namespace

FormatOptions symbolizing_options(ModuleList& modules) {
  FormatOptions opt;
  opt.symbolize = [&modules](uint64_t addr) -> std::string {
    Module* m = modules.module_at(addr);
    const Symbol* s = m ? m->function_at(m->to_link(addr)) : nullptr;
    if (!s) return "";
    uint64_t off = m->to_link(addr) - s->addr;
    std::string name = without_parameters(s->demangled);
    return off ? name + "+" + std::to_string(off) : name;
  };
  return opt;
}

std::optional<SourceLine> source_line_at(ModuleList& modules, uint64_t runtime_addr) {
  Module* m = modules.module_at(runtime_addr);
  DwarfIndex* dw = m ? m->dwarf() : nullptr;
  if (!dw) return std::nullopt;
  auto row = dw->line_at(m->to_link(runtime_addr));
  if (!row || row->second.line == 0) return std::nullopt;
  const auto& files = dw->lines(row->first).files;
  SourceLine s;
  s.file = row->second.file < files.size() ? files[row->second.file] : "";
  s.line = row->second.line;
  s.column = row->second.column;
  s.is_stmt = row->second.is_stmt;
  return s;
}

std::vector<StackFrame> build_call_stack(Target& target, ModuleList& modules, pid_t tid,
                                         size_t max_frames) {
  std::vector<StackFrame> out;
  auto physical = unwind_stack(target, modules, tid, max_frames);
  for (size_t i = 0; i < physical.size() && out.size() < max_frames; ++i) {
    const PhysicalFrame& p = physical[i];
    StackFrame base;
    base.tid = tid;
    base.physical = i;
    base.pc = p.pc;
    base.cfa = p.cfa;
    base.regs = p.regs;
    base.return_address = p.return_address;
    base.module = modules.module_at(p.pc);
    if (!base.module) {
      out.push_back(base);
      continue;
    }
    uint64_t a = base.lookup_pc();
    DwarfIndex* dw = base.module->dwarf();
    const FunctionInfo* fn = dw ? dw->function_at(a) : nullptr;
    if (!fn) {
      if (const Symbol* s = base.module->function_at(a))
        base.function = without_parameters(s->demangled);
      out.push_back(base);
      continue;
    }
    base.fn = fn;
    auto line = dw->line_at(a);
    std::string file;
    uint32_t lineno = 0, column = 0;
    if (line && line->second.line) {
      const auto& files = dw->lines(line->first).files;
      file = line->second.file < files.size() ? files[line->second.file] : "";
      lineno = line->second.line;
      column = line->second.column;
    }
    // Inlined calls, innermost first: each frame's position is where the next inner one
    // was called from (DW_AT_call_file/line of the inner inlined_subroutine).
    auto chain = dw->inline_chain(*fn, a);
    for (size_t k = chain.size(); k-- > 0;) {
      Die inl = dw->file().die_at(chain[k]);
      StackFrame f = base;
      f.inlined = true;
      f.scope = chain[k];
      f.function = inl.name();
      f.file = file;
      f.line = lineno;
      f.column = column;
      out.push_back(f);
      file = unit_file(*dw, fn->unit, inl.udata(DW_AT_call_file).value_or(0));
      lineno = uint32_t(inl.udata(DW_AT_call_line).value_or(0));
      column = uint32_t(inl.udata(DW_AT_call_column).value_or(0));
    }
    base.scope = fn->die;
    base.function = fn->name;
    base.file = file;
    base.line = lineno;
    base.column = column;
    out.push_back(base);
  }
  if (out.size() > max_frames) out.resize(max_frames);
  return out;
}

}  // namespace rwd
