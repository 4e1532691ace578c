#include "engine/arch/insn.h"

#include <catch2/catch.hpp>

using namespace rwd;

TEST_CASE("repeated string instructions are recognised with their length") {
  const uint8_t rep_movsb[] = {0xf3, 0xa4, 0x90};
  const uint8_t rep_stosq[] = {0xf3, 0x48, 0xab};
  const uint8_t repne_scasb[] = {0xf2, 0xae};
  const uint8_t movsb[] = {0xa4};          // no REP: completes at once
  const uint8_t rep_ret[] = {0xf3, 0xc3};  // "rep ret" is not a string instruction
  const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
  CHECK(rep_string_insn_length(rep_movsb, sizeof rep_movsb) == 2);
  CHECK(rep_string_insn_length(rep_stosq, sizeof rep_stosq) == 3);
  CHECK(rep_string_insn_length(repne_scasb, sizeof repne_scasb) == 2);
  CHECK(rep_string_insn_length(movsb, sizeof movsb) == 0);
  CHECK(rep_string_insn_length(rep_ret, sizeof rep_ret) == 0);
  CHECK(rep_string_insn_length(endbr64, sizeof endbr64) == 0);
  CHECK(rep_string_insn_length(rep_movsb, 1) == 0);  // truncated
}
