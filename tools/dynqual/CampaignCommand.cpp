// `dynqual campaign submit --slurm`: a nightly fuzz campaign as a Slurm job array (one shard per
// task, each into its own database on local disk) plus a merge job that runs after every task
// has ended (afterany), merges the shards, triages buckets and writes the report
// (docs/commands/campaign.md).
#include "Commands.h"
#include "NightlyCommands.h"

#include "dynqual/exec/Executor.h"
#include "dynqual/fuzz/Campaign.h"
#include "dynqual/process/Process.h"
#include "dynqual/store/Fingerprint.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace fs = std::filesystem;

namespace dynqual::cli {

namespace {

struct SubmitOpts {
  bool slurm = false, dryRun = false;
  int tasks = 0, maxParallel = 0, jobs = 1, gpusPerTask = 0;
  std::string time = "8h", partition, out, night, fuzzTime, inject, store, account;
  int64_t cases = -1;
  uint64_t seed = 0;
  std::vector<std::string> variants;
};

/// Single-quoted for bash.
std::string q(const std::string& s) {
  std::string o = "'";
  for (char c : s)
    o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

/// "8h" -> "08:00:00" (Slurm's --time), from parseDuration's seconds, rounded up to a minute.
std::string slurmTime(const std::string& text) {
  long s = static_cast<long>(fuzz::parseDuration(text) + 59) / 60 * 60;
  return fmt::format("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

/// The job-array script: shard $SLURM_ARRAY_TASK_ID of N into a database on local disk, copied
/// back into OUT/shard-I/ when the task ends, whether it finished, failed or was cancelled.
std::string arrayScript(const SubmitOpts& o, const fs::path& out, const std::string& dynqual) {
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=dq-fuzz-" + o.night + "\n";
  s += fmt::format("#SBATCH --array=0-{}{}\n", o.tasks - 1, o.maxParallel > 0 ? fmt::format("%{}", o.maxParallel) : "");
  s += "#SBATCH --time=" + slurmTime(o.time) + "\n";
  s += fmt::format("#SBATCH --cpus-per-task={}\n", o.jobs);
  s += "#SBATCH --output=" + (out / "logs" / "shard-%a.out").string() + "\n";
  if (!o.partition.empty())
    s += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.account.empty())
    s += "#SBATCH --account=" + o.account + "\n";
  if (o.gpusPerTask > 0)
    s += fmt::format("#SBATCH --gpus-per-task={}\n", o.gpusPerTask);
  s += "# Written by dynqual campaign submit. Each task writes only its own SQLite file, on local disk\n"
       "# (SQLite locking is unsafe on network filesystems), and copies it to the shared folder at the\n"
       "# end; the minimized finding folders are plain files written once, straight to the shared folder.\n";
  s += "set -uo pipefail\n";
  s += "i=$SLURM_ARRAY_TASK_ID\n";
  s += "out=" + q(out.string()) + "/shard-$i\n";
  s += "local=\"${SLURM_TMPDIR:-${TMPDIR:-/tmp}}/dq-fuzz-${SLURM_ARRAY_JOB_ID}-$i\"\n";
  // Job ids start again at 1 on a new cluster, so a folder of that name may be another campaign's.
  s += "rm -rf \"$local\"\n";
  s += "mkdir -p \"$out/corpus\" \"$local\"\n";
  s += "# A rerun of this task (after a cancel) resumes from the copy of its database.\n";
  s += "if [ -f \"$out/shard.db\" ]; then\n"
       "  cp \"$out/shard.db\" \"$local/shard.db\"\n"
       "  [ -f \"$out/shard.db-wal\" ] && cp \"$out/shard.db-wal\" \"$local/shard.db-wal\"\n"
       "fi\n";
  s += "copy_back() {\n"
       "  # The database and its WAL together: a killed shard's last commits may be in the WAL.\n"
       "  for f in shard.db shard.db-wal; do\n"
       "    if [ -f \"$local/$f\" ]; then cp \"$local/$f\" \"$out/$f.part\" && mv \"$out/$f.part\" \"$out/$f\";\n"
       "    else rm -f \"$out/$f\"; fi\n"
       "  done\n"
       "}\n";
  s += "pid=\n";
  s += "trap '[ -n \"$pid\" ] && kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; copy_back; exit 143' TERM\n";
  s += q(dynqual) + " fuzz --shard \"$i/" + std::to_string(o.tasks) + "\" --seed " + std::to_string(o.seed) +
       " --night " + q(o.night) + " --jobs " + std::to_string(o.jobs) +
       (o.cases >= 0 ? " --cases " + std::to_string(o.cases) : " --time " + q(o.fuzzTime)) +
       (o.inject.empty() ? "" : " --inject " + q(o.inject));
  for (const auto& v : o.variants)
    s += " --variant " + q(v);
  s += " --db \"$local/shard.db\" --corpus-out \"$out/corpus\" --resume &\n";
  s += "pid=$!\nwait $pid\nrc=$?\ncopy_back\n";
  s += "# fuzz exits 1 for new findings: the campaign worked; only 2 and above are failures.\n";
  s += "[ $rc -le 1 ] && exit 0 || exit $rc\n";
  return s;
}

/// The merge job: shards into OUT/night.db (and --store), then triage and the report.
std::string mergeScript(const SubmitOpts& o, const fs::path& out, const std::string& dynqual) {
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=dq-merge-" + o.night + "\n";
  s += "#SBATCH --time=01:00:00\n";
  s += "#SBATCH --output=" + (out / "logs" / "merge.out").string() + "\n";
  if (!o.partition.empty())
    s += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.account.empty())
    s += "#SBATCH --account=" + o.account + "\n";
  s += "# Written by dynqual campaign submit; runs after every array task ended (afterany). Only this\n"
       "# job writes the merged database. Merging is idempotent: rerunning this script adds nothing.\n";
  s += "set -uo pipefail\n";
  s += "out=" + q(out.string()) + "\n";
  s += "dq=" + q(dynqual) + "\n";
  s += "shards=()\nfor i in $(seq 0 " + std::to_string(o.tasks - 1) +
       "); do\n  if [ -f \"$out/shard-$i/shard.db\" ]; then shards+=(\"$out/shard-$i/shard.db\");\n"
       "  else echo \"shard $i: no database (the task never started?); rerun it, then this merge\" >&2; fi\n"
       "done\n";
  s += "[ ${#shards[@]} -gt 0 ] || { echo 'no shard database to merge' >&2; exit 4; }\n";
  std::string db = o.store.empty() ? "$out/night.db" : o.store;
  s += "db=" + (o.store.empty() ? std::string("\"$out/night.db\"") : q(o.store)) + "\n";
  s += "\"$dq\" db merge --db \"$db\" \"${shards[@]}\" || exit 4\n";
  if (!o.store.empty())
    s += "\"$dq\" db merge --db \"$out/night.db\" \"${shards[@]}\" || exit 4\n";
  s += "\"$dq\" fuzz triage --db \"$db\" --night " + q(o.night) + " --format json -o \"$out/triage.json\" || exit 4\n";
  s += "\"$dq\" fuzz triage --db \"$db\" --night " + q(o.night) + " --format md -o \"$out/triage.md\" || exit 4\n";
  s += "\"$dq\" report --campaign " + q(o.night) + " --db \"$db\" --format md -o \"$out/report.md\" || exit 4\n";
  s += "\"$dq\" report --campaign " + q(o.night) + " --db \"$db\" --format html -o \"$out/report.html\" || exit 4\n";
  s += "touch \"$out/merge.done\"\n";
  return s;
}

void writeScript(const fs::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
  if (!f)
    throw std::runtime_error(p.string() + ": cannot write; check that --out is writable");
  f.close();
  ::chmod(p.c_str(), 0755);
}

/// `sbatch --parsable ARGS`: the job id. Throws naming sbatch's error.
std::string sbatch(const std::vector<std::string>& args) {
  // The child layer runs a path, not a name: look sbatch up in $PATH.
  std::string exe = "sbatch";
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (size_t at = 0; at <= p.size();) {
      size_t colon = p.find(':', at);
      fs::path cand = fs::path(p.substr(at, colon == std::string::npos ? std::string::npos : colon - at)) / "sbatch";
      if (::access(cand.c_str(), X_OK) == 0) {
        exe = cand.string();
        break;
      }
      if (colon == std::string::npos)
        break;
      at = colon + 1;
    }
  }
  std::vector<std::string> argv = {exe, "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  process::ProcessResult r = process::runChild(argv, 120);
  if (!r.started)
    throw std::runtime_error("cannot run sbatch (" + r.error + "); is Slurm's client installed (slurm-client)?");
  if (r.exitCode != 0)
    throw std::runtime_error("sbatch " + args.back() + " failed: " + r.err);
  std::string id = r.out.substr(0, r.out.find_first_of(";\n"));
  return id;
}

} // namespace

void addCampaignCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("campaign", "Nightly fuzz campaigns on a cluster scheduler.");
  cmd->require_subcommand(1);
  auto* submit = cmd->add_subcommand(
      "submit", "Write and submit a Slurm job array of fuzz shards (one per task, each into its own database\n"
                "on local disk, copied to --out) plus a merge job that runs after every task ended: it merges\n"
                "the shards, triages buckets and writes the report. Prints the job ids. Exit: 0 submitted,\n"
                "2 usage, 4 sbatch failed.");
  auto o = std::make_shared<SubmitOpts>();
  submit->add_flag("--slurm", o->slurm, "submit to Slurm (the only scheduler supported)")->required();
  submit->add_option("--tasks", o->tasks, "array tasks = shards")->required()->check(CLI::PositiveNumber);
  submit->add_option("--out", o->out, "shared folder for shard databases, logs, the merged database and report")
      ->required();
  submit->add_option("--time", o->time, "time limit per task (Slurm --time), e.g. 8h")->capture_default_str();
  submit->add_option("--fuzz-time", o->fuzzTime,
                     "fuzzing time per shard (default: --time less 10 minutes for the copy back, at least 1m)");
  submit->add_option("--cases", o->cases, "a fixed number of cases per shard instead of a time");
  submit->add_option("--partition", o->partition, "Slurm partition");
  submit->add_option("--account", o->account, "Slurm account");
  submit->add_option("--gpus-per-task", o->gpusPerTask, "GPUs per task (for @hip variants)");
  submit->add_option("--max-parallel", o->maxParallel, "at most K tasks at a time (--array=0-(N-1)%K)");
  submit->add_option("--jobs", o->jobs, "fuzz workers per task (and --cpus-per-task)")->capture_default_str();
  submit->add_option("--seed", o->seed, "campaign seed (default: from the night, so each night differs)");
  submit->add_option("--night", o->night, "night label (default: today, UTC)");
  submit->add_option("--inject", o->inject, "inject knob(s) A[,B] (a check of the pipeline, not a nightly)");
  submit->add_option("--variant", o->variants, "variants, as for dynqual fuzz");
  submit->add_option("--store", o->store,
                     "also merge into this long-lived store (history across nights); the "
                     "report and triage are then read from it");
  submit->add_flag("--dry-run", o->dryRun, "write and print the scripts, submit nothing");
  submit->callback([o] {
    try {
      if (o->jobs < 1)
        throw UsageError("--jobs must be at least 1");
      if (o->night.empty())
        o->night = store::utcNow().substr(0, 10);
      if (o->seed == 0) {
        // A different campaign every night, the same one when a night is resubmitted.
        uint64_t h = 1469598103934665603ull;
        for (char c : o->night)
          h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        o->seed = h % 1000000007ull + 1;
      }
      if (o->cases < 0 && o->fuzzTime.empty()) {
        double total = fuzz::parseDuration(o->time);
        o->fuzzTime = fmt::format("{}s", static_cast<long>(std::max(60.0, total - 600)));
      }
      slurmTime(o->time); // a bad --time fails here, before anything is written
      fs::path out = fs::absolute(o->out);
      fs::create_directories(out / "logs");
      std::string dynqual = (exec::selfBinDir() / "dynqual").string();
      writeScript(out / "campaign.sbatch", arrayScript(*o, out, dynqual));
      writeScript(out / "merge.sbatch", mergeScript(*o, out, dynqual));
      if (o->dryRun) {
        std::cout << "# " << (out / "campaign.sbatch").string() << "\n" << arrayScript(*o, out, dynqual) << "\n";
        std::cout << "# " << (out / "merge.sbatch").string() << " (sbatch --dependency=afterany:ARRAY_JOB_ID)\n"
                  << mergeScript(*o, out, dynqual);
        setExitCode(0);
        return;
      }
      std::string array = sbatch({(out / "campaign.sbatch").string()});
      std::string merge = sbatch({"--dependency=afterany:" + array, (out / "merge.sbatch").string()});
      std::ofstream(out / "jobs.txt") << "array " << array << "\nmerge " << merge << "\n";
      std::cout << fmt::format("submitted night {}: array job {} ({} tasks), merge job {} (afterany:{})\n", o->night,
                               array, o->tasks, merge, array);
      std::cout << fmt::format("report when done: {}\n", (out / "report.html").string());
      setExitCode(0);
    } catch (const UsageError& e) {
      std::cerr << "dynqual campaign submit: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::invalid_argument& e) {
      std::cerr << "dynqual campaign submit: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::exception& e) {
      std::cerr << "dynqual campaign submit: " << e.what() << "\n";
      setExitCode(4);
    }
  });
}

} // namespace dynqual::cli
