// Reading a DAP request's arguments, with errors a client can show.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/errors.h"

namespace rwd {

/// A request that cannot be served; the message goes into the error response.
struct RequestError : Error {
  using Error::Error;
};

/// The request's "arguments" object (an empty object when absent or not an object).
inline const nlohmann::json& arguments(const nlohmann::json& req) {
  static const nlohmann::json empty = nlohmann::json::object();
  auto it = req.find("arguments");
  return it != req.end() && it->is_object() ? *it : empty;
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
