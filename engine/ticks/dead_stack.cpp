#include "dead_stack.h"

#include <algorithm>

namespace rwd {

std::optional<std::pair<uint64_t, uint64_t>> dead_stack(const std::vector<ProcMapping>& maps,
                                                        uint64_t rsp) {
  auto it = std::upper_bound(maps.begin(), maps.end(), rsp,
                             [](uint64_t a, const ProcMapping& m) { return a < m.end; });
  if (it == maps.end() || rsp < it->start) return std::nullopt;
  const ProcMapping& m = *it;
  bool stack = m.path == "[stack]";
  if (!stack && m.path.empty() && m.inode == 0 && m.read && m.write && !m.shared &&
      it != maps.begin()) {
    const ProcMapping& below = *(it - 1);
    stack = below.end == m.start && !below.read && !below.write && !below.exec;
  }
  if (!stack || rsp <= m.start + kRedZoneBytes) return std::nullopt;
  return std::make_pair(m.start, rsp - kRedZoneBytes - m.start);
}

}  // namespace rwd
