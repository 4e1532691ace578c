#include "buffered_records.h"

#include <cstring>

#include "engine/errors.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

std::vector<BufferedRecord> parse_buffered_records(std::span<const uint8_t> bytes) {
  std::vector<BufferedRecord> out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    rwd_record r;
    if (bytes.size() - pos < sizeof r)
      throw TraceError("events", pos, "truncated buffered syscall record");
    std::memcpy(&r, bytes.data() + pos, sizeof r);
    if (r.size < RWD_RECORD_HEADER || r.size % 8 != 0 || r.size > bytes.size() - pos)
      throw TraceError("events", pos, "malformed buffered syscall record");
    out.push_back({r.nr, r.result, r.size - RWD_RECORD_HEADER});
    pos += r.size;
  }
  return out;
}

bool is_abort_mark(const BufferedRecord& r) {
  return r.result == RWD_ABORTED && r.data_bytes == 0;
}

uint32_t buffered_bytes_used(const std::vector<uint8_t>& bytes) {
  std::vector<BufferedRecord> records = parse_buffered_records(bytes);
  if (!records.empty() && is_abort_mark(records.back()))
    return uint32_t(bytes.size()) - RWD_RECORD_HEADER;
  return uint32_t(bytes.size());
}

std::pair<uint64_t, uint64_t> buffer_digest_exclusion(uint64_t buffer) {
  return {buffer + RWD_CONTROL_OFFSET, RWD_BUFFER_SIZE - RWD_CONTROL_OFFSET};
}

}  // namespace rwd
