// `dynqual db init|info|query|export|import|merge`: thin argument parsing over dynqual_store
// (harness/include/dynqual/store/DbTool.h).
#include "Commands.h"

#include "dynqual/store/DbTool.h"

#include <fstream>
#include <iostream>

namespace dynqual::cli {

namespace {

/// Runs one db subcommand, turning any error into one line on stderr and exit code 2.
void guarded(const std::string& name, const std::function<void()>& fn) {
  try {
    fn();
    setExitCode(0);
  } catch (const std::exception& e) {
    std::cerr << "dynqual db " << name << ": " << e.what() << "\n";
    setExitCode(2);
  }
}

} // namespace

void addDbCommand(CLI::App& app) {
  auto* db = app.add_subcommand("db", "Create, inspect, query, export, import and merge a results database.\n"
                                      "The database defaults to $DYNQUAL_DB, else ./dynqual.db.");
  db->require_subcommand(1);
  // `dynqual db info --db FILE` reads as naturally as `dynqual db --db FILE info`.
  db->fallthrough();
  auto path = std::make_shared<std::string>(store::defaultDbPath().string());
  db->add_option("--db", *path, "database file (default: $DYNQUAL_DB, else ./dynqual.db)")->default_str(*path);

  auto* init = db->add_subcommand("init", "create the database (or migrate it to the current schema)");
  init->callback([path] { guarded("init", [&] { store::dbInit(*path, std::cout); }); });

  auto infoFormat = std::make_shared<std::string>("text");
  auto* info = db->add_subcommand("info", "schema version, row counts and the list of runs");
  info->add_option("--format", *infoFormat, "text (one line per run) or json (one document)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  info->callback([path, infoFormat] { guarded("info", [&] { store::dbInfo(*path, *infoFormat, std::cout); }); });

  auto sql = std::make_shared<std::string>();
  auto queryFormat = std::make_shared<std::string>("text");
  auto* query = db->add_subcommand("query", "run one read-only SQL statement and print the rows");
  query->add_option("sql", *sql, "the SQL statement")->required();
  query->add_option("--format", *queryFormat, "text (tab-separated with a header line) or json (array of objects)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  query->callback(
      [path, sql, queryFormat] { guarded("query", [&] { store::dbQuery(*path, *sql, *queryFormat, std::cout); }); });

  auto runs = std::make_shared<std::vector<std::string>>();
  auto exportOut = std::make_shared<std::string>("-");
  auto* exp = db->add_subcommand("export", "write runs as a dynqual-store JSON document");
  exp->add_option("runs", *runs, "runs to export: latest, ids or key prefixes (default: all)");
  exp->add_option("-o,--output", *exportOut, "output file, - for stdout")->capture_default_str();
  exp->callback([path, runs, exportOut] {
    guarded("export", [&] {
      std::ofstream file;
      if (*exportOut != "-") {
        file.open(*exportOut);
        if (!file)
          throw std::runtime_error(*exportOut + ": cannot write; check that the folder exists and is writable");
      }
      store::dbExport(*path, *runs, *exportOut == "-" ? std::cout : file);
    });
  });

  auto files = std::make_shared<std::vector<std::string>>();
  auto* imp = db->add_subcommand("import", "add runs from dynqual-store JSON documents (- for stdin)");
  imp->add_option("files", *files, "JSON files")->required();
  imp->callback([path, files] { guarded("import", [&] { store::dbImport(*path, *files, std::cin, std::cout); }); });

  auto shards = std::make_shared<std::vector<std::string>>();
  auto* merge = db->add_subcommand("merge", "fold shard databases into this one without duplicates");
  merge->add_option("shards", *shards, "shard database files")->required()->check(CLI::ExistingFile);
  merge->callback([path, shards] {
    guarded("merge", [&] {
      store::dbMerge(*path, std::vector<std::filesystem::path>(shards->begin(), shards->end()), std::cout);
    });
  });
}

} // namespace dynqual::cli
