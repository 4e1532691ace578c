#include "event_codec.h"

#include <iterator>

namespace rwd {

const char* event_kind_name(EventKind k) {
  static constexpr const char* kNames[] = {"?",     "syscall", "exec",  "signal", "exit",
                                           "rdtsc", "end",     "entry", "sched",  "cpuid"};
  size_t i = size_t(k);
  return i < std::size(kNames) ? kNames[i] : "?";
}

namespace {
// Upper bounds on counts read from a trace, so a corrupted count cannot exhaust memory.
constexpr uint32_t kMaxRegions = 1u << 16;
constexpr uint64_t kMaxRegionBytes = 1ull << 32;
constexpr uint32_t kMaxMappings = 1u << 20;
constexpr uint32_t kMaxArgs = 1u << 20;

bool has_regs(EventKind k) {
  return k != EventKind::Exit && k != EventKind::End;
}

void put_point(ByteWriter& w, const Event& e) {
  w.u64(e.digest[0]);
  w.u64(e.digest[1]);
  w.u64(e.stack_digest[0]);
  w.u64(e.stack_digest[1]);
  w.u64(e.register_digest[0]);
  w.u64(e.register_digest[1]);
  w.u32(uint32_t(e.exclusions.size()));
  for (const auto& [a, n] : e.exclusions) {
    w.u64(a);
    w.u64(n);
  }
  w.u32(uint32_t(e.stack_words.size()));
  for (uint64_t v : e.stack_words) w.u64(v);
}

void get_point(ByteReader& r, Event& e) {
  e.digest[0] = r.u64();
  e.digest[1] = r.u64();
  e.stack_digest[0] = r.u64();
  e.stack_digest[1] = r.u64();
  e.register_digest[0] = r.u64();
  e.register_digest[1] = r.u64();
  uint32_t n = r.u32();
  if (n > kMaxRegions) throw TraceError("events", r.pos(), "too many digest exclusions");
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t a = r.u64();
    e.exclusions.emplace_back(a, r.u64());
  }
  uint32_t words = r.u32();
  if (words > kPointStackWords) throw TraceError("events", r.pos(), "too many point stack words");
  e.stack_words.resize(words);
  for (uint64_t& v : e.stack_words) v = r.u64();
}
}  // namespace

void encode_event(const Event& e, ByteWriter& w, std::vector<uint8_t>& data) {
  // Room for all of the event's data at once: an exec's memory (MiBs) appended region by
  // region would regrow the chunk several times, each time into freshly faulted pages.
  size_t more = e.buffered.size() + e.written_memory.bytes.size();
  for (const auto& m : e.memory) more += m.bytes.size();  // in_data: appended already
  make_room(data, more);
  w.u8(uint8_t(e.kind));
  w.u64(e.number);
  w.i32(e.tid);
  if (has_regs(e.kind)) w.raw(&e.regs, sizeof e.regs);
  w.u32(uint32_t(e.memory.size()));
  bool copied = false;
  for (const auto& m : e.memory) {
    if (m.bytes.empty() && m.in_data && copied)  // its bytes lie before the copied ones
      throw Error("a memory region put into the data stream follows one copied there");
    copied = copied || !m.bytes.empty();
    w.u64(m.addr);
    w.u64(m.size());
    data.insert(data.end(), m.bytes.begin(), m.bytes.end());
  }
  w.u64(e.buffered.size());
  data.insert(data.end(), e.buffered.begin(), e.buffered.end());
  switch (e.kind) {
    case EventKind::Syscall:
      w.i64(e.result);
      w.i32(e.child_tid);
      w.u8(uint8_t(e.output));
      w.str(e.file);
      w.u32(e.shared_file);
      w.i32(e.child_own_tid);
      w.i32(e.written_tid);
      if (e.written_tid || e.writes_shared_file()) {
        w.u64(e.written_memory.addr);
        w.u64(e.written_memory.bytes.size());
        data.insert(data.end(), e.written_memory.bytes.begin(), e.written_memory.bytes.end());
      }
      break;
    case EventKind::Exec:
      w.str(e.file);
      w.u32(uint32_t(e.mappings.size()));
      for (const auto& m : e.mappings) {
        w.u64(m.start);
        w.u64(m.end);
        w.u64(m.offset);
        w.u32(m.prot);
        w.u32(m.flags);
        w.str(m.file);
        w.str(m.name);
      }
      w.u32(uint32_t(e.argv.size()));
      for (const auto& a : e.argv) w.str(a);
      break;
    case EventKind::Signal:
      w.i32(e.signo);
      w.u8(e.synchronous);
      w.raw(e.siginfo.data(), e.siginfo.size());
      put_point(w, e);
      break;
    case EventKind::Sched:
      put_point(w, e);
      break;
    case EventKind::Exit:
      w.i32(e.status);
      break;
    case EventKind::Rdtsc:
    case EventKind::Cpuid:
    case EventKind::End:
    case EventKind::SyscallEntry:
      break;
  }
}

Event decode_event(ByteReader& r, const std::function<std::vector<uint8_t>(size_t)>& read_data) {
  Event e;
  uint8_t k = r.u8();
  if (k < uint8_t(EventKind::Syscall) || k > uint8_t(EventKind::Cpuid))
    throw TraceError("events", r.pos(), "unknown event kind " + std::to_string(k));
  e.kind = EventKind(k);
  e.number = r.u64();
  e.tid = r.i32();
  if (has_regs(e.kind)) r.raw(&e.regs, sizeof e.regs);
  uint32_t nregions = r.u32();
  if (nregions > kMaxRegions)
    throw TraceError("events", r.pos(), "too many memory regions in event");
  std::vector<uint64_t> sizes;
  for (uint32_t i = 0; i < nregions; ++i) {
    MemoryRegion m;
    m.addr = r.u64();
    uint64_t n = r.u64();
    if (n > kMaxRegionBytes) throw TraceError("events", r.pos(), "memory region too large");
    sizes.push_back(n);
    e.memory.push_back(std::move(m));
  }
  uint64_t nbuffered = r.u64();
  if (nbuffered > kMaxRegionBytes)
    throw TraceError("events", r.pos(), "buffered records too large");
  uint64_t written = 0;  // Syscall: bytes written into another task's memory
  switch (e.kind) {
    case EventKind::Syscall:
      e.result = r.i64();
      e.child_tid = r.i32();
      e.output = OutputStream(r.u8() % 3);
      e.file = r.str();
      e.shared_file = r.u32();
      e.child_own_tid = r.i32();
      e.written_tid = r.i32();
      if (e.written_tid || e.writes_shared_file()) {
        e.written_memory.addr = r.u64();
        written = r.u64();
        if (written > kMaxRegionBytes)
          throw TraceError("events", r.pos(), "memory region too large");
      }
      break;
    case EventKind::Exec: {
      e.file = r.str();
      uint32_t n = r.u32();
      if (n > kMaxMappings) throw TraceError("events", r.pos(), "too many mappings");
      for (uint32_t i = 0; i < n; ++i) {
        Mapping m;
        m.start = r.u64();
        m.end = r.u64();
        m.offset = r.u64();
        m.prot = r.u32();
        m.flags = r.u32();
        m.file = r.str();
        m.name = r.str();
        e.mappings.push_back(std::move(m));
      }
      uint32_t na = r.u32();
      if (na > kMaxArgs) throw TraceError("events", r.pos(), "too many arguments");
      for (uint32_t i = 0; i < na; ++i) e.argv.push_back(r.str());
      break;
    }
    case EventKind::Signal:
      e.signo = r.i32();
      e.synchronous = r.u8() != 0;
      r.raw(e.siginfo.data(), e.siginfo.size());
      get_point(r, e);
      break;
    case EventKind::Sched:
      get_point(r, e);
      break;
    case EventKind::Exit:
      e.status = r.i32();
      break;
    case EventKind::Rdtsc:
    case EventKind::Cpuid:
    case EventKind::End:
    case EventKind::SyscallEntry:
      break;
  }
  for (size_t i = 0; i < sizes.size(); ++i) e.memory[i].bytes = read_data(sizes[i]);
  if (nbuffered) e.buffered = read_data(nbuffered);
  if (written) e.written_memory.bytes = read_data(written);  // in the order encode_event put them
  return e;
}

}  // namespace rwd
