#pragma once
// Turns the JSON of `dq-bench generate` (the device-side generation benchmark, version 1) into
// store records: one case per benchmarked decoder, with every parameter as a case parameter and
// TTFT, TPS, memory, the measured probes and the decode limits as typed samples (docs/store.md,
// docs/commands/bench-generate.md).
#include "dynqual/store/Records.h"

#include <nlohmann/json.hpp>

namespace dynqual::store {

/// The case of one dq-bench generate document (or a generation peer's document in the same
/// layout: "tool" "torch-eager generate" or "onnxruntime generate", with an "engine" name):
///  - model: name = "model" (else the program path); hash = "model_hash" when given (sha256 of
///    model.onnx), else sha256 of "dq-bench-model:" + the name;
///  - data set: kind "binding", name "prompt_<prompt_len>", binding
///    "prompt_len=P gen_tokens=G seed=S" (plus " engine=E" for a peer), hash = sha256 of model
///    hash, binding and seed;
///  - params: engine ("dynqual" for dq-bench), tool, device, gpu, program, warmup, reps, prompt_len, gen_tokens, seed,
///  batch, copy_mib,
///    copy_reps, launches, binding (which limit binds), tokens (the ids, comma-separated),
///    tokens_same_every_rep, kv_dtype, vocab;
///  - samples: ttft_ms (ms) and tps (tokens/s), one per timed repetition; peak_host_bytes
///    (bytes); copy_gbps, memcpy_gbps, strided_copy_gbps (GB/s); launch_us (us);
///    launches_per_token (1); weight_bytes_per_token (bytes); bandwidth_limit_tps,
///    launch_limit_tps, binding_limit_tps (tokens/s); fraction_of_binding (1) = median of the
///    non-null tps samples (stats::median) / binding_limit_tps, computed here; only without a
///    finite binding limit is the document's own value recorded (dq-bench's 0 for an unbounded
///    limit; null, no sample, for a peer without a copy probe);
///  - counters: peak_device_bytes.
/// A null single number (not measured, or non-finite) records no sample; a null repetition of
/// ttft_ms or tps is NaN. Throws std::runtime_error naming the JSON
/// field ("dq-bench generate JSON: 'limits.copy_gbps' must be a number or null") when the
/// document is not a version-1 generate document.
CaseRecord generationCase(const nlohmann::json& doc);

/// The machine named by the document's "host" and "gpu" fields (cpu model, cores, memory, OS,
/// GPU description), fingerprint filled. Missing fields are "unknown" (or 0).
Machine generationMachine(const nlohmann::json& doc);

} // namespace dynqual::store
