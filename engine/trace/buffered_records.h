// The records of syscalls a task made through librewind_preload.so's buffer, as an event
// carries them (Event::buffered; layout in preload/rewind_preload_abi.h).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace rwd {

/// One buffered syscall: its number, result and the out-data it kept.
struct BufferedRecord {
  uint32_t nr = 0;
  int64_t result = 0;
  uint32_t data_bytes = 0;  ///< bytes of out-data (rounded up to 8)
};

/// Splits an event's buffered bytes into records. Throws TraceError("events", ...) when the
/// bytes are not a whole number of well-formed records.
std::vector<BufferedRecord> parse_buffered_records(std::span<const uint8_t> bytes);

/// True for an abort mark: the record of a buffered call the recorder interrupted (it waited)
/// and the library made again as a traced syscall (rewind_preload_abi.h, RWD_ABORTED).
bool is_abort_mark(const BufferedRecord& r);

/// Bytes of `bytes` (an event's well-formed records) that its task uses up before the event:
/// all of them but a final abort mark, which the library reads but never marks used.
uint32_t buffered_bytes_used(const std::vector<uint8_t>& bytes);

/// The part of the syscall buffer at `buffer` that memory digests leave out, as (address,
/// bytes): its control words and records, which differ between record and replay and which
/// replay writes ahead of the task up to the pause its run plans; the header's count of
/// used bytes before them is hashed (rewind_preload_abi.h, RWD_CONTROL_OFFSET).
std::pair<uint64_t, uint64_t> buffer_digest_exclusion(uint64_t buffer);

}  // namespace rwd
