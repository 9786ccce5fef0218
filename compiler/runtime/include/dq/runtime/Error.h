// The one exception type the runtime throws.
#pragma once

#include <stdexcept>
#include <string>

namespace dq::rt {

/// Every runtime failure (bad artifact, bad input, device trap, kernel error) is reported as a
/// RuntimeError whose what() is one line naming the file, input, instruction or buffer involved.
class RuntimeError : public std::runtime_error {
public:
  explicit RuntimeError(const std::string &message) : std::runtime_error(message) {}
};

} // namespace dq::rt
