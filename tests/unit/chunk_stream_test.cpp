#include "engine/trace/chunk_stream.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "engine/errors.h"
#include "engine/trace/serial_worker.h"
#include "test_dir.h"

using namespace rwd;

namespace {
constexpr uint32_t kKind = fourcc("TEST");

std::vector<uint8_t> bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(seed + i * 7);
  return v;
}

void write_two_chunks(const std::string& path) {
  ChunkWriter w(path, kKind);
  w.append(bytes(1000, 1));
  w.flush();
  w.append(bytes(5000, 2));
  w.flush();
}

void flip_byte(const std::string& path, long offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c;
  f.get(c);
  f.seekp(offset);
  f.put(char(c ^ 0x40));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("chunks round-trip through compression and checksums") {
  TestDir d;
  write_two_chunks(d / "s");
  ChunkReader r(d / "s", kKind, false);
  auto a = r.next();
  REQUIRE(a);
  CHECK(*a == bytes(1000, 1));
  auto b = r.next();
  REQUIRE(b);
  CHECK(*b == bytes(5000, 2));
  CHECK_FALSE(r.next());
  CHECK_FALSE(r.torn());
}

TEST_CASE("chunks read into one reused buffer: a large chunk, a small one, a large one again") {
  TestDir d;
  {
    // With a worker, as the trace writer has: each chunk is compressed on its thread.
    SerialWorker worker(1 << 20);
    ChunkWriter w(d / "s", kKind, &worker);
    w.append(bytes(300000, 3));
    w.flush();
    w.append(bytes(10, 4));
    w.flush();
    w.append(bytes(200000, 5));
    w.flush();
    w.append(bytes(300001, 6));
    w.finish();
  }
  ChunkReader r(d / "s", kKind, false);
  std::vector<uint8_t> buf;
  REQUIRE(r.next_into(buf));
  CHECK(buf == bytes(300000, 3));
  const uint8_t* storage = buf.data();
  REQUIRE(r.next_into(buf));
  CHECK(buf == bytes(10, 4));
  REQUIRE(r.next_into(buf));
  CHECK(buf == bytes(200000, 5));
  CHECK(buf.data() == storage);  // no new allocation for a chunk no larger than the first
  REQUIRE(r.next_into(buf));
  CHECK(buf == bytes(300001, 6));
  CHECK_FALSE(r.next_into(buf));
  CHECK(buf.empty());
  CHECK_FALSE(r.torn());
}

TEST_CASE("an empty flush writes no chunk") {
  TestDir d;
  {
    ChunkWriter w(d / "s", kKind);
    w.flush();
  }
  ChunkReader r(d / "s", kKind, false);
  CHECK_FALSE(r.next());
}

TEST_CASE("a flipped byte is reported with file and chunk offset") {
  TestDir d;
  write_two_chunks(d / "s");
  // First chunk starts at 24 (after the file header); its payload at 24 + 24.
  flip_byte(d / "s", 24 + 24 + 3);
  std::string msg = error_of([&] {
    ChunkReader r(d / "s", kKind, false);
    while (r.next()) {
    }
  });
  CHECK(msg == d / "s" + ": offset 24: chunk checksum mismatch (corrupted trace)");
}

TEST_CASE("a corrupted size field is caught before any allocation") {
  TestDir d;
  write_two_chunks(d / "s");
  flip_byte(d / "s", 24 + 11);  // high byte of the compressed size
  std::string msg = error_of([&] {
    ChunkReader r(d / "s", kKind, false);
    while (r.next()) {
    }
  });
  CHECK(msg.find("offset 24: chunk size out of bounds") != std::string::npos);
}

TEST_CASE("a torn tail is an error, unless the reader tolerates an interrupted recording") {
  TestDir d;
  write_two_chunks(d / "s");
  auto size = std::filesystem::file_size(d / "s");
  std::filesystem::resize_file(d / "s", size - 5);
  std::string msg = error_of([&] {
    ChunkReader r(d / "s", kKind, false);
    while (r.next()) {
    }
  });
  CHECK(msg.find("chunk extends past the end of the file (truncated trace)") != std::string::npos);
  ChunkReader tolerant(d / "s", kKind, true);
  CHECK(tolerant.next());        // the first, complete chunk
  CHECK_FALSE(tolerant.next());  // the torn one ends the stream quietly
  CHECK(tolerant.torn());
}

TEST_CASE("headers are checked: magic, version, kind") {
  TestDir d;
  write_two_chunks(d / "s");
  CHECK(error_of([&] {
          ChunkReader r(d / "s", fourcc("OTHR"), false);
        }).find("stream kind does not match") != std::string::npos);
  flip_byte(d / "s", 8);  // the version, 5 -> 69
  const std::string newer = "trace format version " + std::to_string(kTraceFormatVersion ^ 0x40) +
                            " is newer than this rewind supports (" +
                            std::to_string(kTraceFormatVersion) + ")";
  CHECK(error_of([&] { ChunkReader r(d / "s", kKind, false); }).find(newer) != std::string::npos);
  flip_byte(d / "s", 0);
  CHECK(error_of([&] { ChunkReader r(d / "s", kKind, false); }) ==
        d / "s" + ": offset 0: not a rewind trace stream (bad magic)");
  CHECK(error_of([&] { ChunkReader r(d / "missing", kKind, false); }).find("cannot open") !=
        std::string::npos);
}

TEST_CASE("a stream of another trace is refused by its trace id") {
  TestDir d;
  {
    ChunkWriter w(d / "s", kKind, nullptr, 0x1234);
    w.append({1, 2, 3});
  }
  CHECK(ChunkReader(d / "s", kKind, false).trace_id() == 0x1234);
  CHECK(ChunkReader(d / "s", kKind, false, 0x1234).next());
  CHECK(error_of([&] { ChunkReader r(d / "s", kKind, false, 0x5678); }) ==
        d / "s" +
            ": offset 16: belongs to another recording (trace id 0000000000001234, the "
            "trace's meta says 0000000000005678): files of two traces were mixed");
}
