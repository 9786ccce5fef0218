// `dynqual gate` end to end on a throwaway four-commit repository, built with the gate's default
// cmake + ninja commands. Its small CMake project compiles 20 C files (through ccache, with a
// header generated into the build folder) and produces real binaries: dynqual-exec is this
// build's dynqual-exec with the object of runtime.c appended (an ELF runs with trailing bytes, so
// a change of runtime.c changes its hash and nothing else), dynqual a wrapper of this build's
// dynqual that compiles the model named in compiler.txt with cse run twice (the program records
// its pipeline, so its bytes change while its computation does not). The commits:
//   c0 base; c1 changes only README.md; c2 changes runtime.c; c3 names expand_where_shape in
//   compiler.txt.
// Also here: two compiles of one model from different folders give identical bytes, and the
// runtime binary names neither the source nor the build folder.
#include "dynqual/process/Process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kBin = DYNQUAL_BIN;
const std::string kExec = DYNQUAL_EXEC_PATH;
const fs::path kCorpus = DYNQUAL_CORPUS_DIR;
const std::string kSlice = (kCorpus / "slice_negative_step").string();
const std::string kExpand = (kCorpus / "expand_where_shape").string();

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::trunc | std::ios::binary);
  out << text;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

const char* kCMakeLists = R"SH(cmake_minimum_required(VERSION 3.20)
project(gatefake C)
set(CMAKE_C_FLAGS_RELWITHDEBINFO "-O2 -g0")
find_program(CCACHE_PROGRAM ccache REQUIRED)
set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
configure_file(config.h.in ${CMAKE_BINARY_DIR}/gen/config.h)
file(GLOB parts CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/parts/*.c)
add_library(parts STATIC ${parts})
target_include_directories(parts PRIVATE ${CMAKE_BINARY_DIR}/gen)
add_library(runtime OBJECT runtime.c)
set(out ${CMAKE_BINARY_DIR}/bin)
add_custom_command(OUTPUT ${out}/dynqual-exec
  COMMAND sh ${CMAKE_SOURCE_DIR}/link.sh @EXEC@ ${out}/dynqual-exec $<TARGET_OBJECTS:runtime>
  DEPENDS parts runtime $<TARGET_OBJECTS:runtime> ${CMAKE_SOURCE_DIR}/link.sh VERBATIM)
add_custom_target(dynqual-exec DEPENDS ${out}/dynqual-exec)
add_custom_command(OUTPUT ${out}/dynqual
  COMMAND sh ${CMAKE_SOURCE_DIR}/wrap.sh @BIN@ ${CMAKE_SOURCE_DIR} ${out}/dynqual
  DEPENDS ${CMAKE_SOURCE_DIR}/wrap.sh VERBATIM)
add_custom_target(dynqual DEPENDS ${out}/dynqual)
)SH";

// link.sh REAL OUT OBJ: OUT = REAL followed by OBJ's bytes.
const char* kLink = R"SH(set -e
mkdir -p "$(dirname "$2")"
cat "$1" "$3" > "$2.tmp"
chmod +x "$2.tmp"
mv "$2.tmp" "$2"
)SH";

// wrap.sh REAL SRC OUT: OUT runs REAL; the driver's `compile MODEL_DIR/model.onnx --pipeline P -o
// FILE` of the model named in SRC/compiler.txt gets the production pipeline with cse run twice.
const char* kWrap = R"SH(set -e
mkdir -p "$(dirname "$3")"
cat > "$3.tmp" <<WRAP
#!/bin/sh
real='$1'
if [ "\$1" = compile ] && [ "\$(basename "\$(dirname "\$2")")" = "\$(cat '$2/compiler.txt')" ]; then
  spec=\$("\$real" compile --pipeline production --print-pipeline | sed 's/, cse,/, cse, cse,/')
  exec "\$real" compile "\$2" --pipeline "\$spec" -o "\$6"
fi
exec "\$real" "\$@"
WRAP
chmod +x "$3.tmp"
mv "$3.tmp" "$3"
)SH";

struct Outcome {
  int code = -1;
  json doc;
  std::string out, err;
};

class GateEndToEnd : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    if (std::system("command -v ccache >/dev/null 2>&1 && command -v cmake >/dev/null 2>&1") != 0)
      return; // each test skips
    std::string tmpl = (fs::temp_directory_path() / "dynqual-gate-e2e-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    repo_ = root_ / "repo";
    // A cache of its own: the hit counts below must not depend on other builds of the machine.
    setenv("CCACHE_DIR", (root_ / "ccache").c_str(), 1);
    write(repo_ / "CMakeLists.txt", replaceAll(replaceAll(kCMakeLists, "@EXEC@", kExec), "@BIN@", kBin));
    write(repo_ / "link.sh", kLink);
    write(repo_ / "wrap.sh", kWrap);
    write(repo_ / "config.h.in", "#define PART_SCALE 3\n");
    for (int i = 0; i < 20; ++i)
      write(repo_ / "parts" / ("p" + std::to_string(i) + ".c"), "#include \"config.h\"\nint part" + std::to_string(i) +
                                                                    "(int x) { return x * PART_SCALE + " +
                                                                    std::to_string(i) + "; }\n");
    write(repo_ / "runtime.c", "int runtime_step(int x) { return x + 1; }\n");
    write(repo_ / "compiler.txt", "");
    write(repo_ / "README.md", "fake project\n");
    sh("git init -q && git config user.name gate-test && git config user.email gate-test@example.com && "
       "git config commit.gpgsign false && git add -A && git commit -q -m c0");
    write(repo_ / "README.md", "fake project, documented better\n");
    sh("git commit -q -am c1-doc");
    write(repo_ / "runtime.c", "int runtime_step(int x) { return x + 2; }\n");
    sh("git commit -q -am c2-runtime");
    write(repo_ / "compiler.txt", "expand_where_shape");
    sh("git commit -q -am c3-compiler");
  }
  static void TearDownTestSuite() {
    if (root_.empty())
      return;
    sh("git worktree prune");
    std::error_code ec;
    fs::remove_all(root_, ec);
    unsetenv("CCACHE_DIR");
  }
  void SetUp() override {
    if (root_.empty())
      GTEST_SKIP() << "ccache or cmake is not installed";
  }

  static void sh(const std::string& cmd) {
    std::string full = "cd '" + repo_.string() + "' && " + cmd;
    ASSERT_EQ(std::system(full.c_str()), 0) << full;
  }

  static Outcome gate(const std::string& base, const std::string& head, std::vector<std::string> extra) {
    std::vector<std::string> args = {kBin,          "gate",
                                     "--repo",      repo_.string(),
                                     "--cache-dir", (root_ / "gate").string(),
                                     "--base",      base,
                                     "--head",      head,
                                     "--looks",     "12",
                                     "--samples",   "1",
                                     "--warmup",    "0",
                                     "--format",    "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    dynqual::process::ProcessResult c = dynqual::process::runChild(args, 280);
    Outcome o{c.exitCode, json::parse(c.out, nullptr, false), c.out, c.err};
    return o;
  }

  static const json* comparison(const json& doc, const std::string& model) {
    for (const auto& c : doc["comparisons"])
      if (c["model"] == model)
        return &c;
    return nullptr;
  }

  static size_t samplesOf(const json& doc, const std::string& model) {
    size_t n = 0;
    for (const auto& s : doc["samples"])
      n += s[0] == model;
    return n;
  }

  static fs::path root_, repo_;
};

fs::path GateEndToEnd::root_, GateEndToEnd::repo_;

TEST_F(GateEndToEnd, OnlyADocChangedEveryModelIsIdenticalWithoutTiming) {
  fs::path db = root_ / "doc.db";
  Outcome o = gate("HEAD~3", "HEAD~2", {kSlice, kExpand, "--db", db.string()});
  ASSERT_FALSE(o.doc.is_discarded()) << o.err;
  EXPECT_EQ(o.code, 0) << o.err;
  ASSERT_EQ(o.doc["comparisons"].size(), 2u) << o.doc["comparisons"].dump();
  for (const auto& c : o.doc["comparisons"])
    EXPECT_EQ(c["verdict"], "identical") << c.dump();
  EXPECT_TRUE(o.doc["samples"].empty());
  EXPECT_EQ(o.doc["rounds"], 0);
  // Correctness still ran on both arms.
  for (const auto& a : o.doc["accuracy"]) {
    EXPECT_TRUE(a["passed"].get<bool>()) << a.dump();
    EXPECT_FALSE(a["cases"].empty()) << a.dump();
    EXPECT_EQ(a["base_program_sha256"], a["head_program_sha256"]) << a.dump();
    EXPECT_EQ(a["base_program_sha256"].get<std::string>().size(), 64u) << a.dump();
  }
  const json& rt = o.doc["runtime_sha256"]["dynqual-exec"];
  EXPECT_EQ(rt["base"], rt["head"]);
  EXPECT_NE(o.doc["verdict"].get<std::string>().find("2 identical"), std::string::npos) << o.doc["verdict"];
  // The head build compiled nothing: every compile was a ccache hit.
  EXPECT_NE(o.err.find("ccache 21/21 compiles hit (100.0 %)"), std::string::npos) << o.err;
  ASSERT_EQ(o.doc["builds"].size(), 2u);

  // The hashes are stored with the run: --reanalyze shows the verdicts and hashes again, in every format.
  dynqual::process::ProcessResult md =
      dynqual::process::runChild({kBin, "gate", "--reanalyze", "latest", "--db", db.string()}, 60);
  EXPECT_EQ(md.exitCode, 0) << md.err;
  EXPECT_NE(md.err.find("identical to the stored verdicts"), std::string::npos) << md.err;
  EXPECT_NE(md.out.find("| slice\\_negative\\_step | modelled\\_device\\_ms | - | - | none | - | - | - | - | 0 | - | - "
                        "| identical |"),
            std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("| dynqual-exec | " + rt["base"].get<std::string>().substr(0, 12)), std::string::npos)
      << md.out;
  dynqual::process::ProcessResult ju =
      dynqual::process::runChild({kBin, "gate", "--reanalyze", "latest", "--db", db.string(), "--format", "junit"}, 60);
  EXPECT_NE(ju.out.find("failures=\"0\""), std::string::npos) << ju.out;
  EXPECT_NE(ju.out.find("name=\"expand_where_shape\"><system-out>identical"), std::string::npos) << ju.out;
  dynqual::process::ProcessResult js =
      dynqual::process::runChild({kBin, "gate", "--reanalyze", "latest", "--db", db.string(), "--format", "json"}, 60);
  json again = json::parse(js.out, nullptr, false);
  ASSERT_FALSE(again.is_discarded()) << js.err;
  EXPECT_EQ(again["runtime_sha256"], o.doc["runtime_sha256"]);
  EXPECT_EQ(again["accuracy"][0]["head_program_sha256"], o.doc["accuracy"][0]["head_program_sha256"]);

  // --force-timing times them anyway.
  Outcome forced = gate("HEAD~3", "HEAD~2", {kSlice, "--no-db", "--force-timing"});
  ASSERT_FALSE(forced.doc.is_discarded()) << forced.err;
  EXPECT_TRUE(forced.code == 0 || forced.code == 3) << forced.err;
  // One model, two comparisons: the round value and the per-round mean (--tail-value auto).
  ASSERT_EQ(forced.doc["comparisons"].size(), 2u);
  for (const auto& c : forced.doc["comparisons"])
    EXPECT_NE(c["verdict"], "identical");
  EXPECT_EQ(forced.doc["samples"].size(), 48u); // 12 rounds x 4 ABBA positions x 1 sample
}

TEST_F(GateEndToEnd, ARuntimeChangeTimesEveryModelAndTheHeadBuildHitsTheCache) {
  Outcome o = gate("HEAD~2", "HEAD~1", {kSlice, kExpand, "--no-db"});
  ASSERT_FALSE(o.doc.is_discarded()) << o.err;
  EXPECT_TRUE(o.code == 0 || o.code == 3) << o.err;
  const json& rt = o.doc["runtime_sha256"]["dynqual-exec"];
  EXPECT_NE(rt["base"], rt["head"]);
  for (const char* m : {"slice_negative_step", "expand_where_shape"}) {
    const json* c = comparison(o.doc, m);
    ASSERT_NE(c, nullptr) << m;
    EXPECT_NE((*c)["verdict"], "identical") << c->dump();
    EXPECT_EQ(samplesOf(o.doc, m), 48u) << m;
  }
  // Only runtime.c was compiled again: 20 of 21 compiles hit (95.2 % >= 90 %).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(o.err, m,
                                std::regex("gate: head HEAD~1 \\([0-9a-f]+\\): built in [0-9.]+ s, ccache "
                                           "([0-9]+)/([0-9]+) compiles hit")))
      << o.err;
  int hits = std::stoi(m[1]), compiles = std::stoi(m[2]);
  EXPECT_EQ(compiles, 21) << o.err;
  EXPECT_GE(hits * 10, compiles * 9) << o.err;
  EXPECT_NE(o.err.find("head ccache misses: ../runtime.c"), std::string::npos) << o.err;
}

TEST_F(GateEndToEnd, ACompilerChangeToOneProgramTimesOnlyThatModel) {
  Outcome o = gate("HEAD~1", "HEAD", {kSlice, kExpand, "--no-db"});
  ASSERT_FALSE(o.doc.is_discarded()) << o.err;
  EXPECT_TRUE(o.code == 0 || o.code == 3) << o.err;
  const json* same = comparison(o.doc, "slice_negative_step");
  const json* changed = comparison(o.doc, "expand_where_shape");
  ASSERT_TRUE(same && changed) << o.doc["comparisons"].dump();
  EXPECT_EQ((*same)["verdict"], "identical");
  EXPECT_NE((*changed)["verdict"], "identical");
  EXPECT_EQ(samplesOf(o.doc, "slice_negative_step"), 0u);
  EXPECT_EQ(samplesOf(o.doc, "expand_where_shape"), 48u);
  for (const auto& a : o.doc["accuracy"]) {
    EXPECT_TRUE(a["passed"].get<bool>()) << a.dump();
    bool equal = a["base_program_sha256"] == a["head_program_sha256"];
    EXPECT_EQ(equal, a["model"] == "slice_negative_step") << a.dump();
  }
}

// Reproducible artifacts: one model compiled four times in each of two folders of different names,
// from two working directories, gives byte-identical programs (dq-pool-allocs once ordered the
// dynamic sizes of an allocation by pointer, and a third of the compiles of this model came out
// with another order of the size products); the runtime binary holds neither the source nor the
// build folder's path (ccache's relative paths keep it so across checkouts).
TEST(ReproducibleArtifacts, CompilesOfOneModelFromDifferentFoldersAreIdentical) {
  std::string tmpl = (fs::temp_directory_path() / "dynqual-repro-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  fs::path root = tmpl;
  std::vector<std::string> programs, sidecars;
  for (const char* where : {"a/first", "somewhere/else/second"}) {
    fs::path dir = root / where / "expand_where_shape";
    fs::create_directories(dir);
    fs::copy_file(fs::path(kExpand) / "model.onnx", dir / "model.onnx");
    fs::path cwd = root / where;
    fs::create_directories(cwd / "out");
    for (int i = 0; i < 4; ++i) {
      std::string out = "out/model" + std::to_string(i) + ".dqp";
      std::string cmd =
          "cd '" + cwd.string() + "' && '" + kBin + "' compile expand_where_shape --pipeline production -o " + out;
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
      programs.push_back(slurp(cwd / out));
      sidecars.push_back(slurp(cwd / (out + ".bin")));
      ASSERT_FALSE(programs.back().empty());
      EXPECT_EQ(programs.back().find(root.string()), std::string::npos) << "the program names its folder";
    }
  }
  for (size_t i = 1; i < programs.size(); ++i) {
    EXPECT_TRUE(programs[i] == programs[0]) << "compile " << i << " differs from compile 0";
    EXPECT_TRUE(sidecars[i] == sidecars[0]) << "sidecar " << i << " differs from sidecar 0";
  }
  fs::remove_all(root);

  std::string exec = slurp(kExec);
  ASSERT_GT(exec.size(), 0u);
  EXPECT_EQ(exec.find(DYNQUAL_SOURCE_DIR), std::string::npos) << "dynqual-exec names the source folder";
  EXPECT_EQ(exec.find(DYNQUAL_BINARY_DIR), std::string::npos) << "dynqual-exec names the build folder";
}

} // namespace
