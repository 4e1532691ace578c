// Pieces of the gdb remote protocol that need no replay: thread-ids with and without the
// multiprocess extensions, and the read-only host I/O (vFile) packets over a real file and
// over the /proc files the server makes up for the trace's processes.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "adapter/gdb/gdb_files.h"
#include "adapter/gdb/gdb_packet.h"
#include "test_dir.h"

using namespace rwd::gdb;

TEST_CASE("thread-ids: TID, pPID.TID, pPID, -1 and 0") {
  auto plain = parse_thread_id("1a2b");
  REQUIRE(plain);
  CHECK(plain->pid == 0);
  CHECK(plain->tid == 0x1a2b);
  auto both = parse_thread_id("p2a.2b");
  REQUIRE(both);
  CHECK(both->pid == 0x2a);
  CHECK(both->tid == 0x2b);
  auto process = parse_thread_id("p2a");
  REQUIRE(process);
  CHECK(process->pid == 0x2a);
  CHECK(process->tid == -1);  // every thread of it
  auto all = parse_thread_id("p-1.-1");
  REQUIRE(all);
  CHECK(all->pid == -1);
  CHECK(all->tid == -1);
  auto any = parse_thread_id("p0.0");
  REQUIRE(any);
  CHECK(any->pid == 0);
  CHECK(any->tid == 0);
  for (const char* bad : {"", "p", "p.1", "pzz.1", "p1.", "p1.x", "-2", "123456789abcdef01"})
    CHECK_FALSE(parse_thread_id(bad));
  CHECK(format_thread_id(0x2a, 0x2b, true) == "p2a.2b");
  CHECK(format_thread_id(0x2a, 0x2b, false) == "2b");
  CHECK(format_thread_id(-1, -1, true) == "p-1.-1");
}

namespace {

std::string hex(std::string_view s) {
  return to_hex(s);
}

/// The /proc files of one made-up traced process, 77 with threads 77 and 78.
std::optional<std::string> fake_proc(pid_t pid, pid_t tid, std::string_view name) {
  if (pid != 77 || (tid != 0 && tid != 77 && tid != 78)) return std::nullopt;
  if (name == "maps") return std::string("00400000-00401000 r-xp 00000000 00:00 1 /bin/x\n");
  if (name == "exe") return std::string("/traces/t/files/x-0");
  return std::nullopt;
}

}  // namespace

TEST_CASE("vFile: a real file read back in pieces, read-only") {
  TestDir dir;
  std::string path = dir / "data";
  std::ofstream(path) << "0123456789#$}*end";
  HostFiles files(fake_proc);
  CHECK(files.handle("vFile:setfs:0") == "F0");
  std::string fd = files.handle("vFile:open:" + hex(path) + ",0,0");
  REQUIRE(fd == "F1");
  CHECK(files.handle("vFile:pread:1,4,0") == "F4;0123");
  CHECK(files.handle("vFile:pread:1,5,a") == "F5;#$}*e");  // framing escapes them later
  CHECK(files.handle("vFile:pread:1,100,f") == "F2;nd");
  CHECK(files.handle("vFile:pread:1,10,64") == "F0;");  // past the end
  CHECK(files.handle("vFile:close:1") == "F0");
  CHECK(files.handle("vFile:close:1") == "F-1,9");  // EBADF
  CHECK(files.handle("vFile:pread:1,4,0") == "F-1,9");
  // Writing or creating is refused (EROFS), a missing file is ENOENT, junk EINVAL.
  CHECK(files.handle("vFile:open:" + hex(path) + ",1,0") == "F-1,1e");
  CHECK(files.handle("vFile:open:" + hex(path) + ",201,1a4") == "F-1,1e");
  CHECK(files.handle("vFile:open:" + hex(dir / "none") + ",0,0") == "F-1,2");
  CHECK(files.handle("vFile:open:zz,0,0") == "F-1,16");
  CHECK(files.handle("vFile:open:" + hex(path)) == "F-1,16");
  CHECK(files.handle("vFile:unlink:" + hex(path)).empty());  // not served
  CHECK(access(path.c_str(), F_OK) == 0);
}

TEST_CASE("vFile: /proc files of the trace's processes come from the replay") {
  HostFiles files(fake_proc);
  CHECK(files.handle("vFile:open:" + hex("/proc/77/task/78/maps") + ",0,0") == "F1");
  CHECK(files.handle("vFile:pread:1,1000,0") ==
        "F2f;00400000-00401000 r-xp 00000000 00:00 1 /bin/x\n");
  CHECK(files.handle("vFile:open:" + hex("/proc/77/maps") + ",0,0") == "F2");
  // This machine's /proc is never read for them: an unknown process or file is ENOENT.
  CHECK(files.handle("vFile:open:" + hex("/proc/1/maps") + ",0,0") == "F-1,2");
  CHECK(files.handle("vFile:open:" + hex("/proc/self/maps") + ",0,0") == "F-1,2");
  CHECK(files.handle("vFile:open:" + hex("/proc/77/environ") + ",0,0") == "F-1,2");
  CHECK(files.handle("vFile:readlink:" + hex("/proc/77/exe")) == "F13;/traces/t/files/x-0");
  CHECK(files.handle("vFile:readlink:" + hex("/proc/77/maps")) == "F-1,2");
}

TEST_CASE("vFile: at most 64 files open at once") {
  HostFiles files(fake_proc);
  std::string open = "vFile:open:" + hex("/proc/77/maps") + ",0,0";
  for (int i = 0; i < 64; ++i) REQUIRE(files.handle(open)[1] != '-');
  CHECK(files.handle(open) == "F-1,18");  // EMFILE
  CHECK(files.handle("vFile:close:5") == "F0");
  CHECK(files.handle(open) == "F41");
}

TEST_CASE("vFile and thread-ids: random packets get an answer, never a crash") {
  // Pieces gdb's packets are made of, glued at random (a fixed seed: the same run each time).
  const char* pieces[] = {
      "vFile:",     "open:", "pread:", "close:", "readlink:",        "setfs:", "2f70726f63", "2f",
      ",",          "0",     "1",      "-1",     "ffffffffffffffff", "p",      ".",          "77",
      "2f6d617073", ":",     "zz",     ""};
  HostFiles files(fake_proc);
  uint64_t seed = 12345;
  for (int i = 0; i < 20000; ++i) {
    std::string packet = i % 2 ? "vFile:" : "";
    int n = int(seed % 7) + 1;
    for (int k = 0; k < n; ++k) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      packet += pieces[(seed >> 33) % std::size(pieces)];
    }
    if (packet.rfind("vFile:", 0) == 0) {
      std::string reply = files.handle(packet);
      CHECK((reply.empty() || reply[0] == 'F'));
    }
    (void)parse_thread_id(packet);
  }
}
