// Names of the files in a trace directory and the encoding of the small ones (meta, processes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/trace/chunk_stream.h"
#include "engine/trace/trace_meta.h"

namespace rwd {

inline constexpr const char* kVersionFile = "version";
inline constexpr const char* kVersionLine = "rewind trace format ";
inline constexpr const char* kMetaFile = "meta";
inline constexpr const char* kEventsFile = "events";
inline constexpr const char* kDataFile = "data";
inline constexpr const char* kProcessesFile = "processes";
inline constexpr const char* kFilesDir = "files";

inline constexpr uint32_t kMetaKind = fourcc("META");
inline constexpr uint32_t kEventsKind = fourcc("EVNT");
inline constexpr uint32_t kDataKind = fourcc("DATA");
inline constexpr uint32_t kProcessesKind = fourcc("PROC");

/// Encodes TraceMeta as one record of the `meta` stream.
std::vector<uint8_t> encode_meta(const TraceMeta& m);
/// Decodes a `meta` record; `file` names the source in errors. Throws TraceError.
TraceMeta decode_meta(const std::vector<uint8_t>& rec, const std::string& file);
/// Encodes TraceSummary as one record of the `processes` stream.
std::vector<uint8_t> encode_summary(const TraceSummary& s);
/// Decodes a `processes` record. Throws TraceError.
TraceSummary decode_summary(const std::vector<uint8_t>& rec, const std::string& file);

}  // namespace rwd
