#include "dynqual/diff/Slowdown.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace dynqual::diff {

namespace {

/// The whole of `text` as a finite number, else std::invalid_argument.
double number(const std::string& text, const std::string& spec) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v))
    throw std::invalid_argument("slowdown '" + spec + "': '" + text + "' is not a number");
  return v;
}

std::vector<std::string> fields(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t colon; (colon = text.find(':', start)) != std::string::npos; start = colon + 1)
    out.push_back(text.substr(start, colon - start));
  out.push_back(text.substr(start));
  return out;
}

} // namespace

SlowdownSpec parseSlowdownSpec(const std::string& text) {
  const std::string forms = "expected PCT, shift:PCT, tail:FRAC:PCT or spread:FACTOR";
  auto f = fields(text);
  SlowdownSpec s;
  if (f.size() == 1 || (f.size() == 2 && f[0] == "shift")) {
    s.percent = number(f.back(), text);
  } else if (f.size() == 3 && f[0] == "tail") {
    s.kind = SlowdownSpec::Kind::Tail;
    s.fraction = number(f[1], text);
    s.percent = number(f[2], text);
    if (!(s.fraction > 0 && s.fraction <= 1))
      throw std::invalid_argument("slowdown '" + text + "': FRAC must be in (0, 1]");
  } else if (f.size() == 2 && f[0] == "spread") {
    s.kind = SlowdownSpec::Kind::Spread;
    s.factor = number(f[1], text);
    if (!(s.factor >= 1))
      throw std::invalid_argument("slowdown '" + text + "': FACTOR must be >= 1");
  } else {
    throw std::invalid_argument("slowdown '" + text + "': " + forms);
  }
  if (s.percent < 0)
    throw std::invalid_argument("slowdown '" + text + "': PCT must be >= 0");
  return s;
}

std::string slowdownSpecText(const SlowdownSpec& s) {
  switch (s.kind) {
  case SlowdownSpec::Kind::Shift:
    return fmt::format("shift:{}", s.percent);
  case SlowdownSpec::Kind::Tail:
    return fmt::format("tail:{}:{}", s.fraction, s.percent);
  case SlowdownSpec::Kind::Spread:
    return fmt::format("spread:{}", s.factor);
  }
  return "";
}

double slowdownBusyUs(const SlowdownSpec& s, double medianMs, double spreadMs) {
  if (!(medianMs >= 0) || !(spreadMs >= 0) || !std::isfinite(medianMs) || !std::isfinite(spreadMs))
    throw std::invalid_argument(
        fmt::format("slowdown sizing: median {} ms and spread {} ms must be finite and >= 0", medianMs, spreadMs));
  if (s.kind == SlowdownSpec::Kind::Spread)
    return spreadMs * std::sqrt(3 * (s.factor * s.factor - 1)) * 1000.0;
  return s.percent / 100.0 * medianMs * 1000.0;
}

} // namespace dynqual::diff

namespace dynqual::diff {

double modelledSlowdownFactor(const SlowdownSpec& s) {
  if (s.kind == SlowdownSpec::Kind::Shift)
    return 1 + s.percent / 100;
  throw std::invalid_argument(
      "unsupported: '" + slowdownSpecText(s) +
      "' changes how runs differ from each other, and every run of a program has the same "
      "modelled device time; inject shift:PCT, or decide on the measured time (--metric measured)");
}

} // namespace dynqual::diff
