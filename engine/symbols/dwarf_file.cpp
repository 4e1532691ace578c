#include "engine/symbols/dwarf_file.h"

#include <dwarf.h>

#include "engine/errors.h"

namespace rwd {

Die& Die::operator=(Die&& o) noexcept {
  if (this != &o) {
    if (die_) dwarf_dealloc_die(die_);
    file_ = o.file_;
    die_ = o.die_;
    o.die_ = nullptr;
  }
  return *this;
}

Die::~Die() {
  if (die_) dwarf_dealloc_die(die_);
}

DieOffset Die::offset() const {
  Dwarf_Off off = 0;
  dwarf_dieoffset(die_, &off, nullptr);
  return off;
}

int Die::tag() const {
  Dwarf_Half t = 0;
  if (!die_ || dwarf_tag(die_, &t, nullptr) != DW_DLV_OK) return 0;
  return t;
}

int Die::version() const {
  Dwarf_Half v = 0, off_size = 0;
  if (!die_ || dwarf_get_version_of_die(die_, &v, &off_size) != DW_DLV_OK) return 4;
  return v;
}

std::vector<Die> Die::children() const {
  std::vector<Die> out;
  Dwarf_Die child = nullptr;
  if (!die_ || dwarf_child(die_, &child, nullptr) != DW_DLV_OK) return out;
  out.emplace_back(file_, child);
  for (;;) {
    Dwarf_Die next = nullptr;
    if (dwarf_siblingof_b(file_->dbg(), out.back().raw(), true, &next, nullptr) != DW_DLV_OK) break;
    out.emplace_back(file_, next);
  }
  return out;
}

bool Die::has(int at) const {
  Dwarf_Bool b = 0;
  return die_ && dwarf_hasattr(die_, Dwarf_Half(at), &b, nullptr) == DW_DLV_OK && b;
}

std::optional<uint64_t> Die::udata(int at) const {
  std::optional<uint64_t> v;
  with_raw_attr(at, [&](Dwarf_Attribute a) {
    Dwarf_Unsigned u = 0;
    Dwarf_Signed s = 0;
    if (dwarf_formudata(a, &u, nullptr) == DW_DLV_OK)
      v = u;
    else if (dwarf_formsdata(a, &s, nullptr) == DW_DLV_OK)
      v = uint64_t(s);
  });
  return v;
}

std::optional<int64_t> Die::sdata(int at) const {
  std::optional<int64_t> v;
  with_raw_attr(at, [&](Dwarf_Attribute a) {
    Dwarf_Half form = 0;
    dwarf_whatform(a, &form, nullptr);
    Dwarf_Signed s = 0;
    Dwarf_Unsigned u = 0;
    // DW_FORM_dataN carry no sign; gcc uses them for enumerators of unsigned enums.
    bool unsigned_form = form == DW_FORM_udata;
    if (!unsigned_form && dwarf_formsdata(a, &s, nullptr) == DW_DLV_OK)
      v = s;
    else if (dwarf_formudata(a, &u, nullptr) == DW_DLV_OK)
      v = int64_t(u);
  });
  return v;
}

bool Die::flag(int at) const {
  bool v = false;
  with_raw_attr(at, [&](Dwarf_Attribute a) {
    Dwarf_Bool b = 0;
    v = dwarf_formflag(a, &b, nullptr) == DW_DLV_OK && b;
  });
  return v;
}

std::string Die::string(int at) const {
  std::string v;
  with_raw_attr(at, [&](Dwarf_Attribute a) {
    char* s = nullptr;
    if (dwarf_formstring(a, &s, nullptr) == DW_DLV_OK && s) v = s;
  });
  return v;
}

std::optional<DieOffset> Die::ref(int at) const {
  std::optional<DieOffset> v;
  with_raw_attr(at, [&](Dwarf_Attribute a) {
    Dwarf_Off off = 0;
    if (dwarf_global_formref(a, &off, nullptr) == DW_DLV_OK) v = off;
  });
  return v;
}

Die Die::with_attr(int at) const {
  if (!die_) return {};
  if (has(at))
    return Die(file_, [&] {
      Dwarf_Die d = nullptr;
      dwarf_offdie_b(file_->dbg(), offset(), true, &d, nullptr);
      return d;
    }());
  for (int link : {DW_AT_abstract_origin, DW_AT_specification}) {
    if (auto r = ref(link)) {
      Die origin = file_->die_at(*r);
      if (origin && origin.offset() != offset()) return origin.with_attr(at);
    }
  }
  return {};
}

std::string Die::name() const {
  if (has(DW_AT_name)) return string(DW_AT_name);
  Die d = with_attr(DW_AT_name);
  return d ? d.string(DW_AT_name) : "";
}

std::optional<DieOffset> Die::type() const {
  if (has(DW_AT_type)) return ref(DW_AT_type);
  Die d = with_attr(DW_AT_type);
  return d ? d.ref(DW_AT_type) : std::nullopt;
}

namespace {

/// The base address of the unit holding `die` (its DW_AT_low_pc, 0 when absent).
uint64_t unit_base(const Die& die) {
  Dwarf_Off cu_off = 0;
  if (dwarf_CU_dieoffset_given_die(die.raw(), &cu_off, nullptr) != DW_DLV_OK) return 0;
  Die cu = die.file()->die_at(cu_off);
  Dwarf_Addr lo = 0;
  if (cu && dwarf_lowpc(cu.raw(), &lo, nullptr) == DW_DLV_OK) return lo;
  return 0;
}

void dwarf5_ranges(Dwarf_Attribute a, std::vector<AddressRange>& out) {
  Dwarf_Half form = 0;
  dwarf_whatform(a, &form, nullptr);
  Dwarf_Unsigned value = 0;
  if (dwarf_formudata(a, &value, nullptr) != DW_DLV_OK) {
    Dwarf_Off off = 0;
    if (dwarf_global_formref(a, &off, nullptr) != DW_DLV_OK) return;
    value = off;
  }
  Dwarf_Rnglists_Head head = nullptr;
  Dwarf_Unsigned count = 0, global_off = 0;
  if (dwarf_rnglists_get_rle_head(a, form, value, &head, &count, &global_off, nullptr) != DW_DLV_OK)
    return;
  for (Dwarf_Unsigned i = 0; i < count; ++i) {
    unsigned len = 0, code = 0;
    Dwarf_Unsigned raw1 = 0, raw2 = 0, lo = 0, hi = 0;
    Dwarf_Bool unavailable = 0;
    if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &raw1, &raw2, &unavailable, &lo,
                                          &hi, nullptr) != DW_DLV_OK)
      break;
    if (unavailable) continue;
    if (code == DW_RLE_offset_pair || code == DW_RLE_startx_endx || code == DW_RLE_startx_length ||
        code == DW_RLE_start_end || code == DW_RLE_start_length)
      if (hi > lo) out.push_back({lo, hi});
  }
  dwarf_dealloc_rnglists_head(head);
}

void dwarf4_ranges(const Die& die, Dwarf_Attribute a, std::vector<AddressRange>& out) {
  Dwarf_Unsigned off = 0;
  if (dwarf_formudata(a, &off, nullptr) != DW_DLV_OK) {
    Dwarf_Off o = 0;
    if (dwarf_global_formref(a, &o, nullptr) != DW_DLV_OK) return;
    off = o;
  }
  Dwarf_Debug dbg = die.file()->dbg();
  Dwarf_Ranges* buf = nullptr;
  Dwarf_Signed count = 0;
  Dwarf_Unsigned bytes = 0;
  Dwarf_Off real = 0;
  if (dwarf_get_ranges_b(dbg, off, die.raw(), &real, &buf, &count, &bytes, nullptr) != DW_DLV_OK)
    return;
  uint64_t base = die.tag() == DW_TAG_compile_unit ? 0 : unit_base(die);
  if (die.tag() == DW_TAG_compile_unit) {
    Dwarf_Addr lo = 0;
    if (dwarf_lowpc(die.raw(), &lo, nullptr) == DW_DLV_OK) base = lo;
  }
  for (Dwarf_Signed i = 0; i < count; ++i) {
    if (buf[i].dwr_type == DW_RANGES_END) break;
    if (buf[i].dwr_type == DW_RANGES_ADDRESS_SELECTION) {
      base = buf[i].dwr_addr2;
      continue;
    }
    uint64_t lo = base + buf[i].dwr_addr1, hi = base + buf[i].dwr_addr2;
    if (hi > lo) out.push_back({lo, hi});
  }
  dwarf_ranges_dealloc(dbg, buf, count);
}

}  // namespace

std::vector<AddressRange> Die::ranges() const {
  std::vector<AddressRange> out;
  if (!die_) return out;
  Dwarf_Addr lo = 0;
  if (dwarf_lowpc(die_, &lo, nullptr) == DW_DLV_OK) {
    Dwarf_Addr hi = 0;
    Dwarf_Half form = 0;
    enum Dwarf_Form_Class cls = DW_FORM_CLASS_UNKNOWN;
    if (dwarf_highpc_b(die_, &hi, &form, &cls, nullptr) == DW_DLV_OK) {
      if (cls != DW_FORM_CLASS_ADDRESS) hi += lo;
      if (hi > lo) out.push_back({lo, hi});
      return out;
    }
  }
  int version = this->version();
  with_raw_attr(DW_AT_ranges, [&](Dwarf_Attribute a) {
    if (version >= 5)
      dwarf5_ranges(a, out);
    else
      dwarf4_ranges(*this, a, out);
  });
  return out;
}

namespace {
/// libdwarf aborts the process on an error when no handler is set and the caller passed no
/// Dwarf_Error; with this handler such calls simply return DW_DLV_ERROR.
void ignore_dwarf_error(Dwarf_Error, Dwarf_Ptr) {}
}  // namespace

DwarfFile::DwarfFile(const std::string& path) : path_(path) {
  Dwarf_Error err = nullptr;
  int rc = dwarf_init_path(path.c_str(), nullptr, 0, DW_DLC_READ, DW_GROUPNUMBER_ANY,
                           ignore_dwarf_error, nullptr, &dbg_, nullptr, 0, nullptr, &err);
  if (rc != DW_DLV_OK) {
    std::string why = rc == DW_DLV_NO_ENTRY ? "no DWARF debug information"
                                            : (err ? dwarf_errmsg(err) : "cannot read DWARF");
    if (err) dwarf_dealloc_error(dbg_, err);
    throw Error(path + ": " + why);
  }
}

DwarfFile::~DwarfFile() {
  if (dbg_) dwarf_finish(dbg_, nullptr);
}

Die DwarfFile::die_at(DieOffset off) const {
  Dwarf_Die d = nullptr;
  if (dwarf_offdie_b(dbg_, off, true, &d, nullptr) != DW_DLV_OK) return {};
  return Die(this, d);
}

}  // namespace rwd
