// Fuzzing the trace readers (issue 26): thousands of damaged copies of a real trace fed to
// `rewind replay -a`, `rewind dump` and `rewind ps`. Each must give the right answer (the
// same output and exit status as the intact trace) or fail with one line "rewind: ..." on
// stderr and a non-zero status; never a crash, a sanitizer report, a hang (60 s), or output
// that is not a prefix of the right one.
//
// Damage comes in two kinds. On the files as stored: bytes flipped, a file truncated,
// emptied, deleted, or taken from another recording, a saved file cut short. Inside the
// streams (checksums and sizes made valid again, so that the event and record decoders see
// the damage): bytes flipped, 32- and 64-bit fields forged to extreme values, records cut
// or repeated. A trace damaged inside may be a different but well-formed trace, so its
// answers are only required to be clean (no crash, hang or multi-line error).
// Count: REWIND_FUZZ_COUNT (default 2,000), seed: REWIND_FUZZ_SEED (default fixed);
// REWIND_FUZZ_PART=K/N runs the copies numbered K-1, K-1+N, ... only (CTest runs two parts
// side by side: each copy's damage depends on the seed and its number alone);
// REWIND_FUZZ_KEEP=1 keeps each failing trace (work directory printed in the failure).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/trace/chunk_stream.h"
#include "engine/trace/trace_files.h"
#include "engine/trace/trace_reader.h"

namespace fs = std::filesystem;

namespace {

struct Answer {
  int status = 0;  // raw wait status of the shell, whose exit code is rewind's
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Runs `rewind ARGS TRACE` with a 60 s limit, capturing its output.
Answer run(const std::string& work, const std::string& args, const std::string& trace) {
  std::string cmd = "timeout -s KILL 60 " + std::string(REWIND_BIN) + " " + args + " " + trace +
                    " >" + work + "/out 2>" + work + "/err </dev/null";
  Answer a;
  a.status = std::system(cmd.c_str());
  a.out = slurp(work + "/out");
  a.err = slurp(work + "/err");
  return a;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::string s = slurp(path);
  return std::vector<uint8_t>(s.begin(), s.end());
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  fs::remove(path);  // never write through a hard link
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), long(b.size()));
}

struct Stream {
  const char* name;
  uint32_t kind;
};
const Stream kStreams[] = {{rwd::kEventsFile, rwd::kEventsKind},
                           {rwd::kDataFile, rwd::kDataKind},
                           {rwd::kMetaFile, rwd::kMetaKind},
                           {rwd::kProcessesFile, rwd::kProcessesKind}};

/// Makes damaged copies of one trace.
class TraceMutator {
 public:
  TraceMutator(std::string good, std::string other)
      : good_(std::move(good)), other_(std::move(other)) {}

  /// The damage of copy number `i` of run `seed`: the same whichever copies ran before.
  void reseed(uint64_t seed, uint64_t i) { rng_.seed(seed * 0x9e3779b97f4a7c15ull + i); }

  /// Writes a damaged copy of the trace to `dir` (replaced); returns true when the damage
  /// is inside the streams (the copy may be a well-formed other trace).
  bool make(const std::string& dir, std::string* what) {
    fs::remove_all(dir);
    fs::create_directory(dir);
    for (const char* f : {rwd::kVersionFile, rwd::kMetaFile, rwd::kEventsFile, rwd::kDataFile,
                          rwd::kProcessesFile, "files.sums"})
      fs::copy_file(good_ + "/" + f, dir + "/" + f);
    // files/: hard links to the saved files (nothing copied; a damaged one is replaced).
    fs::create_directory(dir + "/files");
    for (const auto& e : fs::directory_iterator(good_ + "/files"))
      fs::create_hard_link(e.path(), dir + "/files/" + e.path().filename().string());
    switch (pick(12)) {
      case 0:
      case 1:
      case 2:
        return inside(dir, what);
      case 3:
      case 4: {  // flipped bytes in a stored file
        std::string f = some_file();
        auto b = read_bytes(dir + "/" + f);
        if (b.empty()) return false;
        size_t n = 1 + pick(4);
        for (size_t i = 0; i < n; ++i) b[pick(b.size())] ^= uint8_t(1 + pick(255));
        write_bytes(dir + "/" + f, b);
        *what = "flipped bytes in " + f;
        return false;
      }
      case 5:
      case 6: {  // truncated
        std::string f = some_file();
        auto b = read_bytes(dir + "/" + f);
        b.resize(pick(b.size() + 1));
        write_bytes(dir + "/" + f, b);
        *what = f + " truncated to " + std::to_string(b.size());
        return false;
      }
      case 7: {  // deleted
        std::string f = some_file();
        fs::remove(dir + "/" + f);
        *what = f + " deleted";
        return false;
      }
      case 8: {  // from the other recording
        std::string f = some_file();
        fs::remove(dir + "/" + f);
        fs::copy_file(other_ + "/" + f, dir + "/" + f);
        *what = f + " of another trace";
        return false;
      }
      case 9: {  // a saved file cut short or removed
        std::vector<fs::path> saved;
        for (const auto& e : fs::directory_iterator(dir + "/files")) saved.push_back(e.path());
        fs::path victim = saved[pick(saved.size())];
        auto b = read_bytes(victim.string());
        if (pick(3) == 0) {
          fs::remove(victim);
          *what = "saved " + victim.filename().string() + " deleted";
        } else {
          b.resize(pick(b.size()));
          write_bytes(victim.string(), b);
          *what = "saved " + victim.filename().string() + " cut to " + std::to_string(b.size());
        }
        return false;
      }
      case 10: {  // garbage of a plausible size
        std::string f = some_file();
        std::vector<uint8_t> b(pick(4096));
        for (auto& c : b) c = uint8_t(rng_());
        write_bytes(dir + "/" + f, b);
        *what = f + " replaced by garbage";
        return false;
      }
      default: {  // the header's fields: kind, version, trace id
        std::string f = kStreams[pick(4)].name;
        auto b = read_bytes(dir + "/" + f);
        if (b.size() >= 24) b[8 + pick(16)] ^= uint8_t(1 + pick(255));
        write_bytes(dir + "/" + f, b);
        *what = "header of " + f;
        return false;
      }
    }
  }

 private:
  size_t pick(size_t n) { return n == 0 ? 0 : size_t(rng_() % n); }

  std::string some_file() {
    static const char* files[] = {rwd::kVersionFile, rwd::kMetaFile,      rwd::kEventsFile,
                                  rwd::kDataFile,    rwd::kProcessesFile, "files.sums"};
    return files[pick(std::size(files))];
  }

  /// Damage inside one stream, written back with valid chunks, and `processes` updated to
  /// the new stream sizes so that the decoders, not the size checks, meet the damage.
  bool inside(const std::string& dir, std::string* what) {
    const Stream& s = kStreams[pick(4)];
    std::string path = dir + "/" + s.name;
    std::vector<std::vector<uint8_t>> chunks;
    uint64_t id;
    {
      rwd::ChunkReader r(path, s.kind, false);
      id = r.trace_id();
      while (auto c = r.next()) chunks.push_back(std::move(*c));
    }
    if (chunks.empty()) return false;
    auto& c = chunks[pick(chunks.size())];
    switch (pick(4)) {
      case 0:  // flipped bytes
        for (size_t n = 1 + pick(4); n > 0 && !c.empty(); --n)
          c[pick(c.size())] ^= uint8_t(1 + pick(255));
        *what = std::string("bytes flipped inside ") + s.name;
        break;
      case 1: {  // a forged 32- or 64-bit field
        static const uint64_t values[] = {
            0,     1,          0xffffffffull,        0x7fffffffull, 0x80000000ull,
            ~0ull, 1ull << 40, 0x7fffffffffffffffull};
        size_t width = pick(2) ? 8 : 4;
        if (c.size() >= width) {
          uint64_t v = values[pick(std::size(values))];
          std::memcpy(c.data() + pick(c.size() - width + 1), &v, width);
        }
        *what = std::string("a forged length or field inside ") + s.name;
        break;
      }
      case 2:  // cut short
        c.resize(pick(c.size()));
        *what = std::string("a chunk cut short inside ") + s.name;
        break;
      default: {  // a range repeated
        size_t from = pick(c.size()), len = pick(std::min<size_t>(c.size() - from, 256) + 1);
        c.insert(c.begin() + long(from), c.begin() + long(from), c.begin() + long(from + len));
        *what = std::string("a range repeated inside ") + s.name;
      }
    }
    fs::remove(path);
    {
      rwd::ChunkWriter w(path, s.kind, nullptr, id);
      for (const auto& chunk : chunks) {
        w.append_bytes(chunk.data(), chunk.size());
        w.flush();
      }
    }
    if (std::string(s.name) != rwd::kProcessesFile) {
      try {
        rwd::TraceSummary sum = *rwd::read_trace_summary(dir);
        sum.events_bytes = fs::file_size(dir + "/" + rwd::kEventsFile);
        sum.data_bytes = fs::file_size(dir + "/" + rwd::kDataFile);
        std::string p = dir + "/" + rwd::kProcessesFile;
        fs::remove(p);
        rwd::ChunkWriter w(p, rwd::kProcessesKind, nullptr, id);
        w.append(rwd::encode_summary(sum));
      } catch (const rwd::Error&) {
      }
    }
    return true;
  }

  std::string good_, other_;
  std::mt19937_64 rng_;
};

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

/// A clean failure: non-zero exit (not a signal, not the time limit) and exactly one line
/// "rewind: ..." on stderr.
bool clean_failure(const Answer& a) {
  if (!WIFEXITED(a.status)) return false;
  int code = WEXITSTATUS(a.status);
  if (code == 0 || code == 137 || code > 128) return false;
  return a.err.rfind("rewind: ", 0) == 0 && a.err.find('\n') == a.err.size() - 1;
}

}  // namespace

TEST_CASE("damaged traces: the right answer or one clear line, never a crash or hang",
          "[trace][fuzz]") {
  char tmpl[] = "/tmp/rewind-trace-fuzz.XXXXXX";
  std::string work = mkdtemp(tmpl);
  std::string good = work + "/good", other = work + "/other";
  REQUIRE(std::system(
              (std::string(REWIND_BIN) + " record -o " + good + " /bin/echo fuzzed >/dev/null 2>&1")
                  .c_str()) == 0);
  REQUIRE(std::system((std::string(REWIND_BIN) + " record -o " + other +
                       " /bin/echo another >/dev/null 2>&1")
                          .c_str()) == 0);
  const char* commands[] = {"replay -a", "dump", "ps"};
  std::vector<Answer> right;
  for (const char* c : commands) {
    right.push_back(run(work, c, good));
    REQUIRE(WIFEXITED(right.back().status));
    REQUIRE(WEXITSTATUS(right.back().status) == 0);
  }
  REQUIRE(right[0].out == "fuzzed\n");

  uint64_t seed = env_number("REWIND_FUZZ_SEED", 26);
  int count = int(env_number("REWIND_FUZZ_COUNT", 2000));
  int part = 1, parts = 1;
  if (const char* p = std::getenv("REWIND_FUZZ_PART"); p && *p)
    REQUIRE(
        (std::sscanf(p, "%d/%d", &part, &parts) == 2 && parts >= 1 && part >= 1 && part <= parts));
  TraceMutator mutate(good, other);
  int refused = 0, answered = 0, tried = 0;
  for (int i = part - 1; i < count; i += parts) {
    ++tried;
    mutate.reseed(seed, uint64_t(i));
    std::string what;
    std::string dir = work + "/t";
    bool inside = mutate.make(dir, &what);
    for (size_t k = 0; k < std::size(commands); ++k) {
      Answer a = run(work, commands[k], dir);
      INFO("in " << work << ", seed " << seed << ", trace " << i << " (" << what << "), rewind "
                 << commands[k] << ": status " << a.status
                 << ", stderr: " << a.err.substr(0, 2000));
      bool ok_answer = WIFEXITED(a.status) && WEXITSTATUS(a.status) == 0 &&
                       (inside || (a.out == right[k].out && a.err == right[k].err));
      bool clean =
          clean_failure(a) && (inside || right[k].out.compare(0, a.out.size(), a.out) == 0);
      CHECK((ok_answer || clean));
      if (!ok_answer && !clean && std::getenv("REWIND_FUZZ_KEEP"))  // for a closer look
        fs::copy(dir, work + "/failed-" + std::to_string(i), fs::copy_options::recursive);
      if (ok_answer) ++answered;
      if (clean) ++refused;
    }
  }
  // Most damage is seen and refused, and some leaves an answer (fields no reader needs).
  CHECK(refused > tried);
  CHECK(answered > 0);
  if (!std::getenv("REWIND_FUZZ_KEEP")) fs::remove_all(work);
}
