// Builds small Programs instruction by instruction for the runtime tests.
#pragma once

#include "dq/runtime/Program.h"

#include <utility>

namespace dq::rt::test {

/// Appends instructions and hands out fresh registers; `program` is ready to run after ret().
struct Builder {
  Program program;

  int32_t newS() { return program.numScalarRegs++; }
  int32_t newB() { return program.numBufferRegs++; }
  Instr &emit(Opcode op) {
    program.code.emplace_back();
    program.code.back().op = op;
    program.code.back().loc = "test:" + std::to_string(program.code.size() - 1);
    return program.code.back();
  }
  int32_t index(int64_t v) {
    int32_t s = newS();
    Instr &i = emit(Opcode::ConstIndex);
    i.s = {s};
    i.imm = {v};
    return s;
  }
  std::vector<int32_t> indices(const std::vector<int64_t> &vs) {
    std::vector<int32_t> out;
    for (int64_t v : vs)
      out.push_back(index(v));
    return out;
  }
  int32_t input(int64_t n) {
    int32_t b = newB();
    Instr &i = emit(Opcode::Input);
    i.b = {b};
    i.imm = {n};
    return b;
  }
  int32_t alloc(DType t, const std::vector<int64_t> &dims, MemSpace space = MemSpace::Device) {
    std::vector<int32_t> s = indices(dims);
    int32_t b = newB();
    Instr &i = emit(Opcode::Alloc);
    i.b = {b};
    i.s = s;
    i.dtype = t;
    i.space = space;
    return b;
  }
  int32_t allocOutput(int64_t n, DType t, const std::vector<int32_t> &dims,
                      const std::vector<int64_t> &staticDims = {}) {
    int32_t b = newB();
    Instr &i = emit(Opcode::AllocOutput);
    i.b = {b};
    i.s = dims;
    i.dtype = t;
    i.imm = {n};
    i.imm.insert(i.imm.end(), staticDims.begin(), staticDims.end());
    return b;
  }
  int32_t view(int32_t src, int32_t offset, const std::vector<int32_t> &sizes, const std::vector<int32_t> &strides) {
    int32_t b = newB();
    Instr &i = emit(Opcode::View);
    i.b = {b, src};
    i.s = {offset};
    i.s.insert(i.s.end(), sizes.begin(), sizes.end());
    i.s.insert(i.s.end(), strides.begin(), strides.end());
    i.imm = {static_cast<int64_t>(sizes.size())};
    return b;
  }
  void kernel(const std::string &name, const std::vector<int32_t> &ins, const std::vector<int32_t> &outs,
              const std::vector<int64_t> &attrs = {}, const std::vector<double> &fattrs = {},
              const std::vector<int32_t> &scalars = {}) {
    Instr &i = emit(Opcode::Kernel);
    i.name = name;
    i.b = ins;
    i.b.insert(i.b.end(), outs.begin(), outs.end());
    i.imm = {static_cast<int64_t>(ins.size())};
    i.imm.insert(i.imm.end(), attrs.begin(), attrs.end());
    i.fimm = fattrs;
    i.s = scalars;
  }
  void copy(int32_t dst, int32_t src, CopyKind kind) {
    Instr &i = emit(Opcode::Copy);
    i.b = {dst, src};
    i.imm = {static_cast<int64_t>(kind)};
  }
  void ret(const std::vector<int32_t> &bs) {
    Instr &i = emit(Opcode::Return);
    i.b = bs;
  }
  void addInput(const std::string &name, DType t, std::vector<int64_t> dims) {
    program.inputs.push_back({name, t, std::move(dims)});
  }
  void addOutput(const std::string &name, DType t, std::vector<int64_t> dims) {
    program.outputs.push_back({name, t, std::move(dims)});
  }
};

} // namespace dq::rt::test
