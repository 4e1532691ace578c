// The parts of a struct or an array that a write changed (engine/symbols/value_diff.h), on
// types built as DWARF would describe them.
#include "engine/symbols/value_diff.h"

#include <catch2/catch.hpp>
#include <cstring>

using namespace rwd;

namespace {

/// A target with no memory: the values here are all made of bytes.
class NoMemory : public Target {
 public:
  std::vector<uint8_t> read_memory(uint64_t, size_t) override { return {}; }
  Registers registers(pid_t) override { return {}; }
  std::vector<ProcMapping> mappings() override { return {}; }
  std::vector<uint8_t> auxv() override { return {}; }
  std::optional<user_fpregs_struct> fp_registers(pid_t) override { return std::nullopt; }
};

TypePtr base(const char* name, uint64_t size, Encoding e) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::Base;
  t->name = name;
  t->size = size;
  t->encoding = e;
  return t;
}

TypePtr array_of(TypePtr element, std::vector<uint64_t> dims) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::Array;
  t->target = std::move(element);
  t->dims = std::move(dims);
  return t;
}

TypePtr record(TypeKind kind, const char* name, uint64_t size, std::vector<Member> members) {
  auto t = std::make_shared<Type>();
  t->kind = kind;
  t->name = name;
  t->size = size;
  t->members = std::move(members);
  return t;
}

template <typename T>
void put(std::vector<uint8_t>& bytes, size_t off, T v) {
  std::memcpy(bytes.data() + off, &v, sizeof v);
}

}  // namespace

TEST_CASE("a change names the members and elements it changed, with their values", "[unit]") {
  TypePtr i32 = base("int", 4, Encoding::Signed);
  TypePtr chr = base("char", 1, Encoding::SignedChar);
  TypePtr point = record(TypeKind::Struct, "point", 8, {{"x", i32, 0}, {"y", i32, 4}});
  TypePtr either = record(TypeKind::Union, "either", 4, {{"i", i32, 0}, {"c", chr, 0}});
  // struct item { struct point at; unsigned flags : 3 (bits 0-2 of offset 8); char tag[4];
  //               union either u; int grid[2][3]; }  = 8 + 4 + 4 + 4 + 24 = 44 bytes
  TypePtr item = record(TypeKind::Struct, "item", 44,
                        {{"at", point, 0},
                         {"flags", base("unsigned int", 4, Encoding::Unsigned), 8, 3, 0},
                         {"tag", array_of(chr, {4}), 12},
                         {"u", either, 16},
                         {"grid", array_of(i32, {2, 3}), 20}});
  NoMemory mem;
  std::vector<uint8_t> before(44, 0), after(44, 0);

  SECTION("one member of a nested struct") {
    put<int>(after, 4, 7);
    ChangeText c = describe_change(item, before, after, mem);
    CHECK(c.member == ".at.y");
    CHECK(c.old_value == "0");
    CHECK(c.new_value == "7");
    CHECK(changed_name("it", c.member) == "it.at.y");
  }
  SECTION("a bitfield, and not the bits beside it") {
    put<uint8_t>(after, 8, 0x5 | 0x40);  // flags = 5, and bit 6 (no member's) set
    ChangeText c = describe_change(item, before, after, mem);
    CHECK(c.member == ".flags");
    CHECK(c.new_value == "5");
    before[8] = 0x40;
    after[8] = 0x40;  // only the bits of no member changed
    CHECK(changed_parts(item, before, after, 8).empty());
  }
  SECTION("a char array and a union are one part each; elements of a 2-D array") {
    std::memcpy(after.data() + 12, "abc", 4);
    put<int>(after, 16, 65);
    put<int>(after, 20 + 4 * 4, 9);  // grid[1][1]
    ChangeText c = describe_change(item, before, after, mem);
    CHECK(c.member == ".tag, .u, .grid[1][1]");
    CHECK(changed_name("it", c.member) == "it (.tag, .u, .grid[1][1])");
    CHECK(c.new_value.find("\"abc\"") == 0);
    CHECK(c.new_value.substr(c.new_value.rfind(", ")) == ", 9");
  }
  SECTION("more than 8 parts: the first 8, and how many more") {
    TypePtr many = array_of(i32, {20});
    std::vector<uint8_t> a(80, 0), b(80, 1);
    size_t more = 0;
    CHECK(changed_parts(many, a, b, 8, &more).size() == 8);
    CHECK(more == 12);
    ChangeText c = describe_change(many, a, b, mem);
    CHECK(c.member == "[0], [1], [2], [3], [4], [5], [6], [7], … (+12 more)");
    CHECK(c.new_value ==
          "16843009, 16843009, 16843009, 16843009, 16843009, 16843009, 16843009, "
          "16843009, …");
  }
  SECTION("a qualified array is named once, as C writes it") {
    // GCC's DWARF for `volatile long ring[512]`: volatile (array of volatile long).
    auto vol = std::make_shared<Type>();
    vol->kind = TypeKind::Volatile;
    vol->target = base("long int", 8, Encoding::Signed);
    auto outer = std::make_shared<Type>();
    outer->kind = TypeKind::Volatile;
    outer->target = array_of(vol, {512});
    CHECK(type_name(*outer) == "volatile long int [512]");
  }
  SECTION("a scalar, and an image that could not be read, show whole") {
    std::vector<uint8_t> one = {1, 0, 0, 0}, two = {2, 0, 0, 0};
    ChangeText c = describe_change(i32, one, two, mem);
    CHECK(c.member.empty());
    CHECK(c.old_value == "1");
    CHECK(c.new_value == "2");
    c = describe_change(item, {}, after, mem);
    CHECK(c.member.empty());
    CHECK(c.old_value == "<unknown>");
  }
}
