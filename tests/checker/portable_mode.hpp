#pragma once
// The checker's portable mode for the length of a scope (memcert_checker::set_checker_portable), so a
// test can run the same assertions on the CPU-specific routes and on their portable scalar twins.
#include "memcert/checker/checker.hpp"

struct PortableMode {
  explicit PortableMode(bool on) : saved(memcert_checker::checker_portable()) { memcert_checker::set_checker_portable(on); }
  ~PortableMode() { memcert_checker::set_checker_portable(saved); }
  PortableMode(const PortableMode&) = delete;
  PortableMode& operator=(const PortableMode&) = delete;
  bool saved;
};
