#include "Tables.h"

#include <cmath>

namespace dynqual::reports {

using namespace detail;
using nlohmann::json;

namespace {

json opt(std::optional<double> v) {
  return v && !std::isnan(*v) ? json(*v) : json(nullptr);
}

json pairJson(const Pair& p, bool hasBase) {
  if (!hasBase)
    return opt(p.head);
  json change = nullptr;
  if (p.head && p.base && *p.base != 0)
    change = (*p.head - *p.base) / *p.base * 100;
  return {{"base", opt(p.base)}, {"head", opt(p.head)}, {"change_percent", change}};
}

} // namespace

nlohmann::json renderJson(const ReportInput& in) {
  Tables t = buildTables(in);
  json acc = json::array();
  for (const auto& a : t.accuracy)
    acc.push_back({{"model", a.label},
                   {"comparison", a.comparison},
                   {"combined_l2", opt(a.l2)},
                   {"relative_l2", opt(a.relL2)},
                   {"cosine", opt(a.cosine)},
                   {"total_elements", a.measured ? json(a.elements) : json(nullptr)},
                   {"skipped_nan_inf", a.measured ? json(a.nanInf) : json(nullptr)},
                   {"verdict", a.verdict},
                   {"error", a.error},
                   {"failed", a.failed}});
  json perf = json::array();
  for (const auto& p : t.performance) {
    json row = {{"model", p.label}};
    for (size_t i = 0; i < p.cells.size(); ++i)
      row[perfColumns()[i].metric] = pairJson(p.cells[i], t.hasBase);
    perf.push_back(row);
  }
  json counters = json::array();
  for (const auto& c : t.counters) {
    json row = {{"model", c.label}};
    for (size_t i = 0; i < c.cells.size(); ++i)
      row[counterColumns()[i].metric] = pairJson(c.cells[i], t.hasBase);
    counters.push_back(row);
  }
  json gen = json::array();
  for (const auto& g : t.generation) {
    json row = {{"model", g.label}};
    for (size_t i = 0; i < g.params.size(); ++i)
      row[genParams()[i].second] = g.params[i];
    for (size_t i = 0; i < g.cells.size(); ++i)
      row[genColumns()[i].metric] = opt(g.cells[i]);
    gen.push_back(row);
  }
  json sizes = json::array();
  for (const auto& s : t.sizes)
    sizes.push_back({{"file", s.file}, {"this_mb", opt(s.thisMB)}, {"base_mb", opt(s.baseMB)}});
  json footer = json::object();
  for (const auto& [k, v] : t.footer)
    footer[k] = v;
  return {{"format", "dynqual-report"},
          {"version", 1},
          {"title", t.title},
          {"run", {{"id", in.head.id}, {"key", in.head.key}, {"status", in.head.status}}},
          {"base", in.base ? json{{"id", in.base->id}, {"key", in.base->key}} : json(nullptr)},
          {"warning", t.warning},
          {"failures", t.failures},
          {"result", resultLine(t)},
          {"threshold", t.threshold},
          {"accuracy", acc},
          {"performance", perf},
          {"counters", counters},
          {"generation", gen},
          {"binary_sizes", sizes},
          {"footer", footer}};
}

} // namespace dynqual::reports
