#include "dynqual/fuzz/SymbolicDim.h"

#include <algorithm>

namespace dynqual::fuzz {

Poly Poly::constant(int64_t c) {
  Poly p;
  if (c != 0)
    p.terms_[{}] = c;
  return p;
}

Poly Poly::atom(int id) {
  Poly p;
  p.terms_[{id}] = 1;
  return p;
}

Poly Poly::operator*(const Poly& o) const {
  Poly r;
  for (const auto& [ma, ca] : terms_)
    for (const auto& [mb, cb] : o.terms_) {
      std::vector<int> m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      r.terms_[m] += ca * cb;
    }
  return r;
}

Poly Poly::operator+(const Poly& o) const {
  Poly r = *this;
  for (const auto& [m, c] : o.terms_)
    r.terms_[m] += c;
  return r;
}

bool Poly::isConstant() const {
  return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty());
}

int64_t Poly::constantValue() const {
  return terms_.empty() ? 0 : terms_.begin()->second;
}

int64_t Poly::coefficient() const {
  return terms_.empty() ? 0 : terms_.begin()->second;
}

std::vector<int> Poly::atoms() const {
  return terms_.empty() ? std::vector<int>{} : terms_.begin()->first;
}

int64_t Poly::minValue(const std::vector<Atom>& table) const {
  std::vector<int64_t> v(table.size());
  for (size_t i = 0; i < table.size(); ++i)
    v[i] = table[i].mayBeZero ? 0 : 1;
  return evaluate(v);
}

int64_t Poly::maxValue(const std::vector<Atom>& table) const {
  auto mul = [](int64_t a, int64_t b) {
    return a != 0 && b > kMaxValueSaturation / a ? kMaxValueSaturation : std::min(a * b, kMaxValueSaturation);
  };
  int64_t sum = 0;
  for (const auto& [m, c] : terms_) {
    int64_t t = std::min(c, kMaxValueSaturation);
    for (int a : m)
      t = mul(t, table.at(static_cast<size_t>(a)).maxValue);
    sum = std::min(sum + t, kMaxValueSaturation);
  }
  return sum;
}

int64_t Poly::evaluate(const std::vector<int64_t>& values) const {
  int64_t sum = 0;
  for (const auto& [m, c] : terms_) {
    int64_t t = c;
    for (int a : m)
      t *= values.at(static_cast<size_t>(a));
    sum += t;
  }
  return sum;
}

std::string Poly::text(const std::vector<Atom>& table) const {
  if (terms_.empty())
    return "0";
  std::string s;
  for (const auto& [m, c] : terms_) {
    if (!s.empty())
      s += " + ";
    std::string t = (c != 1 || m.empty()) ? std::to_string(c) : "";
    for (int a : m)
      t += (t.empty() ? "" : "*") + table.at(static_cast<size_t>(a)).name;
    s += t;
  }
  return s;
}

} // namespace dynqual::fuzz
