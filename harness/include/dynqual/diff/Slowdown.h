#pragma once
// Injected slowdowns of the gate's self-test (`--inject-slowdown MODEL=SPEC`, docs/commands/ab.md):
// the kinds of change a head can bring, each as busy work the runtime spins after timed runs.
#include <map>
#include <string>
#include <vector>

namespace dynqual::diff {

/// One injected change of a model's head arm, sized from the base arm's median sample M (ms) and
/// the scaled MAD S of its samples, both measured in one position before round 0:
///   Shift  "PCT" or "shift:PCT": every timed run of the head spins PCT % of M;
///   Tail   "tail:FRAC:PCT": each timed run of the head spins PCT % of M with probability FRAC,
///          drawn per run (an occasional stall; the mean moves by FRAC * PCT %);
///   Spread "spread:FACTOR": both arms spin W = S sqrt(3 (FACTOR^2 - 1)) per run on average, the
///          base exactly W, the head an amount drawn per sample uniformly from [0, 2 W]: the same
///          mean, and the head's samples spread FACTOR times as much as the base's
///          (sqrt(S^2 + W^2 / 3) = FACTOR S, W^2/3 the variance of the uniform draw).
struct SlowdownSpec {
  enum class Kind { Shift, Tail, Spread };
  Kind kind = Kind::Shift;
  double percent = 0;  ///< Shift, Tail: PCT (>= 0)
  double fraction = 1; ///< Tail: FRAC in (0, 1]
  double factor = 1;   ///< Spread: FACTOR (>= 1)
};

/// Parses SPEC as above. Throws std::invalid_argument naming the text and the accepted forms for
/// anything else (negative PCT, FRAC outside (0, 1], FACTOR < 1, trailing text).
SlowdownSpec parseSlowdownSpec(const std::string& text);

/// The canonical text of a spec: "shift:PCT", "tail:FRAC:PCT" or "spread:FACTOR" (parses back to it).
std::string slowdownSpecText(const SlowdownSpec& s);

/// The factor a spec multiplies the head's modelled device time by (docs/commands/ab.md,
/// "Decision metric"): 1 + PCT / 100 for Shift. Tail and Spread change how runs differ from each
/// other, and every run of a program has the same modelled time, so they have no modelled form:
/// throws std::invalid_argument saying so and what to use instead.
double modelledSlowdownFactor(const SlowdownSpec& s);

/// Busy work in microseconds given the base's median sample `medianMs` and the scaled MAD
/// `spreadMs` of its samples: per timed run of the head (Shift, Tail) or the mean per run of
/// both arms (Spread). Throws std::invalid_argument for a negative or non-finite input.
double slowdownBusyUs(const SlowdownSpec& s, double medianMs, double spreadMs);

} // namespace dynqual::diff
