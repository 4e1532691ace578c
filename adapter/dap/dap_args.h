// Reading a DAP request's arguments, with errors a client can show.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/errors.h"

namespace rwd {

/// A request that cannot be served; the message goes into the error response.
struct RequestError : Error {
  using Error::Error;
};

/// A frameId or variablesReference from before the program last moved. Clients race with
/// stops (VS Code asks for the old frame's scopes after a seek), so the error response does
/// not ask the client to show it to the user (DAP ErrorResponse `showUser`).
struct StaleReferenceError : RequestError {
  using RequestError::RequestError;
};

/// The request's "arguments" object (an empty object when absent or not an object).
inline const nlohmann::json& arguments(const nlohmann::json& req) {
  static const nlohmann::json empty = nlohmann::json::object();
  auto it = req.find("arguments");
  return it != req.end() && it->is_object() ? *it : empty;
}

/// An address a client sends (memoryReference, instructionReference, or a data breakpoint's
/// `asAddress` name): "0x401136" or "4198710". Throws RequestError.
inline uint64_t parse_address(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  uint64_t v = std::strtoull(text.c_str(), &end, 0);
  if (text.empty() || *end || errno) throw RequestError("\"" + text + "\" is not an address");
  return v;
}

/// Argument `name` of `args` as a T. Throws RequestError when it is missing or of another
/// type.
template <class T>
T required(const nlohmann::json& args, const char* name) {
  auto it = args.find(name);
  if (it == args.end()) throw RequestError(std::string("missing argument \"") + name + "\"");
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw RequestError(std::string("argument \"") + name + "\" has the wrong type");
  }
}

/// Optional argument `name` of `args` as a T, `fallback` when absent or null. Throws
/// RequestError when it has another type.
template <class T>
T optional_arg(const nlohmann::json& args, const char* name, T fallback) {
  auto it = args.find(name);
  if (it == args.end() || it->is_null()) return fallback;
  return required<T>(args, name);
}

}  // namespace rwd
