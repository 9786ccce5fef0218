#include "dynqual/onnx/ShapeBindings.h"

#include <map>
#include <random>

namespace dynqual::onnxio {

std::string declaredOutputContradiction(const std::vector<onnxio::ValueSpec>& declared,
                                        const std::vector<std::vector<int64_t>>& computed) {
  for (std::size_t i = 0; i < declared.size() && i < computed.size(); ++i) {
    const auto& want = declared[i].dims;
    const auto& got = computed[i];
    std::string where;
    if (want.size() != got.size()) {
      where = "rank " + std::to_string(got.size()) + " for declared rank " + std::to_string(want.size());
    } else {
      for (std::size_t a = 0; a < want.size() && where.empty(); ++a)
        if (want[a] != onnxio::kDynamicDim && want[a] != got[a])
          where = "axis " + std::to_string(a);
    }
    if (where.empty())
      continue;
    std::string decl = "[";
    for (std::size_t a = 0; a < want.size(); ++a)
      decl += (a ? ", " : "") + (want[a] == onnxio::kDynamicDim ? std::string("?") : std::to_string(want[a]));
    return "output '" + declared[i].name + "' is declared " + decl + "] but the reference computes " +
           shapeToString(got) + " (" + where + ")";
  }
  return "";
}

namespace {

/// A dynamic dim, identified by its label or, when unnamed, by (input, axis).
struct DynamicDim {
  std::string label;
  std::size_t input = 0, axis = 0;
  int64_t traced = 3;
  std::string name() const { return label.empty() ? "in" + std::to_string(input) + "." + std::to_string(axis) : label; }
};

std::vector<DynamicDim> dynamicDims(const std::vector<onnxio::ValueSpec>& specs,
                                    const std::vector<std::vector<int64_t>>& traced) {
  std::vector<DynamicDim> dims;
  std::map<std::string, bool> seen;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    for (std::size_t a = 0; a < specs[i].dims.size(); ++a) {
      if (specs[i].dims[a] != onnxio::kDynamicDim)
        continue;
      const std::string& label = a < specs[i].dimLabels.size() ? specs[i].dimLabels[a] : std::string();
      if (!label.empty() && seen[label])
        continue;
      if (!label.empty())
        seen[label] = true;
      DynamicDim d{label, i, a, 3};
      if (i < traced.size() && a < traced[i].size())
        d.traced = traced[i][a];
      dims.push_back(d);
    }
  }
  return dims;
}

NamedBinding makeBinding(const std::string& kind, const std::vector<DynamicDim>& dims,
                         const std::vector<int64_t>& values) {
  NamedBinding nb{kind, "", {}};
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (dims[k].label.empty())
      nb.binding.byPosition[{dims[k].input, dims[k].axis}] = values[k];
    else
      nb.binding.byLabel[dims[k].label] = values[k];
    nb.description += (k ? " " : "") + dims[k].name() + "=" + std::to_string(values[k]);
  }
  return nb;
}

} // namespace

std::vector<NamedBinding> zeroAlternatives(const std::vector<onnxio::ValueSpec>& specs,
                                           const std::vector<std::vector<int64_t>>& traced) {
  auto dims = dynamicDims(specs, traced);
  std::vector<NamedBinding> out;
  for (std::size_t z = 0; z < dims.size(); ++z) {
    std::vector<int64_t> values;
    for (std::size_t k = 0; k < dims.size(); ++k)
      values.push_back(k == z ? 0 : std::max<int64_t>(dims[k].traced, 1));
    out.push_back(makeBinding("zero", dims, values));
  }
  return out;
}

std::vector<NamedBinding> soloOneBindings(const std::vector<onnxio::ValueSpec>& specs,
                                          const std::vector<std::vector<int64_t>>& traced) {
  auto dims = dynamicDims(specs, traced);
  std::vector<NamedBinding> out;
  if (dims.size() < 2)
    return out;
  for (std::size_t z = 0; z < dims.size(); ++z) {
    std::vector<int64_t> values;
    for (std::size_t k = 0; k < dims.size(); ++k)
      values.push_back(k == z ? 1 : 2 * std::max<int64_t>(dims[k].traced, 1) + 1);
    out.push_back(makeBinding("solo-one", dims, values));
  }
  return out;
}

std::vector<NamedBinding> makeBindings(const std::vector<onnxio::ValueSpec>& specs,
                                       const std::vector<std::vector<int64_t>>& traced, int count, uint64_t seed) {
  auto dims = dynamicDims(specs, traced);
  std::vector<NamedBinding> out;
  if (dims.empty() || count <= 0)
    return out;
  static const int64_t primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29};
  std::mt19937_64 rng(seed);
  for (int n = 0; n < count; ++n) {
    std::vector<int64_t> values;
    std::string kind;
    for (std::size_t k = 0; k < dims.size(); ++k) {
      int64_t t = std::max<int64_t>(dims[k].traced, 1);
      switch (n) {
      case 0:
        kind = "ones";
        values.push_back(1);
        break;
      case 1:
        kind = "zero";
        values.push_back(k == 0 ? 0 : t);
        break;
      case 2:
        kind = "asymmetric";
        values.push_back(primes[k % 10]);
        break;
      case 3:
        kind = "larger";
        values.push_back(2 * t + 1);
        break;
      default:
        kind = "random";
        values.push_back(1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * t + 3)));
      }
    }
    out.push_back(makeBinding(kind, dims, values));
  }
  return out;
}

} // namespace dynqual::onnxio
