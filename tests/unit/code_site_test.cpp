// Code sites (engine/timeline/code_site.h): the same instruction of a file in two address
// spaces, and addresses in no file.
#include "engine/timeline/code_site.h"

#include <catch2/catch.hpp>

using namespace rwd;

namespace {

ProcMapping mapping(uint64_t start, uint64_t end, uint64_t offset, bool exec, std::string path) {
  ProcMapping m;
  m.start = start;
  m.end = end;
  m.offset = offset;
  m.read = true;
  m.exec = exec;
  m.path = std::move(path);
  return m;
}

}  // namespace

TEST_CASE("a code site is a file and offset, found again wherever the file is mapped", "[unit]") {
  // The parent maps a.out's text at 0x401000 (offset 0x1000); the child maps b.out there and
  // a.out's text elsewhere.
  std::vector<ProcMapping> parent = {mapping(0x400000, 0x401000, 0, false, "/t/files/a.out-0"),
                                     mapping(0x401000, 0x402000, 0x1000, true, "/t/files/a.out-0"),
                                     mapping(0x7000000, 0x7001000, 0, false, "[heap]")};
  std::vector<ProcMapping> child = {
      mapping(0x401000, 0x402000, 0x1000, true, "/t/files/b.out-1"),
      mapping(0x7ff000001000, 0x7ff000002000, 0x1000, true, "/t/files/a.out-0 (deleted)")};

  CodeSite s = code_site(parent, 0x401234);
  CHECK(s.file == "/t/files/a.out-0");
  CHECK(s.offset == 0x1234);
  CHECK(site_addresses(parent, s) == std::vector<uint64_t>{0x401234});
  // Not b.out's code at the same address; a.out's, where the child has it.
  CHECK(site_addresses(child, s) == std::vector<uint64_t>{0x7ff000001234});
  CHECK(code_site(child, 0x7ff000001234) == s);

  // Outside any file (the heap, unmapped): the address itself, in every address space.
  CodeSite heap = code_site(parent, 0x7000010);
  CHECK(heap.file.empty());
  CHECK(heap.offset == 0x7000010);
  CHECK(site_addresses(child, heap) == std::vector<uint64_t>{0x7000010});
  CHECK(code_site(parent, 0x10).file.empty());

  // A site in a part of the file that is mapped but cannot execute gets no breakpoint.
  CodeSite data = code_site(parent, 0x400010);
  CHECK(data.file == "/t/files/a.out-0");
  CHECK(site_addresses(parent, data).empty());
}
