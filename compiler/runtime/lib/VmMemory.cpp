// The VM's allocation and view instructions: program inputs, allocations and host scratch, the
// transient pool and its regions, Dealloc, constants, views and the ABI shape check.
#include "Vm.h"

namespace dq::rt::vm {

void Vm::input(const Instr &in) {
  const size_t i = static_cast<size_t>(in.imm[0]);
  Reg r = wholeBuffer(inputViews_[i].buffer, inputViews_[i].dtype, inputViews_[i].sizes, Origin::Input, inputBytes_[i]);
  setB(in, r);
}

void Vm::alloc(const Instr &in) {
  const bool scratch = in.op == Opcode::GetHostScratch;
  const std::vector<int64_t> dims = scalars(in.s, 0);
  const uint64_t bytes = byteSize(in.dtype, dims, "allocation " + formatDims(dims));
  BufferHandle h = allocOwned(scratch ? MemSpace::Host : in.space, bytes, AllocPurpose::Buffer);
  setB(in, wholeBuffer(h, in.dtype, dims, scratch ? Origin::Scratch : Origin::Alloc, bytes));
}

void Vm::getPool(const Instr &in) {
  const int64_t need = sreg(in.s[0]);
  if (need < 0) throw RuntimeError("negative pool size " + std::to_string(need));
  if (!pool_ || pool_->limitEnd < static_cast<uint64_t>(need)) {
    for (const Region &r : regions_)
      if (r.live)
        throw RuntimeError("pool must grow to " + std::to_string(need) +
                           " bytes while a region created by instruction " + std::to_string(r.createdBy) + " is live");
    if (pool_) freeOwned(pool_->view.buffer);
    BufferHandle h = allocOwned(MemSpace::Device, static_cast<uint64_t>(need), AllocPurpose::Pool);
    pool_ = wholeBuffer(h, DType::U8, {need}, Origin::Pool, static_cast<uint64_t>(need));
  }
  setB(in, *pool_);
}

void Vm::poolSubview(size_t index, const Instr &in) {
  const Reg &pool = breg(in.b[1]);
  if (pool.origin != Origin::Pool)
    throw RuntimeError("b" + std::to_string(in.b[1]) + " is a " + originName(pool.origin) + ", not the pool");
  const int64_t off = sreg(in.s[0]), size = sreg(in.s[1]);
  const std::vector<int64_t> dims = scalars(in.s, 2);
  const int64_t es = static_cast<int64_t>(dtypeSize(in.dtype));
  const uint64_t need = byteSize(in.dtype, dims, "pool region " + formatDims(dims));
  if (off < 0 || size < 0 || static_cast<uint64_t>(off) + static_cast<uint64_t>(size) > pool.limitEnd)
    throw RuntimeError("pool region [" + std::to_string(off) + ", " + std::to_string(off + size) +
                       ") lies outside the " + std::to_string(pool.limitEnd) + "-byte pool");
  if (off % es != 0)
    throw RuntimeError("pool region offset " + std::to_string(off) + " is not aligned to " + dtypeName(in.dtype));
  if (need > static_cast<uint64_t>(size))
    throw RuntimeError("pool region of " + std::to_string(size) + " bytes cannot hold " + dtypeName(in.dtype) +
                       formatDims(dims) + " (" + std::to_string(need) + " bytes)");
  const uint64_t begin = static_cast<uint64_t>(off), end = begin + static_cast<uint64_t>(size);
  for (const Region &r : regions_)
    if (r.live && begin < r.end && r.begin < end)
      throw RuntimeError("pool region [" + std::to_string(begin) + ", " + std::to_string(end) +
                         ") overlaps the live region [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                         ") created by instruction " + std::to_string(r.createdBy));
  dev_.discard(pool.view.buffer, begin, end - begin);
  regions_.push_back({begin, end, true, index});
  Reg r;
  r.set = true;
  r.view = contiguousView(pool.view.buffer, in.dtype, dims);
  r.view.offset = off / es;
  r.origin = Origin::Region;
  r.limitBegin = begin;
  r.limitEnd = end;
  r.region = static_cast<int64_t>(regions_.size() - 1);
  setB(in, r);
}

void Vm::dealloc(const Instr &in) {
  const Reg r = breg(in.b[0]);
  if (r.origin == Origin::Region) {
    Region &reg = regions_[static_cast<size_t>(r.region)];
    if (!reg.live)
      throw RuntimeError("pool region [" + std::to_string(reg.begin) + ", " + std::to_string(reg.end) +
                         ") is deallocated twice");
    reg.live = false;
    dev_.poison(r.view.buffer, reg.begin, reg.end - reg.begin);
    return;
  }
  if (r.origin != Origin::Alloc && r.origin != Origin::Scratch)
    throw RuntimeError(std::string("unsupported: Dealloc of a ") + originName(r.origin) +
                       ", whose lifetime the runtime manages");
  if (!owned_.count(r.view.buffer)) {
    dev_.free(r.view.buffer); // reports the double free / use after free with the buffer name
    throw RuntimeError("Dealloc of buffer #" + std::to_string(r.view.buffer) + " twice");
  }
  freeOwned(r.view.buffer);
}

void Vm::constant(const Instr &in) {
  const int64_t c = in.imm[0];
  const ConstantSpec &spec = p_.constants[static_cast<size_t>(c)];
  if (!in.s.empty() && scalars(in.s, 0) != spec.dims)
    throw RuntimeError("constant " + std::to_string(c) + " has dims " + formatDims(spec.dims) +
                       ", the instruction asks for " + formatDims(scalars(in.s, 0)));
  if (opt_.residentConstants) {
    ResidentConstants &rc = *opt_.residentConstants;
    auto hit = rc.buffers.find(c);
    if (hit == rc.buffers.end()) {
      BufferHandle h = dev_.allocate(MemSpace::Device, spec.size, AllocPurpose::Buffer);
      hit = rc.buffers.emplace(c, h).first;
      rc.bytes += spec.size;
      dev_.upload(h, 0, p_.constantData.data() + spec.offset, spec.size);
    }
    setB(in, wholeBuffer(hit->second, spec.dtype, spec.dims, Origin::Constant, spec.size));
    return;
  }
  auto it = constants_.find(c);
  if (it == constants_.end()) {
    BufferHandle h = allocOwned(MemSpace::Device, spec.size, AllocPurpose::Buffer);
    dev_.upload(h, 0, p_.constantData.data() + spec.offset, spec.size);
    it = constants_.emplace(c, wholeBuffer(h, spec.dtype, spec.dims, Origin::Constant, spec.size)).first;
  }
  setB(in, it->second);
}

void Vm::view(const Instr &in) {
  Reg r = breg(in.b[1]);
  const size_t rank = static_cast<size_t>(in.imm[0]);
  std::vector<int64_t> v = scalars(in.s, 0);
  r.view.offset = v[0];
  r.view.sizes.assign(v.begin() + 1, v.begin() + 1 + static_cast<long>(rank));
  r.view.strides.assign(v.begin() + 1 + static_cast<long>(rank), v.end());
  for (int64_t sz : r.view.sizes)
    if (sz < 0) throw RuntimeError("negative size in view sizes " + formatDims(r.view.sizes));
  checkInLimits(r, "view");
  setB(in, r);
}

void Vm::checkShape(const Instr &in) {
  const BufferView &v = breg(in.b[0]).view;
  bool ok = v.sizes.size() == in.imm.size();
  for (size_t d = 0; ok && d < v.sizes.size(); ++d)
    ok = in.imm[d] < 0 || in.imm[d] == v.sizes[d];
  if (!ok)
    throw RuntimeError("ABI cast check failed: " + (in.name.empty() ? std::string("cast") : in.name) +
                       ": the view has shape " + formatDims(v.sizes) + " but the cast demands " + formatDims(in.imm));
}

} // namespace dq::rt::vm
