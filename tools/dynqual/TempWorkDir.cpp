// The work folder of run, qualify, ab, gate and calibrate when --work-dir is not given.
#include "Commands.h"

#include <stdlib.h>

#include <stdexcept>

namespace dynqual::cli {

std::filesystem::path makeTempWorkDir(const std::string& kind) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / ("dynqual-" + kind + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data()))
    throw std::runtime_error("cannot create a temporary folder under " + fs::temp_directory_path().string());
  return tmpl;
}

} // namespace dynqual::cli
