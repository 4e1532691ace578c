// The timeline's checkpoint policy (engine/timeline/checkpoint_store.h): which checkpoints stay
// when there are more than kMax. Checkpoints here hold no process (the policy only reads
// their events, replay-time estimates and flags).
#include "engine/timeline/checkpoint_store.h"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace rwd;

namespace {

CheckpointStore::Saved at_event(uint64_t event, double cost_ms, bool pinned = false) {
  CheckpointStore::Saved s;
  s.event = event;
  s.cost_ms = cost_ms;
  s.pinned = pinned;
  return s;
}

/// The largest replay time (ms) between two neighbouring checkpoints kept, or between the
/// trace's start and the first, up to the checkpoint at `last_event`.
double widest_gap(const CheckpointStore& store, uint64_t last_event) {
  double widest = 0, prev = 0;
  for (uint64_t e = 0; e <= last_event; ++e)
    if (const CheckpointStore::Saved* s = store.latest_at_most(e); s && s->event == e) {
      widest = std::max(widest, s->cost_ms - prev);
      prev = s->cost_ms;
    }
  return widest;
}

}  // namespace

TEST_CASE("checkpoints of one long replay stay spread evenly over it", "[unit]") {
  // A replay of 5 s from the trace's start, one checkpoint every 25 ms (every 10 events).
  CheckpointStore store;
  for (uint64_t i = 1; i <= 200; ++i) store.add(at_event(i * 10, double(i) * 25), 0);
  REQUIRE(store.size() == CheckpointStore::kMax);
  // Evenly: 5,000 ms over 48 would be 104 ms apart. Halving the older half each time (the
  // policy before) left the trace's first seconds behind a single checkpoint.
  CHECK(widest_gap(store, 2000) <= 250);
  // The newest ones (where the user is) are all there, the latest in the trace too.
  for (uint64_t i = 200 - CheckpointStore::kRecent + 1; i <= 200; ++i)
    CHECK(store.at(i * 10) != nullptr);
  CHECK(store.latest_at_most(100000)->event == 2000);
}

TEST_CASE("pinned checkpoints and the one a run counts from are never thinned", "[unit]") {
  CheckpointStore store;
  store.add(at_event(15, 30, true), 0);
  store.add(at_event(17, 34, true), 0);
  for (uint64_t i = 1; i <= 300; ++i) store.add(at_event(i * 10, double(i) * 25), 500);
  CHECK(store.at(15) != nullptr);
  CHECK(store.at(17) != nullptr);
  CHECK(store.at(500) != nullptr);
  CHECK(store.size() == CheckpointStore::kMax + 2);  // kMax besides the pinned ones
}

TEST_CASE("a later replay's checkpoints are kept where it ran, the rest stays spread", "[unit]") {
  CheckpointStore store;
  for (uint64_t i = 1; i <= 200; ++i) store.add(at_event(i * 10, double(i) * 25), 0);
  // The user goes back to event 500 and works there: a replay from the checkpoint at 500
  // takes checkpoints every event (2.5 ms of replay each).
  for (uint64_t e = 501; e <= 530; ++e) store.add(at_event(e, 1250 + double(e - 500) * 2.5), 0);
  REQUIRE(store.size() == CheckpointStore::kMax);
  for (uint64_t e = 530 - CheckpointStore::kRecent + 1; e <= 530; ++e)
    CHECK(store.at(e) != nullptr);
  CHECK(widest_gap(store, 2000) <= 300);
}
