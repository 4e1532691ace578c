// Reading a DAP request's arguments, with errors a client can show.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

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

/// A failure while a request ran after its response was sent (continue, steps): the error
/// was told in events (output, terminated), so dispatch sends no second response.
struct AnsweredError : Error {
  using Error::Error;
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

/// The string member `key` of a message, or "" when it is absent or not a string (the base
/// protocol's fields are read with this before the message is known to be well formed).
inline std::string string_member(const nlohmann::json& msg, const char* key) {
  if (!msg.is_object()) return "";
  auto it = msg.find(key);
  return it != msg.end() && it->is_string() ? it->get<std::string>() : "";
}

/// A message's "seq" when it is an integer that fits in int64_t, else nullopt (never
/// truncated: DAP's ProtocolMessage.seq is an integer).
inline std::optional<int64_t> message_seq(const nlohmann::json& msg) {
  if (!msg.is_object()) return std::nullopt;
  auto it = msg.find("seq");
  if (it == msg.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned() && !std::in_range<int64_t>(it->get<uint64_t>())) return std::nullopt;
  return it->get<int64_t>();
}

/// Argument `name` of `args` as a T. Throws RequestError when it is missing or of another
/// type; an integer T takes only an integer in its range (never a truncated or rounded one).
template <class T>
T required(const nlohmann::json& args, const char* name) {
  auto it = args.find(name);
  if (it == args.end()) throw RequestError(std::string("missing argument \"") + name + "\"");
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    bool fits = it->is_number_integer() &&
                (it->is_number_unsigned() ? std::in_range<T>(it->get<uint64_t>())
                                          : std::in_range<T>(it->get<int64_t>()));
    if (!fits)
      throw RequestError(std::string("argument \"") + name +
                         "\" must be an integer in the range this request takes");
    return it->is_number_unsigned() ? T(it->get<uint64_t>()) : T(it->get<int64_t>());
  } else {
    try {
      return it->get<T>();
    } catch (const nlohmann::json::exception&) {
      throw RequestError(std::string("argument \"") + name + "\" has the wrong type");
    }
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
