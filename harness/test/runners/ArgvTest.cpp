// Runner declarations: config files, argv template expansion, placeholders, the built-in runner.
#include "dynqual/runners/Runner.h"
#include "dynqual/runners/RunnerConfig.h"

#include "RunnersTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

using namespace dynqual::runners;
using testutil::ScratchDir;

namespace {

const char* kGoodConfig = R"({"runners":{
  "py": {"argv": ["python3", "/opt/r.py", "--protocol", "{protocol}", "--model", "{model}",
                  "--output-dir", "{output_dir}", "--reps", "{reps}", "--warmup", "{warmup}",
                  "--min-sample-ms", "{min_sample_ms}", "{inputs}"]},
  "eq": {"argv": ["/bin/r", "--model={model}", "--out={output_dir}", "{{literal}}", "{inputs}", "x{reps}y"]}
}})";

RunnerRequest request() {
  RunnerRequest r;
  r.model = "/m/model.onnx";
  r.inputs = {"/d/input_0.pb", "/d/input_1.pb"};
  r.outputDir = "/tmp/out";
  r.reps = 7;
  r.warmup = 2;
  r.minSampleMs = 0.5;
  return r;
}

/// The message of the RunnerConfigError `f` throws ("" when it throws nothing).
template <typename F> std::string configError(F f) {
  try {
    f();
  } catch (const RunnerConfigError& e) {
    return e.what();
  }
  return "";
}

std::string parseError(const std::string& json) {
  return configError([&] { RunnerConfig::parse(json, "cfg.json"); });
}

std::string argvError(const std::string& argvJson) {
  return parseError(R"({"runners":{"r1":{"argv":)" + argvJson + "}}}");
}

} // namespace

TEST(RunnerConfig, ParsesDeclarations) {
  RunnerConfig c = RunnerConfig::parse(kGoodConfig, "cfg.json");
  EXPECT_EQ(c.names(), (std::vector<std::string>{"eq", "py"}));
  const RunnerSpec* py = c.find("py");
  ASSERT_NE(py, nullptr);
  EXPECT_EQ(py->name, "ext:py");
  EXPECT_EQ(py->origin, "cfg.json");
  EXPECT_EQ(py->argv.size(), 15u);
  EXPECT_EQ(c.find("nope"), nullptr);
}

TEST(RunnerConfig, ExpandsEveryPlaceholder) {
  RunnerConfig c = RunnerConfig::parse(kGoodConfig, "cfg.json");
  EXPECT_EQ(buildArgv(*c.find("py"), request()),
            (std::vector<std::string>{"python3", "/opt/r.py", "--protocol", "1", "--model", "/m/model.onnx",
                                      "--output-dir", "/tmp/out", "--reps", "7", "--warmup", "2", "--min-sample-ms",
                                      "0.5", "--input", "/d/input_0.pb", "--input", "/d/input_1.pb"}));
}

TEST(RunnerConfig, ExpandsInsideElementsAndUnescapesBraces) {
  RunnerConfig c = RunnerConfig::parse(kGoodConfig, "cfg.json");
  RunnerRequest r = request();
  r.inputs.clear();
  r.minSampleMs = 10;
  EXPECT_EQ(buildArgv(*c.find("eq"), r),
            (std::vector<std::string>{"/bin/r", "--model=/m/model.onnx", "--out=/tmp/out", "{literal}", "x7y"}));
}

TEST(RunnerConfig, MinSampleMsUsesTheShortestDecimal) {
  RunnerConfig c = RunnerConfig::parse(kGoodConfig, "cfg.json");
  RunnerRequest r = request();
  for (auto [value, text] :
       std::vector<std::pair<double, std::string>>{{0, "0"}, {10, "10"}, {2.25, "2.25"}, {0.1, "0.1"}}) {
    r.minSampleMs = value;
    EXPECT_EQ(buildArgv(*c.find("py"), r)[13], text);
  }
}

TEST(RunnerConfig, RejectsBadRequests) {
  RunnerConfig c = RunnerConfig::parse(kGoodConfig, "cfg.json");
  RunnerRequest r = request();
  r.reps = 0;
  EXPECT_THROW(buildArgv(*c.find("py"), r), std::invalid_argument);
  r = request();
  r.warmup = -1;
  EXPECT_THROW(buildArgv(*c.find("py"), r), std::invalid_argument);
  r = request();
  r.minSampleMs = std::nan("");
  EXPECT_THROW(buildArgv(*c.find("py"), r), std::invalid_argument);
  r.minSampleMs = -1;
  EXPECT_THROW(buildArgv(*c.find("py"), r), std::invalid_argument);
}

TEST(RunnerConfig, UnknownPlaceholderNamesFileRunnerAndPlaceholder) {
  std::string e = argvError(R"(["r", "{model}", "{output_dir}", "{inputs}", "--threads", "{threads}"])");
  EXPECT_NE(e.find("cfg.json: runner r1: argv[5] \"{threads}\": unknown placeholder {threads}"), std::string::npos)
      << e;
  EXPECT_NE(e.find("{min_sample_ms}"), std::string::npos) << e; // lists the known ones
}

TEST(RunnerConfig, RejectsMalformedTemplates) {
  EXPECT_NE(argvError(R"(["r", "{model", "{output_dir}", "{inputs}"])").find("unmatched '{'"), std::string::npos);
  EXPECT_NE(argvError(R"(["r", "model}", "{model}", "{output_dir}", "{inputs}"])").find("unmatched '}'"),
            std::string::npos);
  EXPECT_NE(argvError(R"(["r", "{}", "{model}", "{output_dir}", "{inputs}"])").find("bad placeholder \"{}\""),
            std::string::npos);
  EXPECT_NE(argvError(R"(["r", "{model}", "{output_dir}", "--in={inputs}"])").find("must be a whole argv element"),
            std::string::npos);
  EXPECT_NE(
      argvError(R"(["{model}", "{output_dir}", "{inputs}"])").find("argv[0] (the program) may not hold a placeholder"),
      std::string::npos);
  EXPECT_NE(argvError(R"([])").find("cfg.json: runner r1: argv is empty"), std::string::npos);
  EXPECT_NE(argvError(R"([""])").find("argv[0] (the program) is empty"), std::string::npos);
  EXPECT_NE(argvError(R"(["r", "{output_dir}", "{inputs}"])").find("never passes {model}"), std::string::npos);
  EXPECT_NE(argvError(R"(["r", "{model}", "{inputs}"])").find("never passes {output_dir}"), std::string::npos);
  EXPECT_NE(argvError(R"(["r", "{model}", "{output_dir}"])").find("never passes {inputs}"), std::string::npos);
  EXPECT_NE(argvError(R"(["r", 3])").find("array of strings, found number"), std::string::npos);
  EXPECT_NE(argvError(R"("r {model}")").find("\"argv\" must be an array of strings"), std::string::npos);
}

TEST(RunnerConfig, RejectsMalformedFiles) {
  EXPECT_NE(parseError("{\"runners\": {").find("cfg.json: malformed JSON"), std::string::npos);
  EXPECT_NE(parseError("[]").find("cfg.json: expected a JSON object"), std::string::npos);
  EXPECT_NE(parseError("{}").find("\"runners\" must be an object"), std::string::npos);
  EXPECT_NE(parseError(R"({"runners":{}, "extra":1})").find("unknown key \"extra\""), std::string::npos);
  EXPECT_NE(parseError(R"({"runners":{"a b":{"argv":[]}}})").find("runner name \"a b\""), std::string::npos);
  EXPECT_NE(parseError(R"({"runners":{"r":{"argv":["r","{model}","{output_dir}","{inputs}"],"env":{}}}})")
                .find("cfg.json: runner r: unknown key \"env\""),
            std::string::npos);
  EXPECT_NE(parseError(R"({"runners":{"r":[]}})").find("declaration must be an object"), std::string::npos);
}

TEST(RunnerConfig, LoadsFilesAndNamesMissingOnes) {
  ScratchDir dir;
  testutil::writeText(dir / "runners.json", kGoodConfig);
  RunnerConfig c = RunnerConfig::load(dir / "runners.json");
  EXPECT_EQ(c.find("py")->origin, (dir / "runners.json").string());
  std::string e = configError([&] { RunnerConfig::load(dir / "missing.json"); });
  EXPECT_NE(e.find("missing.json: cannot open runner config file"), std::string::npos) << e;
  testutil::writeText(dir / "bad.json", R"({"runners":{"r":{"argv":["r","{nope}"]}}})");
  e = configError([&] { RunnerConfig::load(dir / "bad.json"); });
  EXPECT_NE(e.find((dir / "bad.json").string() + ": runner r: "), std::string::npos) << e;
}

TEST(RunnerConfig, ResolvesVariants) {
  RunnerConfig c = RunnerConfig::parse(kGoodConfig, "cfg.json");
  EXPECT_EQ(resolveRunner("ext:py", &c).name, "ext:py");
  EXPECT_NE(configError([&] {
              resolveRunner("ext:zz", &c);
            }).find("no runner \"zz\" in the runner config (declared: eq, py)"),
            std::string::npos);
  EXPECT_NE(configError([&] { resolveRunner("ext:py", nullptr); }).find("needs a runner config file"),
            std::string::npos);
  EXPECT_NE(configError([&] { resolveRunner("tvm:cpu", &c); }).find("unknown runner variant \"tvm:cpu\""),
            std::string::npos);
}

TEST(RunnerConfig, FindsProgramsOnPath) {
  EXPECT_FALSE(findProgram("sh").empty());
  EXPECT_TRUE(findProgram("dynqual-no-such-program").empty());
  EXPECT_EQ(findProgram("/bin/sh"), std::filesystem::path("/bin/sh"));
  EXPECT_TRUE(findProgram("/nonexistent/sh").empty());
}

namespace {
/// Sets an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name))
      old_ = old, hadOld_ = true;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (hadOld_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char* name_;
  std::string old_;
  bool hadOld_ = false;
};
} // namespace

TEST(OrtCpuRunner, DefaultsToTheSourceTreeAndHonoursTheOverride) {
  {
    ScopedEnv unset("DYNQUAL_ORT_RUNNER", "");
    EXPECT_EQ(ortRunnerDir(), std::filesystem::path(DYNQUAL_SOURCE_DIR) / "harness/runners/ort-node");
  }
  ScratchDir dir;
  ScopedEnv env("DYNQUAL_ORT_RUNNER", dir.path().string());
  EXPECT_EQ(ortRunnerDir(), dir.path());
  try {
    ortCpuRunner();
    FAIL() << "an empty folder is not a runner";
  } catch (const RunnerUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("ort-runner.js not found"), std::string::npos) << e.what();
  }
  testutil::writeText(dir / "ort-runner.js", "");
  {
    ScopedEnv file("DYNQUAL_ORT_RUNNER", (dir / "ort-runner.js").string());
    EXPECT_EQ(ortRunnerDir(), dir.path());
  }
  try {
    ortCpuRunner();
    FAIL() << "no node_modules: unavailable";
  } catch (const RunnerUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("scripts/setup"), std::string::npos) << e.what();
  }
}

TEST(RunnerConfig, NumberOverflowIsMalformedJson) {
  EXPECT_NE(parseError(R"({"runners":{"r":{"argv":[1e999]}}})").find("cfg.json: malformed JSON"), std::string::npos);
}
