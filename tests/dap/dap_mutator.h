// Test helper for tests/dap/dap_fuzz_test.cpp: hostile variants of valid DAP requests, from a
// seeded generator (the same seed gives the same messages, so a failure can be replayed).
// Each variant is one of: a field of the arguments replaced by a value of another type or
// out of range, a field removed or added, the command changed, the body's bytes damaged, or
// a message that is not a request object at all.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace test {

/// Makes hostile DAP messages from a corpus of valid requests.
class DapMutator {
 public:
  /// `corpus`: valid requests ({"command", "arguments"}, no seq or type); `seed` fixes the
  /// sequence of messages.
  DapMutator(std::vector<nlohmann::json> corpus, uint64_t seed)
      : corpus_(std::move(corpus)), rng_(seed) {}

  /// One hostile message body. `seq` is the seq it carries when the mutation leaves the
  /// seq alone; `*answerable` is set to true when the body is still a request with that
  /// seq and a string command (so the adapter owes it a response).
  std::string next(int64_t seq, bool* answerable) {
    nlohmann::json msg = corpus_[pick(corpus_.size())];
    msg["seq"] = seq;
    msg["type"] = "request";
    *answerable = true;
    switch (pick(10)) {
      case 0:
      case 1:
      case 2: {  // a value somewhere in the arguments replaced
        nlohmann::json* at = random_place(msg["arguments"]);
        *at = random_value(0);
        break;
      }
      case 3: {  // a known argument name added with a hostile value
        if (!msg["arguments"].is_object()) msg["arguments"] = nlohmann::json::object();
        msg["arguments"][kArgNames[pick(std::size(kArgNames))]] = random_value(0);
        break;
      }
      case 4:  // an argument removed
        if (msg["arguments"].is_object() && !msg["arguments"].empty()) {
          auto it = msg["arguments"].begin();
          std::advance(it, long(pick(msg["arguments"].size())));
          msg["arguments"].erase(it);
        }
        break;
      case 5:  // another command with these arguments
        msg["command"] = corpus_[pick(corpus_.size())]["command"];
        if (pick(4) == 0) msg["command"] = random_text();
        break;
      case 6:  // the envelope: seq, type, command of another type, arguments not an object
      {
        const char* field = std::array{"seq", "type", "command", "arguments"}[pick(4)];
        msg[field] = random_value(1);
        *answerable = false;
        break;
      }
      case 7: {  // damaged bytes: the body is no longer JSON, or another JSON
        std::string body = msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        int n = 1 + int(pick(8));
        for (int i = 0; i < n && !body.empty(); ++i) {
          size_t at = pick(body.size());
          switch (pick(3)) {
            case 0:
              body[at] = char(pick(256));
              break;
            case 1:
              body.erase(at, 1 + pick(8));
              break;
            default:
              body.insert(at, 1, "{}[]\",:\\0\xff"[pick(11)]);
          }
        }
        *answerable = false;
        return body;
      }
      case 8:  // not a request object at all
        *answerable = false;
        return random_value(0).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      default:  // two mutations at once
      {
        *random_place(msg["arguments"]) = random_value(0);
        if (!msg["arguments"].is_object()) msg["arguments"] = nlohmann::json::object();
        msg["arguments"][kArgNames[pick(std::size(kArgNames))]] = random_value(0);
        break;
      }
    }
    return msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }

 private:
  static constexpr const char* kArgNames[] = {"threadId",
                                              "frameId",
                                              "variablesReference",
                                              "memoryReference",
                                              "count",
                                              "offset",
                                              "line",
                                              "column",
                                              "breakpoints",
                                              "source",
                                              "path",
                                              "sourceReference",
                                              "expression",
                                              "context",
                                              "granularity",
                                              "instructionCount",
                                              "instructionOffset",
                                              "resolveSymbols",
                                              "name",
                                              "value",
                                              "format",
                                              "start",
                                              "levels",
                                              "startFrame",
                                              "hitCondition",
                                              "condition",
                                              "logMessage",
                                              "accessType",
                                              "dataId",
                                              "event",
                                              "id",
                                              "action",
                                              "trace",
                                              "mode",
                                              "token",
                                              "filters",
                                              "filterOptions",
                                              "lines",
                                              "endLine",
                                              "instructionReference",
                                              "requestId",
                                              "progressId",
                                              "singleThread",
                                              "targetId",
                                              "text"};

  size_t pick(size_t n) { return n == 0 ? 0 : size_t(rng_() % n); }

  std::string random_text() {
    static const std::string samples[] = {"",
                                          "x",
                                          "../../../../etc/passwd",
                                          "/proc/self/environ",
                                          "%s%s%n%n",
                                          "0x0",
                                          "0xffffffffffffffff",
                                          "-1",
                                          "99999999999999999999999",
                                          "*(int*)0",
                                          "a[1000000000]",
                                          "\xc3\x28 not utf-8",
                                          std::string("a\0b", 3),
                                          ">= 18446744073709551616",
                                          "% 0",
                                          "{",
                                          "main",
                                          "loop_sum",
                                          "global_counter"};
    if (pick(20) == 0) return std::string(size_t(1) << (10 + pick(10)), 'A');  // 1 KiB..512 KiB
    return samples[pick(std::size(samples))];
  }

  nlohmann::json random_value(int depth) {
    switch (pick(depth > 2 ? 9 : 12)) {
      case 0:
        return nullptr;
      case 1:
        return pick(2) == 0;
      case 2:
        return std::numeric_limits<int64_t>::max() - int64_t(pick(2));
      case 3:
        return std::numeric_limits<int64_t>::min() + int64_t(pick(2));
      case 4:
        return std::array<int64_t, 6>{0, -1, 1, 2147483647, 2147483648ll, 4294967296ll}[pick(6)];
      case 5:
        return std::numeric_limits<uint64_t>::max();
      case 6:
        return std::array{1e300, -1e300, 0.5, -0.0, 1e-300}[pick(5)];
      case 7:
      case 8:
        return random_text();
      case 9: {
        nlohmann::json a = nlohmann::json::array();
        for (size_t n = pick(4); n > 0; --n) a.push_back(random_value(depth + 1));
        return a;
      }
      case 10: {
        nlohmann::json o = nlohmann::json::object();
        for (size_t n = pick(4); n > 0; --n)
          o[kArgNames[pick(std::size(kArgNames))]] = random_value(depth + 1);
        return o;
      }
      default: {  // deep nesting
        nlohmann::json v = 1;
        for (int i = 0; i < 500; ++i) v = nlohmann::json::array({v});
        return v;
      }
    }
  }

  /// A random value inside `v` (v itself, a member, an element, at any depth).
  nlohmann::json* random_place(nlohmann::json& v) {
    nlohmann::json* at = &v;
    while ((at->is_object() || at->is_array()) && !at->empty() && pick(3) != 0) {
      auto it = at->begin();
      std::advance(it, long(pick(at->size())));
      at = &*it;
    }
    return at;
  }

  std::vector<nlohmann::json> corpus_;
  std::mt19937_64 rng_;
};

}  // namespace test
