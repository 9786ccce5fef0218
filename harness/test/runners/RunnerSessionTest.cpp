// RunnerSession (serve mode, runner protocol 3) with fake runners (shell scripts) that serve
// samples, crash, hang, print malformed lines and report errors; and the {serve} template rules.
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/runners/RunnerSession.h"

#include "RunnersTestUtil.h"

#include <gtest/gtest.h>

#include <sched.h>

using namespace dynqual;
using namespace dynqual::runners;
using testutil::ScratchDir;

namespace {

// Every fake reads --output-dir, logs its argv and its CPU affinity, then runs its body. The
// sample answers count up: 0.25, 0.5, 0.75, ... so a test can tell them apart.
const char* kPrelude = R"(out=""
for a in "$@"; do printf '%s\n' "$a" >> "$(dirname "$0")/argv.log"; done
grep Cpus_allowed_list /proc/self/status | tr -d ' \t' | cut -d: -f2 > "$(dirname "$0")/cpus.log"
while [ $# -gt 0 ]; do
  case "$1" in --output-dir) out="$2"; shift;; esac
  shift
done
serve() {
  n=0; samples=""
  while read -r cmd; do
    case "$cmd" in
      sample) n=$((n+1)); v=$(awk "BEGIN{print $n*0.25}"); samples="$samples${samples:+,}$v"; echo "{\"sample_ms\":$v}";;
      finish) cp "$(dirname "$0")/expected.pb" "$out/output_0.pb"
              printf '{"protocol":3,"ok":true,"runner":"fake","version":"fake 0","samples_ms":[%s],"iterations_per_sample":4,"session_ms":1,"first_infer_ms":2,"clock":"wall"}' "$samples" > "$out/result.json"
              echo '{"finished":true}'; exit 0;;
      quit) exit 0;;
      *) echo "{\"error\":\"unknown command $cmd\"}"; exit 1;;
    esac
  done
}
)";

class RunnerSessionTest : public ::testing::Test {
protected:
  RunnerSpec fake(const std::string& name, const std::string& body) {
    std::filesystem::path script = dir / (name + ".sh");
    testutil::writeScript(script, std::string(kPrelude) + body);
    testutil::writeText(dir / (name + "-version.sh"), "#!/bin/sh\necho 3\n");
    RunnerConfig config = RunnerConfig::parse(
        R"({"runners":{")" + name + R"(":{"argv":[")" + script.string() +
            R"(","--protocol","{protocol}","--model","{model}","--output-dir","{output_dir}",)"
            R"("--warmup","{warmup}","--min-sample-ms","{min_sample_ms}","--clock","{clock}","{serve}","{inputs}"],)"
            R"("protocol_version_argv":["sh",")" +
            (dir / (name + "-version.sh")).string() + R"("]}}})",
        "fake.json");
    return *config.find(name);
  }
  RunnerRequest request() {
    RunnerRequest r;
    r.model = dir / "model.onnx";
    r.inputs = {dir / "input_0.pb"};
    r.outputDir = dir / "out";
    r.warmup = 1;
    r.minSampleMs = 4;
    r.protocol = 3;
    r.serve = true;
    return r;
  }
  RunnerFailure failure(const RunnerSpec& spec, int samples, double timeout = 30) {
    try {
      RunnerSession s(spec, request(), timeout);
      for (int i = 0; i < samples; ++i)
        s.sample();
      s.quit();
    } catch (const RunnerFailure& f) {
      return f;
    }
    ADD_FAILURE() << spec.name << " succeeded";
    return RunnerFailure(FailureKind::Exited, "", "none");
  }
  void SetUp() override {
    onnxio::writeTensorFile(dir / "expected.pb", Tensor::fromDoubles(DType::Float, {2}, {7, 8}), "y");
  }
  ScratchDir dir;
};

const char* kReady = "echo '{\"ready\":true,\"iterations_per_sample\":4}'\n";

} // namespace

TEST_F(RunnerSessionTest, SamplesOneAtATimeAndFinishes) {
  RunnerSession s(fake("good", std::string(kReady) + "serve\n"), request(), 30);
  EXPECT_EQ(s.iterationsPerSample(), 4);
  EXPECT_DOUBLE_EQ(s.sample(), 0.25);
  EXPECT_DOUBLE_EQ(s.sample(), 0.5);
  EXPECT_DOUBLE_EQ(s.sample(), 0.75);
  RunnerResult r = s.finish();
  EXPECT_EQ(r.samplesMs, (std::vector<double>{0.25, 0.5, 0.75}));
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].tensor.toDoubles(), (std::vector<double>{7, 8}));
  std::string argv = testutil::readText(dir / "argv.log");
  EXPECT_NE(argv.find("--clock\nwall\n--serve\n--input\n"), std::string::npos) << argv;
}

TEST_F(RunnerSessionTest, BindsTheRunnerToTheCpuAskedFor) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  int cpu = -1;
  for (int c = 0; c < CPU_SETSIZE && cpu < 0; ++c)
    if (CPU_ISSET(c, &set))
      cpu = c;
  ASSERT_GE(cpu, 0);
  RunnerSession s(fake("pinned", std::string(kReady) + "serve\n"), request(), 30, cpu);
  s.sample();
  s.quit();
  EXPECT_EQ(testutil::readText(dir / "cpus.log"), std::to_string(cpu) + "\n");
}

TEST_F(RunnerSessionTest, QuitWritesNothing) {
  RunnerSession s(fake("quitter", std::string(kReady) + "serve\n"), request(), 30);
  s.sample();
  s.quit();
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "result.json"));
}

TEST_F(RunnerSessionTest, CrashDuringASample) {
  RunnerFailure f =
      failure(fake("crash", std::string(kReady) + "read -r cmd\necho 'about to crash' >&2\nkill -SEGV $$\n"), 2);
  EXPECT_EQ(f.kind(), FailureKind::Crashed);
  EXPECT_NE(std::string(f.what()).find("runner ext:crash: crashed: serve: killed by signal 11"), std::string::npos)
      << f.what();
  EXPECT_NE(std::string(f.what()).find("at 'sample' running model.onnx; stderr: about to crash"), std::string::npos)
      << f.what();
}

TEST_F(RunnerSessionTest, HangIsATimeout) {
  RunnerFailure f = failure(fake("hang", std::string(kReady) + "read -r cmd\nsleep 30\n"), 1, 0.5);
  EXPECT_EQ(f.kind(), FailureKind::TimedOut);
  EXPECT_NE(std::string(f.what()).find("no answer to 'sample' within 1 s running model.onnx"), std::string::npos)
      << f.what();
}

TEST_F(RunnerSessionTest, NeverReady) {
  RunnerFailure f = failure(fake("silent", "exit 3\n"), 0);
  EXPECT_EQ(f.kind(), FailureKind::Exited);
  EXPECT_NE(std::string(f.what()).find("exited with status 3 at 'start'"), std::string::npos) << f.what();
}

TEST_F(RunnerSessionTest, MalformedLines) {
  RunnerFailure notJson =
      failure(fake("garbled", std::string(kReady) + "read -r cmd\necho 'sample: 0.5'\nsleep 5\n"), 1);
  EXPECT_EQ(notJson.kind(), FailureKind::MalformedResult);
  EXPECT_NE(std::string(notJson.what()).find("'sample' was answered by a line that is not JSON: sample: 0.5"),
            std::string::npos)
      << notJson.what();
  RunnerFailure noK = failure(fake("nok", "echo '{\"ready\":true}'\nserve\n"), 0);
  EXPECT_EQ(noK.kind(), FailureKind::MalformedResult);
  EXPECT_NE(std::string(noK.what()).find("iterations_per_sample >= 1"), std::string::npos) << noK.what();
  RunnerFailure negative =
      failure(fake("negative", std::string(kReady) + "read -r cmd\necho '{\"sample_ms\":-1}'\nsleep 5\n"), 1);
  EXPECT_EQ(negative.kind(), FailureKind::MalformedResult);
  EXPECT_NE(std::string(negative.what()).find("sample_ms must be a finite number >= 0"), std::string::npos)
      << negative.what();
}

TEST_F(RunnerSessionTest, ReportedError) {
  RunnerFailure f = failure(
      fake("err", std::string(kReady) + "read -r cmd\necho '{\"error\":\"inference failed for m\"}'\nexit 1\n"), 1);
  EXPECT_EQ(f.kind(), FailureKind::ReportedError);
  EXPECT_STREQ(f.what(), "runner ext:err: reported an error: inference failed for m");
}

TEST_F(RunnerSessionTest, ServeNeedsProtocol3AndTheServePlaceholder) {
  RunnerSpec spec = fake("good", std::string(kReady) + "serve\n");
  RunnerRequest old = request();
  old.protocol = 2;
  EXPECT_THROW(buildArgv(spec, old), RunnerConfigError);
  RunnerRequest plain = request();
  plain.serve = false;
  auto argv = buildArgv(spec, plain);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--serve"), 0);
  spec.argv.erase(std::find(spec.argv.begin(), spec.argv.end(), "{serve}"));
  EXPECT_FALSE(passesServe(spec));
  EXPECT_THROW(buildArgv(spec, request()), RunnerConfigError);
}

TEST(RunnerConfigServe, ServeMustBeAWholeElementAndNeedsAVersionCommand) {
  auto error = [](const std::string& argv, const std::string& extra) {
    try {
      RunnerConfig::parse(R"({"runners":{"r":{"argv":[)" + argv + "]" + extra + "}}}", "c.json");
    } catch (const RunnerConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string base = R"("r.sh","{model}","{output_dir}","{inputs}")";
  EXPECT_NE(error(base + R"(,"--mode={serve}")", R"(,"protocol_version_argv":["v"])")
                .find("{serve} expands to --serve or to nothing and must be a whole argv element"),
            std::string::npos);
  EXPECT_NE(error(base + R"(,"{serve}")", "").find("argv passes {serve} (protocol 3) but no \"protocol_version_argv\""),
            std::string::npos);
  EXPECT_EQ(error(base + R"(,"{serve}")", R"(,"protocol_version_argv":["v"])"), "accepted");
}
