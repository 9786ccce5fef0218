// Store recording that survives a store failure, shared by run and qualify.
#include "Commands.h"

#include "dynqual/store/Store.h"

namespace dynqual::cli {

void RecordGuard::operator()(const std::function<void()>& write) {
  if (!db_)
    return;
  try {
    write();
  } catch (const std::exception& e) {
    error_ = e.what();
    db_.reset();
  }
}

} // namespace dynqual::cli
