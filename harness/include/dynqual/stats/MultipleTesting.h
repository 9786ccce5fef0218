#pragma once
// Multiple-testing adjustments of a family of p-values (docs/metrics/multiple-testing.md).
//
// Sources: Holm (1979), "A simple sequentially rejective multiple test procedure", Scand. J.
// Statist. 6; Benjamini & Hochberg (1995), "Controlling the false discovery rate", JRSS B 57;
// Bonferroni (Dunn 1961). The adjusted values are those of R's p.adjust.
#include <vector>

namespace dynqual::stats {

/// Bonferroni adjusted p-values min(1, m p_i), same order as `p` (m = p.size()).
/// An empty family gives an empty result. Throws std::invalid_argument for a p-value outside [0, 1] or NaN.
std::vector<double> bonferroniAdjust(const std::vector<double>& p);

/// Holm step-down adjusted p-values, same order as `p`. With p_(1) <= ... <= p_(m) sorted:
///   adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)).
/// Rejecting H_i when adj_i < alpha is Holm's procedure at family-wise error rate alpha.
/// Errors as bonferroniAdjust.
std::vector<double> holmAdjust(const std::vector<double>& p);

/// Benjamini-Hochberg adjusted p-values (false discovery rate), same order as `p`:
///   adj_(i) = min_{j >= i} min(1, m p_(j) / j).
/// Errors as bonferroniAdjust.
std::vector<double> benjaminiHochbergAdjust(const std::vector<double>& p);

/// Per-comparison significance levels that carry Holm's procedure at family level `alpha` into
/// a rule of the form "p_i < alpha_i" (the rule of decide()): for the comparison at sorted
/// position i (ties kept in input order), alpha_i = alpha / (m - i + 1) while Holm still rejects
/// there (holmAdjust(p)_i < alpha), otherwise alpha_i = min(alpha / (m - i + 1), p_i), so that
/// p_i < alpha_i holds exactly for the hypotheses Holm rejects. The same alpha_i sets the level
/// 1 - alpha_i of that comparison's interval. Same order as `p`.
/// Throws std::invalid_argument for a bad p-value (as bonferroniAdjust) or alpha outside (0, 1).
std::vector<double> holmAlphas(const std::vector<double>& p, double alpha);

} // namespace dynqual::stats
