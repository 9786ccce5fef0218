#include "GateBuildFlags.h"
#include "Commands.h"

#include <sstream>

namespace dynqual::cli {

namespace {

std::vector<std::string> splitArgv(const std::string& text, const char* flag) {
  std::vector<std::string> argv;
  std::istringstream in(text);
  for (std::string word; in >> word;)
    argv.push_back(word);
  if (argv.empty())
    throw UsageError(std::string(flag) + ": the command is blank; give a program and its arguments");
  return argv;
}

} // namespace

void addBuildCommandFlags(CLI::App* cmd, BuildCommandFlags& f) {
  cmd->add_option("--configure-command", f.configure,
                  "configure step, run in the build folder; {src} and {build} are replaced (default: cmake -G Ninja "
                  "-S {src} -B {build} -DCMAKE_BUILD_TYPE=RelWithDebInfo; 'true' for none)");
  cmd->add_option("--build-command", f.build,
                  "build step; must leave dynqual and dynqual-exec in one folder under {build} (default: ninja -C "
                  "{build} -j 2 dynqual dynqual-exec)");
}

void applyBuildCommandFlags(const BuildCommandFlags& f, gate::BuildRequest& req) {
  if (!f.configure.empty())
    req.configure = splitArgv(f.configure, "--configure-command");
  if (!f.build.empty())
    req.build = splitArgv(f.build, "--build-command");
}

} // namespace dynqual::cli
