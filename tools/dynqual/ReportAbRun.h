#pragma once
// `dynqual report RUN` for the run kinds it knows: one function per kind, so another kind is one
// more function and one more line in ReportCommand.cpp's dispatch.
#include "dynqual/reports/Report.h"
#include "dynqual/store/Store.h"

#include <ostream>

namespace dynqual::cli {

/// Report of an ab, gate or calibrate run in req.format (md, json, html): the result rebuilt from
/// the store (rebuildAbRun, the comparisons as recorded) through the same renderers as `dynqual
/// ab` and `gate --reanalyze`. Returns the run's exit code (diff::exitCodeFor: 0 pass, 1
/// regression or accuracy failure, 3 inconclusive, 4 infrastructure error). An unfinished run
/// without a result gets an "UNFINISHED" headline in req.format and returns 2. Throws
/// std::runtime_error (exit 2) when the headline cannot be computed: a run recorded before
/// outcomes were stored, a record of a newer dynqual, a stored exit code its records do not give,
/// or --base given.
int reportAbRun(const reports::ReportRequest& req, store::Store& db, int64_t runId, std::ostream& out);

} // namespace dynqual::cli
