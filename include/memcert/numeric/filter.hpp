#pragma once
// "Decide in double, escalate to MPFR, then exact" written once (CGAL's Filtered_predicate), in two forms.
//
// filtered<T>(stages...): the stages run in order, each a callable returning std::optional<T>, nullopt
// when it cannot decide (its rounding-error bound is too weak, its size limit is exceeded, ...); the first
// answer is the result, so only what a cheap stage leaves undecided costs a dearer one. nullopt when no
// stage decides: the caller then says "undecided", never guesses.
//
// decide(tiers...) / decide_escalating(in_double, precisions, in_mpfr, exact): the same for predicates.
// Every tier returns an UncertainBool (numeric/dinterval.hpp); an indeterminate answer is never acted on:
// the next tier runs. The Decision records which tier decided (for the caller's reports): a tier index,
// and for decide_escalating the kind (double, MPFR at a precision, exact) and the MPFR tiers evaluated.
// When no tier decides, the value stays indeterminate and the caller reports "undecided".
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <utility>

#include "memcert/numeric/dinterval.hpp"

namespace memcert {

template <class T, class... Stages>
std::optional<T> filtered(Stages&&... stages) {
  std::optional<T> r;
  (void)((r = std::forward<Stages>(stages)(), r.has_value()) || ...);
  return r;
}

// The tier that decided a predicate in decide_escalating.
enum class FilterTier : unsigned char { floating, mpfr, exact, undecided };

struct Decision {
  UncertainBool value = UncertainBool::indeterminate();
  std::size_t tier = 0;  // index of the deciding tier in evaluation order; the number of tiers if none did
  FilterTier kind = FilterTier::undecided;  // decide_escalating only
  long precision = 0;                       // MPFR bits of the deciding tier (kind == mpfr)
  std::size_t mpfr_tiers = 0;               // MPFR tiers evaluated (decide_escalating only)
  bool decided() const { return value.is_certain(); }
};

// The tiers in order; the first certain answer is the result.
template <class... Tiers>
Decision decide(Tiers&&... tiers) {
  Decision d;
  std::size_t i = 0;
  (void)(((d.value = std::forward<Tiers>(tiers)(), d.value.is_certain()) || (++i, false)) || ...);
  d.tier = i;
  return d;
}

// For a predicate with no exact method: decide_escalating's `exact` argument.
inline constexpr auto kNoExactTier = [] { return UncertainBool::indeterminate(); };

// in_double() -> UncertainBool; then in_mpfr(prec) -> UncertainBool for each precision in turn (bits,
// increasing); then exact() -> UncertainBool (indeterminate only when the exact method declines, e.g. a
// size limit; kNoExactTier when there is none). Tier indices: 0 double, 1..P MPFR, P + 1 exact.
template <class Precisions, class InDouble, class InMpfr, class Exact>
Decision decide_escalating(InDouble&& in_double, const Precisions& precisions, InMpfr&& in_mpfr, Exact&& exact) {
  Decision d;
  d.value = in_double();
  if (d.value.is_certain()) {
    d.kind = FilterTier::floating;
    return d;
  }
  for (const long prec : precisions) {
    ++d.tier;
    ++d.mpfr_tiers;
    d.value = in_mpfr(prec);
    if (d.value.is_certain()) {
      d.kind = FilterTier::mpfr;
      d.precision = prec;
      return d;
    }
  }
  ++d.tier;
  d.value = exact();
  if (d.value.is_certain()) {
    d.kind = FilterTier::exact;
  } else {
    ++d.tier;
  }
  return d;
}

template <class InDouble, class InMpfr, class Exact>
Decision decide_escalating(InDouble&& in_double, std::initializer_list<long> precisions, InMpfr&& in_mpfr,
                           Exact&& exact) {
  return decide_escalating<std::initializer_list<long>>(std::forward<InDouble>(in_double), precisions,
                                                        std::forward<InMpfr>(in_mpfr), std::forward<Exact>(exact));
}

}  // namespace memcert
