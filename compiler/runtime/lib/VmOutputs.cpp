// The VM's program outputs: AllocOutput, the output allocator, and Return (copies a returned
// view into an output buffer when it is not one already).
#include "Vm.h"

namespace dq::rt::vm {

BufferView Vm::obtainOutput(size_t index, DType dtype, const std::vector<int64_t> &dims) {
  const TensorSpec &spec = p_.outputs[index];
  const std::string name = "output " + std::to_string(index) + " '" + spec.name + "'";
  if (dtype != spec.dtype)
    throw RuntimeError(name + ": dtype " + dtypeName(dtype) + " but the program declares " + dtypeName(spec.dtype));
  bool match = dims.size() == spec.dims.size();
  for (size_t d = 0; match && d < dims.size(); ++d)
    match = spec.dims[d] < 0 || spec.dims[d] == dims[d];
  if (!match)
    throw RuntimeError(name + ": shape " + formatDims(dims) + " does not match the declared " + formatDims(spec.dims));
  OutputRequest req;
  req.index = index;
  req.spec = &spec;
  req.dtype = dtype;
  req.dims = dims;
  req.bytes = byteSize(dtype, dims, name);
  OutputSlot &slot = outputs_[index];
  BufferHandle h;
  if (opt_.outputAllocator) {
    h = opt_.outputAllocator(dev_, req);
    slot.runtimeOwned = false;
    if (h == 0) throw RuntimeError(name + ": the output allocator returned no buffer");
    if (dev_.bufferSpace(h) == MemSpace::Host)
      throw RuntimeError(name + ": the output allocator returned pageable host memory; kernels "
                                "need device or host-mapped memory");
    if (dev_.bufferBytes(h) < req.bytes)
      throw RuntimeError(name + ": the output allocator returned " + std::to_string(dev_.bufferBytes(h)) + " bytes, " +
                         std::to_string(req.bytes) + " needed for " + dtypeName(dtype) + formatDims(dims));
  } else {
    h = allocOwned(MemSpace::Device, req.bytes, AllocPurpose::Buffer);
    slot.runtimeOwned = true;
  }
  slot.allocated = true;
  slot.view = contiguousView(h, dtype, dims);
  return slot.view;
}

void Vm::allocOutput(const Instr &in) {
  const size_t index = static_cast<size_t>(in.imm[0]);
  const std::vector<int64_t> dims = scalars(in.s, 0);
  const std::string name = "output " + std::to_string(index) + " '" + p_.outputs[index].name + "'";
  if (in.imm.size() > 1) {
    std::vector<int64_t> demanded(in.imm.begin() + 1, in.imm.end());
    for (size_t d = 0; d < dims.size(); ++d)
      if (demanded[d] >= 0 && dims[d] != demanded[d])
        throw RuntimeError("ABI cast check failed: " + name + " would be allocated as " + formatDims(dims) +
                           " but its external type demands " + formatDims(demanded));
  }
  if (outputs_[index].allocated) throw RuntimeError(name + " is allocated twice");
  BufferView v = obtainOutput(index, in.dtype, dims);
  outputs_[index].byProgram = true;
  Reg r = wholeBuffer(v.buffer, v.dtype, v.sizes, Origin::Output, byteSize(v.dtype, v.sizes, name));
  b_[static_cast<size_t>(in.b[0])] = r;
}

void Vm::finish(const Instr &in) {
  for (size_t i = 0; i < p_.outputs.size(); ++i) {
    const BufferView v = breg(in.b[i]).view;
    const OutputSlot &slot = outputs_[i];
    const bool exact = slot.allocated && v.buffer == slot.view.buffer && v.offset == 0 && v.dtype == slot.view.dtype &&
                       v.sizes == slot.view.sizes && v.isContiguous();
    if (exact) {
      returned_.push_back(slot.view);
      continue;
    }
    const std::string name = "output " + std::to_string(i) + " '" + p_.outputs[i].name + "'";
    // An output the program allocated through the allocator must be returned as exactly that
    // buffer's shape: a host framework would reject anything else, so copying would hide it.
    if (slot.byProgram && (v.dtype != slot.view.dtype || v.sizes != slot.view.sizes))
      throw RuntimeError(name + " was allocated through the output allocator as " + dtypeName(slot.view.dtype) +
                         formatDims(slot.view.sizes) + " but is returned as " + dtypeName(v.dtype) +
                         formatDims(v.sizes));
    if (slot.byProgram && v.buffer == slot.view.buffer)
      throw RuntimeError(name + " was allocated through the output allocator as " + dtypeName(slot.view.dtype) +
                         formatDims(slot.view.sizes) +
                         " (contiguous, offset 0) but is returned as a view with offset " + std::to_string(v.offset) +
                         " and strides " + formatDims(v.strides));
    if (slot.byProgram)
      throw RuntimeError(name +
                         " was allocated through the output allocator but another buffer "
                         "of the same shape " +
                         formatDims(v.sizes) + " is returned");
    ++outputCopies_;
    outputs_[i].allocated = false;
    BufferView out = obtainOutput(i, v.dtype, v.sizes);
    const uint64_t es = dtypeSize(v.dtype);
    if (v.isContiguous())
      dev_.memcpy(out.buffer, 0, v.buffer, static_cast<uint64_t>(v.offset) * es,
                  static_cast<uint64_t>(v.numElements()) * es);
    else
      dev_.copyStrided(out, v);
    returned_.push_back(out);
  }
  returned = true;
}

} // namespace dq::rt::vm
