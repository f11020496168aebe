#pragma once
// "Decide in double, escalate to MPFR, then exact" as one template (CGAL's Filtered_predicate): the
// stages run in order, each a callable returning std::optional<T>, nullopt when it cannot decide (its
// rounding-error bound is too weak, its size limit is exceeded, ...); the first answer is the result, so
// only what a cheap stage leaves undecided costs a dearer one. nullopt when no stage decides: the caller
// then says "undecided", never guesses.
#include <optional>
#include <utility>

namespace memcert {

template <class T, class... Stages>
std::optional<T> filtered(Stages&&... stages) {
  std::optional<T> r;
  (void)((r = std::forward<Stages>(stages)(), r.has_value()) || ...);
  return r;
}

}  // namespace memcert
