#pragma once
// Typed field access for certificate checks. Every reader returns false and writes a specific,
// human-readable reason naming the field ("upper.kernel[1][3]: ...") instead of throwing, so a check
// is a straight sequence of `if (!read...) return false;`.
#include <gmpxx.h>

#include <cstddef>
#include <string>
#include <vector>

#include "kernel/exact.hpp"
#include "kernel/json.hpp"
#include "kernel/modp.hpp"

namespace memcert_checker {

using json::Value;

// The member `key` of object `obj` (named `where` in messages), which must exist and have type `t`.
const Value* member(const Value& obj, const std::string& where, const std::string& key, json::Type t,
                    std::string& why);

// A JSON integer n with 0 <= n <= max (indices, sizes). Rejects strings, fractions, exponents.
bool read_size(const Value& v, const std::string& where, std::size_t max, std::size_t& out, std::string& why);

// A JSON boolean (the literal true or false); 1, "true" or null are malformed, not "true-ish".
bool read_bool(const Value& v, const std::string& where, bool& out, std::string& why);

// The string member `key`, exactly.
bool read_string(const Value& obj, const std::string& where, const std::string& key, std::string& out,
                 std::string& why);

// An exact number: a JSON STRING holding a rational ("-7/12", "0.5", "1e-3"). JSON numbers are
// refused: in memcert's files a bare JSON number means a float64, which a certificate must not rely on.
bool read_rational(const Value& v, const std::string& where, mpq_class& out, std::string& why);

// A prime p <= kMaxPrime given as a decimal string; primality is verified here (Miller-Rabin).
bool read_prime(const Value& v, const std::string& where, ModP& out, std::string& why);

// A list of exactly `count` indices, each < `bound`, pairwise distinct.
bool read_index_set(const Value& v, const std::string& where, std::size_t count, std::size_t bound,
                    std::vector<std::size_t>& out, std::string& why);

// A list of exactly `count` exact numbers.
bool read_rational_vector(const Value& v, const std::string& where, std::size_t count, QRow& out,
                          std::string& why);

// A matrix {"rows": m, "cols": n, "data": [[...] x n] x m} of exact numbers; the sizes must match.
bool read_matrix(const Value& v, const std::string& where, QMat& out, std::size_t& rows, std::size_t& cols,
                 std::string& why);

// Certificates are checked in memory, so no dimension can usefully exceed this.
inline constexpr std::size_t kMaxDimension = std::size_t{1} << 32;

}  // namespace memcert_checker
