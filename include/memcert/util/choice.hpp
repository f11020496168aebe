#pragma once
// An option (or a result field) that takes one of an enum's values. C++ sets it from the enum
// (opt.scale = mahdavi24::Theorem1Scale::weyl) or from the value's name, the word the CLI, the Python
// module and the JSON outputs use (opt.scale = "weyl"; std::invalid_argument for any other word). It
// compares with either, converts to the enum (so `switch (opt.scale)` works), and name() / str() give the
// word.
//
// An enum E takes part through one function found by argument-dependent lookup, in E's namespace:
//   std::span<const std::string_view> choice_names(E);  // the names, indexed by the enumerators 0, 1, ...
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace memcert {

template <class E>
class Choice {
 public:
  constexpr Choice(E e) noexcept : e_(e) {}
  Choice(std::string_view name) : e_(parse(name)) {}
  Choice(const char* name) : Choice(std::string_view(name)) {}
  Choice(const std::string& name) : Choice(std::string_view(name)) {}

  constexpr E value() const noexcept { return e_; }
  constexpr operator E() const noexcept { return e_; }
  std::string_view name() const { return choice_names(e_)[static_cast<std::size_t>(e_)]; }
  std::string str() const { return std::string(name()); }

  friend constexpr bool operator==(Choice a, E b) noexcept { return a.e_ == b; }
  friend bool operator==(Choice a, std::string_view b) { return a.name() == b; }

  // The enumerator named `name`; std::invalid_argument naming the accepted words otherwise.
  static E parse(std::string_view name) {
    const auto names = choice_names(E{});
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return static_cast<E>(i);
    std::string expected;
    for (std::size_t i = 0; i < names.size(); ++i)
      expected += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
    throw std::invalid_argument("expected " + expected + ", got \"" + std::string(name) + "\"");
  }

 private:
  E e_;
};

}  // namespace memcert
