#include "engine/symbols/location.h"

#include <dwarf.h>

#include <cstring>

namespace rwd {

namespace {

/// One decoded operation. For blocks (DW_OP_implicit_value, DW_OP_entry_value) op1 is the
/// length and `block` points at the bytes.
struct Op {
  uint8_t atom = 0;
  uint64_t op1 = 0, op2 = 0, op3 = 0;
  uint64_t offset = 0;  ///< byte offset of the operation inside its expression
  const uint8_t* block = nullptr;
};

uint64_t uleb(const uint8_t*& p, const uint8_t* end) {
  uint64_t v = 0;
  int shift = 0;
  while (p < end) {
    uint8_t b = *p++;
    if (shift < 64) v |= uint64_t(b & 0x7f) << shift;
    shift += 7;
    if (!(b & 0x80)) break;
  }
  return v;
}

int64_t sleb(const uint8_t*& p, const uint8_t* end) {
  int64_t v = 0;
  int shift = 0;
  uint8_t b = 0;
  while (p < end) {
    b = *p++;
    if (shift < 64) v |= int64_t(b & 0x7f) << shift;
    shift += 7;
    if (!(b & 0x80)) break;
  }
  if (shift < 64 && (b & 0x40)) v |= -(int64_t(1) << shift);
  return v;
}

/// Decodes raw expression bytes (the operations rewind evaluates; others end decoding with
/// an op the evaluator rejects).
std::vector<Op> decode(const uint8_t* bytes, size_t len) {
  std::vector<Op> ops;
  const uint8_t *p = bytes, *end = bytes + len;
  auto fixed = [&](int n) {
    uint64_t v = 0;
    if (p + n <= end) memcpy(&v, p, size_t(n));
    p += n;
    return v;
  };
  while (p < end) {
    Op op;
    op.offset = uint64_t(p - bytes);
    op.atom = *p++;
    uint8_t a = op.atom;
    if (a == DW_OP_addr || a == DW_OP_const8u || a == DW_OP_const8s)
      op.op1 = fixed(8);
    else if (a == DW_OP_const1u)
      op.op1 = fixed(1);
    else if (a == DW_OP_const1s)
      op.op1 = uint64_t(int64_t(int8_t(fixed(1))));
    else if (a == DW_OP_const2u)
      op.op1 = fixed(2);
    else if (a == DW_OP_const2s || a == DW_OP_skip || a == DW_OP_bra)
      op.op1 = uint64_t(int64_t(int16_t(fixed(2))));
    else if (a == DW_OP_const4u)
      op.op1 = fixed(4);
    else if (a == DW_OP_const4s)
      op.op1 = uint64_t(int64_t(int32_t(fixed(4))));
    else if (a == DW_OP_constu || a == DW_OP_plus_uconst || a == DW_OP_regx || a == DW_OP_piece)
      op.op1 = uleb(p, end);
    else if (a == DW_OP_consts || a == DW_OP_fbreg || (a >= DW_OP_breg0 && a <= DW_OP_breg31))
      op.op1 = uint64_t(sleb(p, end));
    else if (a == DW_OP_bregx) {
      op.op1 = uleb(p, end);
      op.op2 = uint64_t(sleb(p, end));
    } else if (a == DW_OP_deref_size || a == DW_OP_pick)
      op.op1 = fixed(1);
    else if (a == DW_OP_implicit_value || a == DW_OP_entry_value || a == DW_OP_GNU_entry_value) {
      op.op1 = uleb(p, end);
      op.block = p;
      p += op.op1;
    } else if (a == DW_OP_bit_piece) {
      op.op1 = uleb(p, end);
      op.op2 = uleb(p, end);
    }
    ops.push_back(op);
  }
  return ops;
}

Location error(const std::string& why) {
  Location l;
  l.kind = Location::Kind::Error;
  l.error = why;
  return l;
}

Location optimized_out() {
  return Location{};
}

/// Runs ops on the DWARF stack machine (DWARF 5 section 2.5).
Location run(const std::vector<Op>& ops, const LocationContext& ctx) {
  std::vector<uint64_t> stack;
  std::vector<uint8_t> pieces;
  bool any_piece = false, piece_missing = false;
  // What the expression so far describes when it ends (or a piece ends).
  enum class Result { None, Memory, Register, Value, Implicit } result = Result::None;
  int result_reg = -1;
  std::vector<uint8_t> implicit;

  auto pop = [&]() -> std::optional<uint64_t> {
    if (stack.empty()) return std::nullopt;
    uint64_t v = stack.back();
    stack.pop_back();
    return v;
  };
  auto read_mem = [&](uint64_t addr, size_t n) -> std::optional<uint64_t> {
    auto b = ctx.target->read_memory(addr, n);
    if (b.size() != n) return std::nullopt;
    uint64_t v = 0;
    memcpy(&v, b.data(), n);
    return v;
  };
  auto reg = [&](int r) -> std::optional<uint64_t> {
    if (!ctx.regs.has(r)) return std::nullopt;
    return ctx.regs.value[size_t(r)];
  };
  // Bytes of the current simple location, `size` of them (0: natural size): 1 when read,
  // 0 when the location is empty or a register unknown in this frame, -1 on an error.
  auto current_bytes = [&](size_t size, std::vector<uint8_t>& out) -> int {
    if (result == Result::None && !stack.empty()) result = Result::Memory;
    switch (result) {
      case Result::Register: {
        if (result_reg >= 17 && result_reg <= 32) {  // xmm0-15
          if (!ctx.xmm) return 0;
          const uint8_t* x = ctx.xmm->data() + (result_reg - 17) * 16;
          out.assign(x, x + std::min<size_t>(size ? size : 16, 16));
          out.resize(size ? size : 16);
          return 1;
        }
        auto v = reg(result_reg);
        if (!v) return 0;
        out.resize(size ? size : 8);
        memcpy(out.data(), &*v, std::min<size_t>(out.size(), 8));
        return 1;
      }
      case Result::Memory: {
        auto a = pop();
        if (!a) return -1;
        out = ctx.target->read_memory(*a, size);
        return out.size() == size ? 1 : -1;
      }
      case Result::Value: {
        auto v = pop();
        if (!v) return -1;
        out.resize(size ? size : 8);
        memcpy(out.data(), &*v, std::min<size_t>(out.size(), 8));
        return 1;
      }
      case Result::Implicit:
        out = implicit;
        out.resize(size ? size : implicit.size());
        return 1;
      case Result::None:
        return 0;
    }
    return -1;
  };

  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    uint8_t a = op.atom;
    if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
      stack.push_back(a - DW_OP_lit0);
    } else if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
      result = Result::Register;
      result_reg = a - DW_OP_reg0;
    } else if (a == DW_OP_regx) {
      result = Result::Register;
      result_reg = int(op.op1);
    } else if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
      auto v = reg(a - DW_OP_breg0);
      if (!v) return optimized_out();  // a caller-saved register in an outer frame
      stack.push_back(*v + op.op1);
    } else if (a == DW_OP_bregx) {
      auto v = reg(int(op.op1));
      if (!v) return optimized_out();
      stack.push_back(*v + op.op2);
    } else if (a == DW_OP_fbreg) {
      if (!ctx.frame_base) return error("frame base unknown");
      stack.push_back(*ctx.frame_base + op.op1);
    } else if (a == DW_OP_call_frame_cfa) {
      if (!ctx.cfa) return error("frame address (CFA) unknown");
      stack.push_back(ctx.cfa);
    } else if (a == DW_OP_addr || a == DW_OP_addrx || a == DW_OP_GNU_addr_index) {
      stack.push_back(op.op1 + ctx.bias);  // addrx: resolved to the .debug_addr entry
    } else if (a == DW_OP_constx || a == DW_OP_GNU_const_index) {
      stack.push_back(op.op1);
    } else if (a == DW_OP_const1u || a == DW_OP_const1s || a == DW_OP_const2u ||
               a == DW_OP_const2s || a == DW_OP_const4u || a == DW_OP_const4s ||
               a == DW_OP_const8u || a == DW_OP_const8s || a == DW_OP_constu || a == DW_OP_consts) {
      stack.push_back(op.op1);
    } else if (a == DW_OP_dup || a == DW_OP_over || a == DW_OP_pick) {
      size_t back = a == DW_OP_dup ? 0 : a == DW_OP_over ? 1 : op.op1;
      if (stack.size() <= back) return error("DWARF stack underflow");
      stack.push_back(stack[stack.size() - 1 - back]);
    } else if (a == DW_OP_drop) {
      if (!pop()) return error("DWARF stack underflow");
    } else if (a == DW_OP_swap) {
      if (stack.size() < 2) return error("DWARF stack underflow");
      std::swap(stack[stack.size() - 1], stack[stack.size() - 2]);
    } else if (a == DW_OP_rot) {
      if (stack.size() < 3) return error("DWARF stack underflow");
      size_t n = stack.size();
      uint64_t top = stack[n - 1];
      stack[n - 1] = stack[n - 2];
      stack[n - 2] = stack[n - 3];
      stack[n - 3] = top;
    } else if (a == DW_OP_deref || a == DW_OP_deref_size) {
      auto addr = pop();
      if (!addr) return error("DWARF stack underflow");
      size_t n = a == DW_OP_deref ? 8 : size_t(op.op1);
      auto v = read_mem(*addr, n);
      if (!v) return error("cannot read memory at " + hex(*addr));
      stack.push_back(*v);
    } else if (a == DW_OP_plus_uconst) {
      if (stack.empty()) return error("DWARF stack underflow");
      stack.back() += op.op1;
    } else if (a == DW_OP_neg || a == DW_OP_not || a == DW_OP_abs) {
      if (stack.empty()) return error("DWARF stack underflow");
      int64_t v = int64_t(stack.back());
      stack.back() = a == DW_OP_neg   ? uint64_t(-v)
                     : a == DW_OP_not ? ~uint64_t(v)
                                      : uint64_t(v < 0 ? -v : v);
    } else if ((a >= DW_OP_and && a <= DW_OP_xor && a != DW_OP_neg && a != DW_OP_not &&
                a != DW_OP_plus_uconst && a != DW_OP_abs) ||
               (a >= DW_OP_eq && a <= DW_OP_ne)) {
      auto b = pop(), x = pop();
      if (!b || !x) return error("DWARF stack underflow");
      int64_t sa = int64_t(*x), sb = int64_t(*b);
      uint64_t r = 0;
      switch (a) {
        case DW_OP_and:
          r = *x & *b;
          break;
        case DW_OP_or:
          r = *x | *b;
          break;
        case DW_OP_xor:
          r = *x ^ *b;
          break;
        case DW_OP_plus:
          r = *x + *b;
          break;
        case DW_OP_minus:
          r = *x - *b;
          break;
        case DW_OP_mul:
          r = *x * *b;
          break;
        case DW_OP_div:
          if (!sb) return error("division by zero in a DWARF expression");
          r = uint64_t(sa / sb);
          break;
        case DW_OP_mod:
          if (!*b) return error("division by zero in a DWARF expression");
          r = *x % *b;
          break;
        case DW_OP_shl:
          r = *b < 64 ? *x << *b : 0;
          break;
        case DW_OP_shr:
          r = *b < 64 ? *x >> *b : 0;
          break;
        case DW_OP_shra:
          r = uint64_t(*b < 64 ? sa >> *b : (sa < 0 ? -1 : 0));
          break;
        case DW_OP_eq:
          r = sa == sb;
          break;
        case DW_OP_ge:
          r = sa >= sb;
          break;
        case DW_OP_gt:
          r = sa > sb;
          break;
        case DW_OP_le:
          r = sa <= sb;
          break;
        case DW_OP_lt:
          r = sa < sb;
          break;
        case DW_OP_ne:
          r = sa != sb;
          break;
        default:
          return error("unsupported DWARF operation " + std::to_string(a));
      }
      stack.push_back(r);
    } else if (a == DW_OP_skip || a == DW_OP_bra) {
      if (a == DW_OP_bra) {
        auto v = pop();
        if (!v) return error("DWARF stack underflow");
        if (*v == 0) continue;
      }
      uint64_t target = op.offset + 3 + op.op1;
      size_t j = 0;
      while (j < ops.size() && ops[j].offset != target) ++j;
      if (j == ops.size() && target != (ops.empty() ? 0 : ops.back().offset + 1))
        return error("bad DWARF branch");
      i = j - 1;
    } else if (a == DW_OP_stack_value) {
      result = Result::Value;
    } else if (a == DW_OP_implicit_value) {
      result = Result::Implicit;
      implicit.assign(op.block, op.block + op.op1);
    } else if (a == DW_OP_entry_value || a == DW_OP_GNU_entry_value) {
      // Only the simple form: the entry value of one register (DW_OP_regN / DW_OP_regx).
      auto inner = decode(op.block, size_t(op.op1));
      int r = -1;
      if (inner.size() == 1 && inner[0].atom >= DW_OP_reg0 && inner[0].atom <= DW_OP_reg31)
        r = inner[0].atom - DW_OP_reg0;
      else if (inner.size() == 1 && inner[0].atom == DW_OP_regx)
        r = int(inner[0].op1);
      std::optional<uint64_t> v;
      if (r >= 0 && ctx.entry_value) v = ctx.entry_value(r);
      if (!v) return optimized_out();
      stack.push_back(*v);
    } else if (a == DW_OP_piece) {
      any_piece = true;
      std::vector<uint8_t> bytes;
      int ok = current_bytes(size_t(op.op1), bytes);
      if (ok < 0) return error("cannot read a piece of the value");
      if (ok == 0) {
        piece_missing = true;
        bytes.assign(size_t(op.op1), 0);
      }
      pieces.insert(pieces.end(), bytes.begin(), bytes.end());
      result = Result::None;
      stack.clear();
    } else if (a == DW_OP_implicit_pointer || a == DW_OP_GNU_implicit_pointer) {
      return error("synthetic pointer (the pointed-to object was optimized into registers)");
    } else if (a == DW_OP_nop) {
    } else {
      return error("unsupported DWARF operation 0x" + hex(a).substr(2));
    }
  }

  Location loc;
  if (any_piece) {
    if (piece_missing) return optimized_out();
    loc.kind = Location::Kind::Bytes;
    loc.bytes = std::move(pieces);
    return loc;
  }
  switch (result) {
    case Result::None:
    case Result::Memory: {
      auto a = pop();
      if (!a) return optimized_out();  // an empty expression: no location
      loc.kind = Location::Kind::Memory;
      loc.addr = *a;
      return loc;
    }
    case Result::Register:
    case Result::Value:
    case Result::Implicit: {
      std::vector<uint8_t> bytes;
      int ok = current_bytes(0, bytes);
      if (ok == 0) return optimized_out();
      if (ok < 0) return error("cannot compute the value");
      loc.kind = Location::Kind::Bytes;
      loc.bytes = std::move(bytes);
      return loc;
    }
  }
  return error("cannot compute the location");
}

}  // namespace

Location evaluate_expression(const uint8_t* bytes, size_t len, const LocationContext& ctx) {
  return run(decode(bytes, len), ctx);
}

Location evaluate_location(const Die& die, int at, const LocationContext& ctx) {
  Location result = optimized_out();
  bool found = die.with_raw_attr(at, [&](Dwarf_Attribute attr) {
    // One path for single expressions and location lists: libdwarf resolves the indexed
    // forms (DW_OP_addrx, DW_OP_constx: .debug_addr, which clang uses) in its operands.
    Dwarf_Loc_Head_c head = nullptr;
    Dwarf_Unsigned count = 0;
    if (dwarf_get_loclist_c(attr, &head, &count, nullptr) != DW_DLV_OK) {
      result = error("unreadable location list");
      return;
    }
    for (Dwarf_Unsigned i = 0; i < count; ++i) {
      Dwarf_Small lle = 0, source = 0;
      Dwarf_Unsigned rawlo = 0, rawhi = 0, ops_count = 0, expr_off = 0, desc_off = 0;
      Dwarf_Bool unavailable = 0;
      Dwarf_Addr lo = 0, hi = 0;
      Dwarf_Locdesc_c desc = nullptr;
      if (dwarf_get_locdesc_entry_d(head, i, &lle, &rawlo, &rawhi, &unavailable, &lo, &hi,
                                    &ops_count, &desc, &source, &expr_off, &desc_off,
                                    nullptr) != DW_DLV_OK)
        break;
      if (unavailable || ops_count == 0) continue;
      bool whole_scope = source == 0;  // a single expression, valid at every pc
      if (!whole_scope && !(ctx.pc >= lo && ctx.pc < hi)) continue;
      std::vector<Op> ops;
      for (Dwarf_Unsigned j = 0; j < ops_count; ++j) {
        Op op;
        Dwarf_Unsigned o1 = 0, o2 = 0, o3 = 0, r1 = 0, r2 = 0, r3 = 0, off = 0;
        Dwarf_Small atom = 0;
        if (dwarf_get_location_op_value_d(desc, j, &atom, &o1, &o2, &o3, &r1, &r2, &r3, &off,
                                          nullptr) != DW_DLV_OK)
          break;
        op.atom = atom;
        op.op1 = o1;
        op.op2 = o2;
        op.op3 = o3;
        op.offset = off;
        if (atom == DW_OP_implicit_value || atom == DW_OP_entry_value ||
            atom == DW_OP_GNU_entry_value)
          op.block = reinterpret_cast<const uint8_t*>(uintptr_t(o2));
        if (atom == DW_OP_skip || atom == DW_OP_bra) op.op1 = uint64_t(int64_t(int16_t(o1)));
        if (atom == DW_OP_addrx || atom == DW_OP_constx || atom == DW_OP_GNU_addr_index ||
            atom == DW_OP_GNU_const_index) {
          // An index into .debug_addr (DWARF 5 section 7.27): the entry is the operand.
          Dwarf_Addr a = 0;
          if (dwarf_debug_addr_index_to_addr(die.raw(), r1, &a, nullptr) != DW_DLV_OK) {
            result = error("unreadable .debug_addr entry");
            ops.clear();
            break;
          }
          op.op1 = a;
        }
        ops.push_back(op);
      }
      if (!ops.empty()) result = run(ops, ctx);
      break;
    }
    dwarf_loc_head_c_dealloc(head);
  });
  if (!found) return optimized_out();
  return result;
}

}  // namespace rwd
