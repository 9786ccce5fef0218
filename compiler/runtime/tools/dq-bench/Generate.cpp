// The decode loop (Generate.h).
#include "Generate.h"

#include "dq/runtime/Error.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace dq::bench {

using namespace dq::rt;

namespace {

bool isFloat(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64; }

[[noreturn]] void unsupported(const std::string &what) {
  throw RuntimeError("unsupported: generate needs a decoder step program: " + what);
}

double nowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Frees on scope exit whatever device tensors it still holds.
struct Holder {
  Device &dev;
  std::vector<DeviceTensor> held;
  ~Holder() {
    for (const DeviceTensor &t : held)
      if (t.buffer) {
        try {
          dev.free(t.buffer);
        } catch (const std::exception &) {
        }
      }
  }
};

} // namespace

DecoderLayout decoderLayout(const Program &p) {
  if (p.inputs.empty() || p.outputs.empty()) unsupported("it has no inputs or no outputs");
  const TensorSpec &ids = p.inputs[0];
  if (ids.dtype != DType::I64 || ids.dims.size() != 2)
    unsupported("input 0 '" + ids.name + "' is " + dtypeName(ids.dtype) + formatDims(ids.dims) +
                ", expected token ids i64[batch, seq]");
  const TensorSpec &logits = p.outputs[0];
  if (!isFloat(logits.dtype) || logits.dims.size() != 3 || logits.dims[2] < 1)
    unsupported("output 0 '" + logits.name + "' is " + dtypeName(logits.dtype) + formatDims(logits.dims) +
                ", expected float logits [batch, seq, vocab] with a static vocab");
  DecoderLayout l;
  l.attentionMask = p.inputs.size() > 1 && p.inputs[1].name == "attention_mask";
  const size_t first = l.attentionMask ? 2 : 1;
  if (l.attentionMask && (p.inputs[1].dtype != DType::I64 || p.inputs[1].dims.size() != 2))
    unsupported("input 1 'attention_mask' is " + dtypeName(p.inputs[1].dtype) + formatDims(p.inputs[1].dims) +
                ", expected i64[batch, total]");
  if (p.inputs.size() - first != p.outputs.size() - 1)
    unsupported(std::to_string(p.inputs.size() - first) + " past inputs but " + std::to_string(p.outputs.size() - 1) +
                " present outputs");
  l.vocab = logits.dims[2];
  l.logitsType = logits.dtype;
  for (size_t i = first; i < p.inputs.size(); ++i) {
    const TensorSpec &past = p.inputs[i], &present = p.outputs[i - first + 1];
    std::vector<size_t> dynamic;
    for (size_t d = 0; d < past.dims.size(); ++d)
      if (past.dims[d] < 0) dynamic.push_back(d);
    if (!isFloat(past.dtype) || dynamic.empty() || dynamic.size() > 2)
      unsupported("input " + std::to_string(i) + " '" + past.name + "' is " + dtypeName(past.dtype) +
                  formatDims(past.dims) +
                  ", expected a float past K/V with one or two dynamic dims "
                  "([batch,] past length)");
    bool same = present.dtype == past.dtype && present.dims.size() == past.dims.size();
    for (size_t d = 0; same && d < past.dims.size(); ++d)
      same = past.dims[d] < 0 ? present.dims[d] < 0 : present.dims[d] == past.dims[d];
    if (!same)
      unsupported("output " + std::to_string(i) + " '" + present.name + "' " + dtypeName(present.dtype) +
                  formatDims(present.dims) + " is not the present of input '" + past.name + "' " +
                  dtypeName(past.dtype) + formatDims(past.dims));
    std::vector<int64_t> empty = past.dims;
    if (dynamic.size() == 2) empty[dynamic[0]] = 1;
    empty[dynamic.back()] = 0;
    l.past.push_back(past);
    l.emptyPastDims.push_back(empty);
  }
  return l;
}

std::vector<int64_t> promptTokens(int64_t vocab, int len, uint64_t seed) {
  std::vector<int64_t> ids;
  uint64_t state = seed;
  for (int k = 0; k < len; ++k) {
    // SplitMix64 (Steele, Lea, Flood 2014), as the model generator uses.
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    ids.push_back(static_cast<int64_t>(z % static_cast<uint64_t>(vocab)));
  }
  return ids;
}

GenerationRun generate(ResidentProgram &program, Device &dev, const DecoderLayout &layout,
                       const std::vector<int64_t> &prompt, int genTokens) {
  if (genTokens < 1) throw std::invalid_argument("generate: --gen-tokens must be at least 1");
  if (prompt.empty()) throw std::invalid_argument("generate: the prompt is empty");
  GenerationRun run;
  Holder h{dev, {}};
  // Two token buffers: a step reads one as its input ids while arg_max writes the other.
  DeviceTensor tok[2];
  for (DeviceTensor &t : tok) {
    t = DeviceTensor{dev.allocate(MemSpace::Device, 8, AllocPurpose::Buffer), DType::I64, {1, 1}};
    h.held.push_back(t);
  }
  // The builder layout's attention_mask: ones over every position so far. One buffer as long as
  // the whole generation, uploaded once; each step passes a [1, total] prefix of it.
  DeviceTensor mask;
  if (layout.attentionMask) {
    const int64_t longest = static_cast<int64_t>(prompt.size()) + genTokens;
    HostTensor ones(DType::I64, {1, longest});
    std::fill_n(reinterpret_cast<int64_t *>(ones.bytes.data()), longest, int64_t{1});
    mask = uploadTensor(dev, ones);
    h.held.push_back(mask);
  }
  auto maskOf = [&](int64_t total) { return DeviceTensor{mask.buffer, DType::I64, {1, total}}; };
  const size_t fixed = h.held.size();
  KernelArgs argmax;
  argmax.attrs = {1, 0}; // axis 1 of [batch, vocab], first maximum

  HostTensor ids(DType::I64, {1, static_cast<int64_t>(prompt.size())});
  std::copy(prompt.begin(), prompt.end(), reinterpret_cast<int64_t *>(ids.bytes.data()));

  run.times.prefillStartMs = nowMs();
  std::vector<DeviceTensor> inputs{uploadTensor(dev, ids)};
  h.held.push_back(inputs[0]);
  int64_t total = static_cast<int64_t>(prompt.size());
  if (layout.attentionMask) inputs.push_back(maskOf(total));
  for (size_t i = 0; i < layout.past.size(); ++i) {
    DeviceTensor t{dev.allocate(MemSpace::Device, 0, AllocPurpose::Buffer), layout.past[i].dtype,
                   layout.emptyPastDims[i]};
    h.held.push_back(t);
    inputs.push_back(t);
  }
  for (int step = 0; step < genTokens; ++step) {
    RunResult info;
    std::vector<DeviceTensor> outs = program.run(inputs, &info, /*synchronize=*/false);
    // The inputs of this step (prompt ids or old past K/V, never the token buffers) are done.
    for (size_t i = fixed; i < h.held.size(); ++i)
      dev.free(h.held[i].buffer);
    h.held.resize(fixed);
    h.held.insert(h.held.end(), outs.begin(), outs.end());
    (step == 0 ? run.prefillCounters : run.stepCounters.emplace_back()) = info.counters;
    run.peakDeviceBytes = std::max(run.peakDeviceBytes, info.counters.peakDeviceBytes);

    const DeviceTensor &logits = outs[0];
    if (logits.dims.size() != 3 || logits.dims[0] != 1 || logits.dims[1] < 1 || logits.dims[2] != layout.vocab)
      throw RuntimeError("generate: logits came back as " + formatDims(logits.dims) + ", expected [1, seq, " +
                         std::to_string(layout.vocab) + "]");
    BufferView last = logits.view();
    last.offset = (logits.dims[1] - 1) * layout.vocab;
    last.sizes = {1, layout.vocab};
    last.strides = {logits.dims[1] * layout.vocab, 1};
    const DeviceTensor &next = tok[step % 2];
    dev.launch("arg_max", {last}, {contiguousView(next.buffer, DType::I64, {1, 1})}, argmax);
    int64_t id = 0;
    dev.readback(&id, next.buffer, 0, 8);
    run.times.tokenOnHostMs.push_back(nowMs());
    run.tokens.push_back(id);

    inputs.assign(1, next);
    if (layout.attentionMask) inputs.push_back(maskOf(++total));
    inputs.insert(inputs.end(), outs.begin() + 1, outs.end());
    dev.free(logits.buffer);
    h.held.erase(h.held.begin() + static_cast<long>(fixed)); // the logits, freed above
  }
  return run;
}

} // namespace dq::bench
