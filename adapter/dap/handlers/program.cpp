// The program as loaded: modules, source files and raw memory.
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "adapter/dap/dap_wire.h"
#include "adapter/dap/handlers/dap_handlers.h"
#include "engine/os/lazy_library.h"

namespace rwd::handlers {

using nlohmann::json;

namespace {

constexpr size_t kMaxRead = 1 << 20;           // readMemory: bytes per request
constexpr size_t kMaxSourceBytes = 16u << 20;  // source: the largest file served

/// `bytes` in base64 (RFC 4648, with padding: DAP's readMemory `data`), by OpenSSL's
/// EVP_EncodeBlock. libcrypto is opened on the first readMemory, not at rewind's start: its
/// 21,000 relocations cost every command a few milliseconds (engine/os/lazy_library.h).
std::string base64(const std::vector<uint8_t>& bytes) {
  static LazyLibrary crypto("libcrypto.so." + std::to_string(OPENSSL_VERSION_MAJOR),
                            "base64 for readMemory; package libssl3");
  static auto* const encode = crypto.function<decltype(EVP_EncodeBlock)>("EVP_EncodeBlock");
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = encode(reinterpret_cast<unsigned char*>(out.data()), bytes.data(), int(bytes.size()));
  out.resize(size_t(n));
  return out;
}

/// The primary source file of every compile unit with debug information in the program's
/// modules (absolute paths, whether or not they exist here).
std::set<std::string> unit_sources(Debugger& d) {
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

void modules(DapContext& c, const dap::ModulesArguments& a, DapRequest& r) {
  const auto& mods = c.debugger().modules().modules();
  json out = json::array();
  for (size_t i = a.start_module;
       i < mods.size() && (!a.module_count || i < a.start_module + a.module_count); ++i)
    out.push_back(DapContext::module(*mods[i]));
  r.respond({{"modules", out}, {"totalModules", mods.size()}});
}

void loaded_sources(DapContext& c, const dap::NoArguments&, DapRequest& r) {
  // The primary source file of every compile unit with debug information, where the file
  // exists on this machine (sources of system libraries usually do not).
  json out = json::array();
  for (const std::string& p : unit_sources(c.debugger())) {
    std::ifstream probe(c.source_map.to_local(p));
    if (probe) out.push_back(c.source(p));
  }
  r.respond({{"sources", out}});
}

void source(DapContext& c, const dap::SourceArguments& a, DapRequest& r) {
  int ref = a.source.source_reference;
  std::string path = ref > 0 ? c.sources.path(ref) : a.source.path;
  if (path.empty()) throw RequestError("source needs a sourceReference or source.path");
  // Only the program's own sources: files the adapter named to the client (stack frames,
  // breakpoints, loaded sources) or that its debug information names. Never any file of
  // the server's machine a client asks for.
  if (ref <= 0 && !c.sources.named(path) &&
      (!c.dbg || !unit_sources(*c.dbg).count(c.source_map.to_built(path))))
    throw RequestError("rewind serves only the debugged program's source files, not " + path);
  r.respond({{"content", valid_utf8(read_source_file(path))}, {"mimeType", "text/x-c"}});
}

void read_memory(DapContext& c, const dap::ReadMemoryArguments& a, DapRequest& r) {
  c.debugger();
  uint64_t addr = parse_address(a.memory_reference) + uint64_t(a.offset);
  size_t count = std::min(a.count, kMaxRead);
  pid_t tid = c.timeline->current().tid;
  std::vector<uint8_t> bytes = c.timeline->read_memory(tid, addr, count);
  json body = {{"address", hex(addr)}};
  if (!bytes.empty()) body["data"] = base64(bytes);
  if (bytes.size() < count) body["unreadableBytes"] = count - bytes.size();
  r.respond(body);
}

}  // namespace rwd::handlers
