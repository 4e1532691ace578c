#include "engine/trace/event_codec.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "engine/errors.h"

using namespace rwd;

namespace {
/// Decodes the event `w` holds, its data read from `data` at `pos` on (which it advances).
Event decode_from(const ByteWriter& w, const std::vector<uint8_t>& data, size_t& pos) {
  ByteReader r(w.data(), "events");
  Event out = decode_event(r, [&](size_t n) {
    REQUIRE(pos + n <= data.size());
    std::vector<uint8_t> v(data.begin() + long(pos), data.begin() + long(pos + n));
    pos += n;
    return v;
  });
  CHECK(r.at_end());
  return out;
}

Event round_trip(const Event& e) {
  ByteWriter w;
  std::vector<uint8_t> data;
  encode_event(e, w, data);
  size_t pos = 0;
  Event out = decode_from(w, data, pos);
  CHECK(pos == data.size());
  return out;
}
}  // namespace

TEST_CASE("a syscall event keeps registers, result and out-parameters") {
  Event e;
  e.number = 42;
  e.tid = 1234;
  e.kind = EventKind::Syscall;
  e.regs.orig_rax = 0;  // read
  e.regs.rip = 0x401000;
  e.regs.fs_base = 0x7ffff7d8a740;
  e.result = 5;
  e.output = OutputStream::Stderr;
  e.file = "libc.so.6-3";
  e.memory.push_back({0x7fffffffe000, {'h', 'e', 'l', 'l', 'o'}});
  e.memory.push_back({0x1000, {}});
  Event o = round_trip(e);
  CHECK(o.number == 42);
  CHECK(o.tid == 1234);
  CHECK(o.kind == EventKind::Syscall);
  CHECK(std::memcmp(&o.regs, &e.regs, sizeof e.regs) == 0);
  CHECK(o.result == 5);
  CHECK(o.output == OutputStream::Stderr);
  CHECK(o.file == "libc.so.6-3");
  REQUIRE(o.memory.size() == 2);
  CHECK(o.memory[0].addr == 0x7fffffffe000);
  CHECK(o.memory[0].bytes == std::vector<uint8_t>{'h', 'e', 'l', 'l', 'o'});
}

TEST_CASE("regions put into the data stream before encoding read back as copied ones") {
  // The recorder reads an exec's memory straight into the data chunk (exec_capture.h): the
  // event then names those regions by size only, and its other data follows them.
  Event e;
  e.kind = EventKind::Exec;
  e.file = "prog-0";
  std::vector<uint8_t> data = {9, 9};  // an earlier event's data, still pending
  const std::vector<uint8_t> stack = {1, 2, 3, 4, 5}, bss = {6, 7};
  data.insert(data.end(), stack.begin(), stack.end());
  data.insert(data.end(), bss.begin(), bss.end());
  e.memory.push_back({0x7ffffffde000, {}, stack.size()});
  e.memory.push_back({0x555555558000, {}, bss.size()});
  e.memory.push_back({0x1000, {}, 0});  // nothing was readable there
  e.buffered = {0xaa, 0xbb, 0xcc};
  ByteWriter w;
  encode_event(e, w, data);
  REQUIRE(data == std::vector<uint8_t>{9, 9, 1, 2, 3, 4, 5, 6, 7, 0xaa, 0xbb, 0xcc});
  size_t pos = 2;  // after the earlier event's data
  Event o = decode_from(w, data, pos);
  CHECK(pos == data.size());
  REQUIRE(o.memory.size() == 3);
  CHECK(o.memory[0].addr == 0x7ffffffde000);
  CHECK(o.memory[0].bytes == stack);
  CHECK(o.memory[1].bytes == bss);
  CHECK(o.memory[2].bytes.empty());
  CHECK(o.buffered == e.buffered);

  // Their bytes lie before any copied region's: one after a copied region cannot be encoded.
  Event bad;
  bad.kind = EventKind::Syscall;
  bad.memory.push_back({0x1000, {1}});
  bad.memory.push_back({0x2000, {}, 4});
  ByteWriter w2;
  std::vector<uint8_t> d2 = {0, 0, 0, 0};
  CHECK_THROWS_AS(encode_event(bad, w2, d2), Error);
}

TEST_CASE("exec, signal, point and exit events keep their fields") {
  Event x;
  x.kind = EventKind::Exec;
  x.mappings.push_back({0x555555554000, 0x555555556000, 0x1000, 5, 2, "ls-0", "/usr/bin/ls"});
  x.argv = {"ls", "-la"};
  x.file = "ls-0";
  Event xo = round_trip(x);
  REQUIRE(xo.mappings.size() == 1);
  CHECK(xo.mappings[0].end == 0x555555556000);
  CHECK(xo.mappings[0].name == "/usr/bin/ls");
  CHECK(xo.argv == x.argv);

  Event s;
  s.kind = EventKind::Signal;
  s.signo = 11;
  s.synchronous = true;
  s.siginfo[0] = 11;
  s.siginfo[127] = 9;
  Event so = round_trip(s);
  CHECK(so.signo == 11);
  CHECK(so.synchronous);
  CHECK(so.siginfo == s.siginfo);

  Event p;  // a point: registers, the digests, the exclusions and the stack words
  p.kind = EventKind::Sched;
  p.regs.rsp = 0x7fffffffd000;
  p.digest = {0x1111, 0x2222};
  p.stack_digest = {0x3333, 0x4444};
  p.register_digest = {0x5555, 0x6666};
  p.exclusions = {{0x7ffff0000000, 4096}};
  p.stack_words = {7, 0x7fffffffd100, 0xdeadbeef};
  Event po = round_trip(p);
  CHECK(po.regs.rsp == p.regs.rsp);
  CHECK(po.digest == p.digest);
  CHECK(po.stack_digest == p.stack_digest);
  CHECK(po.register_digest == p.register_digest);
  CHECK(po.exclusions == p.exclusions);
  CHECK(po.stack_words == p.stack_words);

  Event t;
  t.kind = EventKind::Exit;
  t.status = 0x8b;
  CHECK(round_trip(t).status == 0x8b);
}

TEST_CASE("decoding never trusts counts or kinds from the input") {
  auto decode = [](std::vector<uint8_t> rec) {
    ByteReader r(rec, "events");
    return decode_event(r, [](size_t) -> std::vector<uint8_t> { throw TraceError("no data"); });
  };
  CHECK_THROWS_WITH(decode({99}), Catch::Contains("unknown event kind 99"));
  CHECK_THROWS_WITH(decode({1, 1, 2}), Catch::Contains("record truncated"));
  ByteWriter w;
  w.u8(uint8_t(EventKind::Exit));
  w.u64(1);
  w.i32(1);
  w.u32(0xffffffff);  // absurd number of memory regions
  CHECK_THROWS_WITH(decode(w.data()), Catch::Contains("too many memory regions"));

  // A point with more stack words than a recorder writes.
  Event p;
  p.kind = EventKind::Sched;
  p.stack_words.assign(kPointStackWords, 1);
  ByteWriter ok;
  std::vector<uint8_t> data;
  encode_event(p, ok, data);
  std::vector<uint8_t> rec = ok.data();
  // The count sits right before the words, at the record's end.
  const size_t count_at = rec.size() - 8 * kPointStackWords - 4;
  const uint32_t too_many = kPointStackWords + 1;
  std::memcpy(rec.data() + count_at, &too_many, 4);
  CHECK_THROWS_WITH(decode(rec), Catch::Contains("too many point stack words"));
}
