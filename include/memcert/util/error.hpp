#pragma once
// Errors that map to the CLI's exit codes (docs/CLI.md): InputError -> exit 2 with one line.
#include <stdexcept>
#include <string>

namespace memcert {

// Bad usage or bad input. what() is ONE line: "<file>: <position>: expected <what>, got <what>".
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Builds the canonical one-line message.
inline InputError input_error(const std::string& file, const std::string& position,
                              const std::string& expectation) {
  std::string msg = file;
  if (!position.empty()) msg += ": " + position;
  msg += ": " + expectation;
  return InputError(msg);
}

}  // namespace memcert
