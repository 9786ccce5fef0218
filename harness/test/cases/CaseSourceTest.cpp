// cases::chooseBindings: each command's policy takes the bindings its docs name, in
// onnxio::makeBindings' order (ones, zero, asymmetric, larger, then random).
#include "dynqual/cases/CaseSource.h"

#include <gtest/gtest.h>

#include <set>

using namespace dynqual;

namespace {

std::vector<std::string> kinds(const std::vector<onnxio::NamedBinding>& bs) {
  std::vector<std::string> k;
  for (const auto& b : bs)
    k.push_back(b.kind);
  return k;
}

// x[n, 4], y[m]: two dynamic dims.
std::vector<onnxio::ValueSpec> dynamicSpecs() {
  return {{"x", DType::Float, {onnxio::kDynamicDim, 4}, {"n", ""}}, {"y", DType::Float, {onnxio::kDynamicDim}, {"m"}}};
}

std::vector<onnxio::ValueSpec> staticSpecs() {
  return {{"x", DType::Float, {2, 4}, {"", ""}}};
}

} // namespace

TEST(CaseSource, RunTakesEveryBindingItAsksForTheZeroOneIncluded) {
  auto b = cases::chooseBindings(dynamicSpecs(), {}, 1, cases::runPolicy(4));
  EXPECT_EQ(kinds(b), (std::vector<std::string>{"ones", "zero", "asymmetric", "larger"}));
  EXPECT_TRUE(cases::chooseBindings(staticSpecs(), {}, 1, cases::runPolicy(4)).empty());
}

TEST(CaseSource, AbTakesTheFirstTwoNonZeroBindingsOrOneStaticBinding) {
  auto b = cases::chooseBindings(dynamicSpecs(), {}, 1, cases::abPolicy());
  EXPECT_EQ(kinds(b), (std::vector<std::string>{"ones", "asymmetric"}));
  auto s = cases::chooseBindings(staticSpecs(), {}, 1, cases::abPolicy());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, "static");
  EXPECT_EQ(s[0].description, "static shapes");
}

TEST(CaseSource, TheFuzzerTakesKNonZeroBindingsOrOneStaticBinding) {
  auto b = cases::chooseBindings(dynamicSpecs(), {}, 7, cases::fuzzPolicy(3));
  EXPECT_EQ(kinds(b), (std::vector<std::string>{"ones", "asymmetric", "larger"}));
  auto s = cases::chooseBindings(staticSpecs(), {}, 7, cases::fuzzPolicy(3));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].description, "static");
}

TEST(CaseSource, TheFuzzersFourthBindingPutsOneDimAloneAt1AndTheSeedPicksWhich) {
  // x[n, 4], y[m]: n and m. The larger value is 2 * traced 3 + 1 = 7.
  std::set<std::string> soloDims;
  for (uint64_t seed : {0ull, 1ull}) {
    auto b = cases::chooseBindings(dynamicSpecs(), {}, seed, cases::fuzzPolicy(4));
    ASSERT_EQ(kinds(b), (std::vector<std::string>{"ones", "asymmetric", "larger", "solo-one"})) << seed;
    const auto& values = b[3].binding.byLabel;
    ASSERT_EQ(values.size(), 2u);
    int ones = 0;
    for (const auto& [label, v] : values) {
      EXPECT_TRUE(v == 1 || v == 7) << label << "=" << v;
      if (v == 1) {
        ++ones;
        soloDims.insert(label);
      }
    }
    EXPECT_EQ(ones, 1) << b[3].description;
  }
  EXPECT_EQ(soloDims, (std::set<std::string>{"n", "m"}));
  // One dynamic dim: "ones" already puts it at 1, so the fourth binding stays random.
  std::vector<onnxio::ValueSpec> one = {{"x", DType::Float, {onnxio::kDynamicDim}, {"n"}}};
  EXPECT_EQ(cases::chooseBindings(one, {}, 0, cases::fuzzPolicy(4))[3].kind, "random");
}
