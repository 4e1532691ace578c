// Binary encoding of events: the fixed part goes to the events stream, memory bytes to the
// data stream (docs/trace-format.md describes the layout).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/trace/bytes.h"
#include "engine/trace/event.h"

namespace rwd {

/// Encodes `e` into `rec` (events stream) and appends memory bytes to `data` (data stream).
void encode_event(const Event& e, ByteWriter& rec, std::vector<uint8_t>& data);

/// Decodes one event from `in`. `read_data(n)` must return the next n bytes of the data
/// stream (throwing TraceError if the data stream is short). Throws TraceError on bad input.
Event decode_event(ByteReader& in, const std::function<std::vector<uint8_t>(size_t)>& read_data);

}  // namespace rwd
