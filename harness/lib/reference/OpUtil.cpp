#include "OpUtil.h"

namespace dynqual::reference {

int64_t normalizeAxis(const OpContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> intValues(const OpContext& ctx, const Tensor& t, const char* operand) {
  if (t.dtype() != DType::Int64 && t.dtype() != DType::Int32)
    ctx.fail(std::string(operand) + " must be i32 or i64, got " + dtypeName(t.dtype()));
  return t.toInts();
}

int64_t intScalar(const OpContext& ctx, const Tensor& t, const char* operand) {
  if (t.numel() != 1 || t.rank() > 1)
    ctx.fail(std::string(operand) + " must hold one value, got shape " + shapeToString(t.dims()));
  return intValues(ctx, t, operand)[0];
}

std::vector<int64_t> broadcastShape(const OpContext& ctx, const std::vector<std::vector<int64_t>>& shapes) {
  std::size_t rank = 0;
  for (const auto& s : shapes)
    rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      const int64_t d = s[i];
      if (d == o || d == 1)
        continue;
      if (o == 1)
        o = d;
      else {
        std::string all;
        for (const auto& sh : shapes)
          all += " " + shapeToString(sh);
        ctx.fail("shapes do not broadcast:" + all);
      }
    }
  }
  return out;
}

std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  const std::vector<int64_t> inStrides = rowMajorStrides(in);
  const std::size_t lead = out.size() - in.size();
  for (std::size_t i = 0; i < in.size(); ++i)
    strides[lead + i] = in[i] == 1 ? 0 : inStrides[i];
  return strides;
}

} // namespace dynqual::reference
