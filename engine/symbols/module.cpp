#include "engine/symbols/module.h"

#include "engine/errors.h"
#include "engine/symbols/debug_file_locator.h"

namespace rwd {

Module::Module(std::string file, std::string display_path, uint64_t header_addr)
    : file_(std::move(file)), display_path_(std::move(display_path)) {
  elf_ = ElfImage::open(file_);
  bias_ = header_addr - elf_->first_load_vaddr();
  symbols_.add(elf_->symbols());
  debug_file_ = find_debug_file(*elf_, display_path_);
  if (!debug_file_.empty() && debug_file_ != file_) {
    try {
      symbols_.add(ElfImage::open(debug_file_)->symbols());  // Debian keeps .symtab there
    } catch (const Error&) {
    }
  }
  symbols_.finish();
}

DwarfIndex* Module::dwarf() {
  if (!dwarf_tried_) {
    dwarf_tried_ = true;
    if (!debug_file_.empty()) {
      try {
        dwarf_ = std::make_unique<DwarfIndex>(debug_file_);
      } catch (const Error& e) {
        dwarf_error_ = e.what();
      }
    }
  }
  return dwarf_.get();
}

std::vector<const FunctionInfo*> Module::functions_named(const std::string& name) {
  if (!symbols_.may_name_function(name)) return {};
  DwarfIndex* dw = dwarf();
  return dw ? dw->functions_named(name) : std::vector<const FunctionInfo*>{};
}

TypeReader& Module::types() {
  if (!types_) {
    DwarfIndex* dw = dwarf();
    types_ = std::make_unique<TypeReader>(
        dw->file(), [dw](DieOffset off) { return dw->qualified_type_name(off); });
  }
  return *types_;
}

const Symbol* Module::function_at(uint64_t link) const {
  if (const Symbol* s = symbols_.function_at(link)) return s;
  for (const Symbol& p : parts_)
    if (link >= p.addr && link < p.addr + p.size) return &p;
  return nullptr;
}

void Module::name_part(const std::string& name, uint64_t lo, uint64_t hi) const {
  if (hi <= lo || symbols_.function_at(lo)) return;
  for (const Symbol& p : parts_)
    if (p.addr == lo) return;
  parts_.push_back(Symbol{name, name, lo, hi - lo, true});
}

}  // namespace rwd
