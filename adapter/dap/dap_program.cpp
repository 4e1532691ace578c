// The program as loaded: modules, source files, raw memory and disassembly.
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_session.h"
#include "adapter/dap/dap_wire.h"
#include "engine/symbols/call_stack.h"
#include "engine/symbols/disassembler.h"

namespace rwd {

using nlohmann::json;

namespace {

constexpr size_t kMaxRead = 1 << 20;              // readMemory: bytes per request
constexpr size_t kMaxInstructions = 10000;        // disassemble: instructions per request
constexpr int64_t kMaxInstructionOffset = 65536;  // disassemble: |instructionOffset| at most
constexpr size_t kMaxSourceBytes = 16u << 20;     // source: the largest file served

std::string base64(const std::vector<uint8_t>& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                          int(bytes.size()));
  out.resize(size_t(n));
  return out;
}

std::string hex_bytes(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    if (!s.empty()) s += ' ';
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

}  // namespace

json DapSession::module_json(const Module& m) {
  json j = {{"id", hex(m.lo())},
            {"name", m.path().substr(m.path().find_last_of('/') + 1)},
            {"path", m.path()},
            {"addressRange", hex(m.lo()) + "-" + hex(m.hi())},
            {"isOptimized", false}};
  if (m.has_debug_info()) {
    j["symbolStatus"] = "Symbols loaded.";
    j["symbolFilePath"] = m.debug_file();
  } else {
    j["symbolStatus"] =
        m.has_symbols() ? "Symbol table only (no debug information)." : "No symbols.";
  }
  return j;
}

void DapSession::modules(const json& req) {
  Debugger& d = debugger();
  const json& args = arguments(req);
  size_t start = optional_arg<size_t>(args, "startModule", 0);
  size_t count = optional_arg<size_t>(args, "moduleCount", 0);
  const auto& mods = d.modules().modules();
  json out = json::array();
  for (size_t i = start; i < mods.size() && (!count || i < start + count); ++i)
    out.push_back(module_json(*mods[i]));
  respond(req, {{"modules", out}, {"totalModules", mods.size()}});
}

void DapSession::loaded_sources(const json& req) {
  Debugger& d = debugger();
  // The primary source file of every compile unit with debug information, where the file
  // exists on this machine (sources of system libraries usually do not).
  json out = json::array();
  for (const std::string& p : unit_sources(d)) {
    std::ifstream probe(p);
    if (probe) out.push_back(source_json(p));
  }
  respond(req, {{"sources", out}});
}

std::set<std::string> DapSession::unit_sources(Debugger& d) {
  std::set<std::string> paths;
  for (const auto& m : d.modules().modules()) {
    if (!m->has_debug_info()) continue;
    DwarfIndex* dw = m->dwarf();
    if (!dw) continue;
    for (const CompileUnit& u : dw->units()) {
      std::string p = u.name;
      if (!p.empty() && p[0] != '/' && !u.comp_dir.empty()) p = u.comp_dir + "/" + p;
      if (!p.empty()) paths.insert(p);
    }
  }
  return paths;
}

namespace {

/// The content of source file `path`: a regular file of at most kMaxSourceBytes, opened
/// without waiting (a FIFO is refused before anything blocks; /dev/zero is not a regular
/// file). Throws RequestError.
std::string read_source_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw RequestError("the source file " + path + " is not on the machine running rewind");
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw RequestError(path + " is not a regular file");
  }
  if (uint64_t(st.st_size) > kMaxSourceBytes) {
    ::close(fd);
    throw RequestError(path + " is too large to show");
  }
  std::string content(kMaxSourceBytes + 1, '\0');
  size_t got = 0;
  while (got < content.size()) {
    ssize_t n = ::read(fd, content.data() + got, content.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  ::close(fd);
  if (got > kMaxSourceBytes) throw RequestError(path + " is too large to show");
  content.resize(got);
  return content;
}

}  // namespace

void DapSession::source(const json& req) {
  const json& args = arguments(req);
  std::string path;
  int ref = optional_arg<int>(args, "sourceReference", 0);
  if (args.contains("source")) {
    path = optional_arg<std::string>(args["source"], "path", "");
    ref = optional_arg<int>(args["source"], "sourceReference", ref);
  }
  if (ref > 0) {
    if (size_t(ref) > source_paths_.size())
      throw RequestError("unknown sourceReference " + std::to_string(ref));
    path = source_paths_[size_t(ref) - 1];
  }
  if (path.empty()) throw RequestError("source needs a sourceReference or source.path");
  // Only the program's own sources: files the adapter named to the client (stack frames,
  // breakpoints, loaded sources) or that its debug information names. Never any file of
  // the server's machine a client asks for.
  if (!ref && !handed_out_.count(path)) {
    if (!debugger_ || !unit_sources(*debugger_).count(path))
      throw RequestError("rewind serves only the debugged program's source files, not " + path);
  }
  respond(req, {{"content", valid_utf8(read_source_file(path))}, {"mimeType", "text/x-c"}});
}

void DapSession::read_memory(const json& req) {
  debugger();
  const json& args = arguments(req);
  uint64_t addr = parse_address(required<std::string>(args, "memoryReference")) +
                  uint64_t(optional_arg<int64_t>(args, "offset", 0));
  size_t count = required<size_t>(args, "count");
  if (count > kMaxRead) count = kMaxRead;
  pid_t tid = timeline_->current().tid;
  std::vector<uint8_t> bytes = timeline_->read_memory(tid, addr, count);
  json body = {{"address", hex(addr)}};
  if (!bytes.empty()) body["data"] = base64(bytes);
  if (bytes.size() < count) body["unreadableBytes"] = count - bytes.size();
  respond(req, body);
}

void DapSession::disassemble(const json& req) {
  Debugger& d = debugger();
  const json& args = arguments(req);
  uint64_t addr = parse_address(required<std::string>(args, "memoryReference")) +
                  uint64_t(optional_arg<int64_t>(args, "offset", 0));
  int64_t skip = optional_arg<int64_t>(args, "instructionOffset", 0);
  if (skip < -kMaxInstructionOffset || skip > kMaxInstructionOffset)
    throw RequestError("instructionOffset must be within " + std::to_string(kMaxInstructionOffset) +
                       " instructions of the address");
  size_t count = std::min<size_t>(required<size_t>(args, "instructionCount"), kMaxInstructions);
  bool symbols = optional_arg<bool>(args, "resolveSymbols", true);
  pid_t tid = timeline_->current().tid;
  ModuleList& mods = d.modules();

  // Instructions before `addr` (a negative instructionOffset) need a start that decodes in
  // step with it: the containing function's start when it is close, else the first byte of
  // a window that lands exactly on `addr`.
  size_t before = skip < 0 ? size_t(-skip) : 0;
  uint64_t back = before * 15 + 16;
  uint64_t base = addr > back ? addr - back : 0;
  size_t after = count + size_t(skip > 0 ? skip : 0);
  std::vector<uint8_t> bytes = timeline_->read_memory(tid, base, size_t(addr - base) + after * 15);
  std::vector<Instruction> decoded;
  if (bytes.size() > addr - base) {
    std::vector<uint64_t> starts;
    if (Module* m = mods.module_at(addr))
      if (const Symbol* s = m->symbols().function_at(m->to_link(addr)))
        if (m->to_runtime(s->addr) >= base) starts.push_back(m->to_runtime(s->addr));
    for (uint64_t s = base; s < base + 16 && s < addr; ++s) starts.push_back(s);
    uint64_t start = before ? sync_start(base, bytes, addr, starts) : addr;
    std::vector<uint8_t> from(bytes.begin() + long(start - base), bytes.end());
    decoded = decode_instructions(start, from, SIZE_MAX);
  }
  // The window: `before` instructions ending at addr, then the rest.
  size_t at = 0;
  while (at < decoded.size() && decoded[at].addr < addr) ++at;
  std::vector<Instruction> window;
  size_t have_before = std::min(at, before);
  for (size_t i = before; i > have_before; --i) {  // nothing readable there: invalid slots
    Instruction bad;
    bad.addr = addr - i;
    bad.text = "??";
    bad.valid = false;
    window.push_back(bad);
  }
  for (size_t i = at - have_before; i < decoded.size(); ++i) window.push_back(decoded[i]);
  size_t first = skip > 0 ? size_t(skip) : 0;
  json out = json::array();
  std::string last_file;
  for (size_t i = first; out.size() < count; ++i) {
    json j;
    if (i < window.size()) {
      const Instruction& in = window[i];
      j = {{"address", hex(in.addr)},
           {"instructionBytes", hex_bytes(in.bytes)},
           {"instruction", in.text}};
      if (!in.valid) j["presentationHint"] = "invalid";
      if (symbols)
        if (Module* m = mods.module_at(in.addr))
          if (const Symbol* s = m->symbols().function_at(m->to_link(in.addr)))
            j["symbol"] = without_parameters(s->demangled);
      if (auto line = source_line_at(mods, in.addr)) {
        j["location"] = source_json(line->file);
        j["line"] = line_out(line->line);
        if (line->column) j["column"] = line->column;
      }
    } else {  // past the readable memory
      uint64_t end = window.empty()
                         ? addr
                         : window.back().addr + std::max<uint64_t>(window.back().bytes.size(), 1);
      uint64_t a = end + (i - window.size());
      j = {{"address", hex(a)}, {"instruction", "??"}, {"presentationHint", "invalid"}};
    }
    out.push_back(j);
  }
  respond(req, {{"instructions", out}});
}

}  // namespace rwd
