#include "trace_files.h"

#include "engine/trace/bytes.h"

namespace rwd {

namespace {
constexpr uint32_t kMaxStrings = 1u << 20;

void put_strings(ByteWriter& w, const std::vector<std::string>& v) {
  w.u32(uint32_t(v.size()));
  for (const auto& s : v) w.str(s);
}
std::vector<std::string> get_strings(ByteReader& r, const std::string& file) {
  uint32_t n = r.u32();
  if (n > kMaxStrings) throw TraceError(file, r.pos(), "string list too long");
  std::vector<std::string> v;
  for (uint32_t i = 0; i < n; ++i) v.push_back(r.str());
  return v;
}
}  // namespace

std::vector<uint8_t> encode_meta(const TraceMeta& m) {
  ByteWriter w;
  put_strings(w, m.argv);
  put_strings(w, m.env);
  w.str(m.cwd);
  w.str(m.exe_file);
  w.str(m.ticks);
  w.i64(m.start_time);
  w.u64(m.sig_ignored);
  w.u64(m.sig_blocked);
  return w.data();
}

TraceMeta decode_meta(const std::vector<uint8_t>& rec, const std::string& file) {
  ByteReader r(rec, file);
  TraceMeta m;
  m.argv = get_strings(r, file);
  m.env = get_strings(r, file);
  m.cwd = r.str();
  m.exe_file = r.str();
  m.ticks = r.str();
  m.start_time = r.i64();
  m.sig_ignored = r.u64();
  m.sig_blocked = r.u64();
  return m;
}

std::vector<uint8_t> encode_summary(const TraceSummary& s) {
  ByteWriter w;
  w.u64(s.events);
  w.u64(s.events_bytes);
  w.u64(s.data_bytes);
  w.i32(s.root_status);
  w.u32(uint32_t(s.processes.size()));
  for (const auto& p : s.processes) {
    w.i32(p.pid);
    w.i32(p.ppid);
    w.u8(p.ended);
    w.i32(p.status);
    put_strings(w, p.argv);
  }
  return w.data();
}

TraceSummary decode_summary(const std::vector<uint8_t>& rec, const std::string& file) {
  ByteReader r(rec, file);
  TraceSummary s;
  s.events = r.u64();
  s.events_bytes = r.u64();
  s.data_bytes = r.u64();
  s.root_status = r.i32();
  uint32_t n = r.u32();
  if (n > kMaxStrings) throw TraceError(file, r.pos(), "process list too long");
  for (uint32_t i = 0; i < n; ++i) {
    ProcessInfo p;
    p.pid = r.i32();
    p.ppid = r.i32();
    p.ended = r.u8() != 0;
    p.status = r.i32();
    p.argv = get_strings(r, file);
    s.processes.push_back(std::move(p));
  }
  return s;
}

}  // namespace rwd
