#pragma once
// Wilcoxon signed-rank test of a sample of paired differences (docs/metrics/wilcoxon-signed-rank.md).
//
// Source: Hollander, Wolfe & Chicken, Nonparametric Statistical Methods, 3rd ed. (2014), ch. 3.1
// (procedure, midranks, tie-corrected variance); Wilcoxon (1945) for dropping zero differences,
// Pratt (1959) for the alternative of ranking them.
#include <memory>
#include <vector>

namespace dynqual::stats {

/// Largest number of non-zero differences for which p-values come from the exact permutation
/// distribution; above it the normal approximation is used.
inline constexpr int kSignedRankExactMaxN = 50;

/// How a p-value (or a critical value) was obtained.
enum class PValueMethod { Exact, NormalApprox };

/// Exact null distribution of the signed-rank statistic for given ranks: under H0 every sign
/// pattern of the n ranks is equally likely (probability 2^-n), and W+ is the sum of the ranks
/// given a + sign. Ranks are held doubled (2 * midrank is an integer), so with ties the
/// distribution is still exact. Built by the recursion
///   P_i(s) = (P_{i-1}(s) + P_{i-1}(s - a_i)) / 2,  P_0(0) = 1,
/// over the doubled ranks a_i, in O(n * sum a_i) time.
class SignedRankNull {
public:
  /// `doubledRanks`: 2 * rank of each non-zero |d| (positive integers). Throws
  /// std::invalid_argument for a non-positive entry.
  explicit SignedRankNull(const std::vector<int>& doubledRanks);
  /// The distribution without ties for n = 0, 1, 2, ... (ranks 1..n), cached per n and shared.
  /// Thread-safe. Throws std::invalid_argument for n < 0.
  static std::shared_ptr<const SignedRankNull> noTies(int n);

  int n() const { return n_; }
  /// Largest value of 2 W+ (2 * sum of the ranks = n (n + 1) for midranks).
  int maxDoubled() const { return static_cast<int>(pmf_.size()) - 1; }
  /// P(2 W+ == s2); 0 outside [0, maxDoubled()].
  double pmf(int s2) const;
  /// P(2 W+ <= s2).
  double cdf(int s2) const;
  /// P(2 W+ >= s2).
  double sf(int s2) const;

private:
  int n_ = 0;
  std::vector<double> pmf_, cdf_;
};

/// Result of signedRankTest. W+ is in rank units (may be a half-integer with ties).
struct SignedRankResult {
  double wPlus = 0;     ///< sum of the (mid)ranks of |d_i| over the d_i > 0
  int n = 0;            ///< non-zero differences used
  int zerosDropped = 0; ///< differences exactly 0, dropped (Wilcoxon's method)
  bool ties = false;    ///< some non-zero |d_i| were tied (midranks used)
  double pTwoSided = 1; ///< min(1, 2 min(pGreater, pLess))
  double pGreater = 1;  ///< P(W+ >= observed): alternative "location of d > 0"
  double pLess = 1;     ///< P(W+ <= observed): alternative "location of d < 0"
  PValueMethod method = PValueMethod::Exact;
};

/// Wilcoxon signed-rank test of H0 "d is symmetric about 0" on the differences `d` (one value per
/// pair; any unit). Zeros (d_i == 0 exactly) are dropped before ranking (Wilcoxon's method; Pratt's
/// alternative ranks them and discards their ranks). |d_i| are ranked ascending with midranks
/// for exact ties. For n <= exactMaxN the p-values are exact: tail sums of the permutation
/// distribution of W+ given the midranks (SignedRankNull). Above it, the normal approximation
///   E W+ = n (n + 1) / 4,  Var W+ = n (n + 1)(2n + 1) / 24 - sum_g (t_g^3 - t_g) / 48
/// (t_g: size of tie group g) with continuity correction 0.5 toward the mean:
///   pGreater = 1 - Phi((W+ - E - 0.5) / sd),  pLess = Phi((W+ - E + 0.5) / sd).
/// With no non-zero difference the result has n = 0 and every p-value 1.
/// Throws std::invalid_argument for an empty vector, a non-finite element or exactMaxN < 0.
SignedRankResult signedRankTest(const std::vector<double>& d, int exactMaxN = kSignedRankExactMaxN);

} // namespace dynqual::stats
