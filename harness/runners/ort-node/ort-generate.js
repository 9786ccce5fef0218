#!/usr/bin/env node
'use strict';
// Greedy generation with onnxruntime-node (CPU) on a decoder in onnxruntime GenAI's builder
// layout (input_ids, attention_mask, past_key_values.{i}.key/value -> logits, present.{i}.*), the
// peer of `dq-bench generate` on the same model. Usage:
//
//   ort-generate.js --model MODEL.onnx --prompt 1,2,3 --gen-tokens N
//
// Prints one JSON object: {"tokens": [...], "margins": [...]} where tokens[k] is the arg max (first
// maximum) of the last position's logits after step k (step 0 the prompt) and margins[k] the gap
// between its top two logits. Exit 0 on success, 1 on a failure, 2 on a usage error.

function fail(code, msg) {
  process.stderr.write(`ort-generate: ${msg}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const a = {};
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i], v = argv[i + 1];
    if (v === undefined) fail(2, `${k} needs a value`);
    if (k === '--model') a.model = v;
    else if (k === '--prompt') a.prompt = v.split(',').map(Number);
    else if (k === '--gen-tokens') a.gen = Number(v);
    else fail(2, `unknown option ${k}`);
  }
  if (!a.model || !a.prompt || !(a.gen >= 1) || a.prompt.some((x) => !Number.isInteger(x)))
    fail(2, 'usage: ort-generate.js --model MODEL.onnx --prompt 1,2,3 --gen-tokens N');
  return a;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const ort = require('onnxruntime-node');
  const session = await ort.InferenceSession.create(a.model, { executionProviders: ['cpu'] });
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = session.inputMetadata || [];
  // The KV dtype and the static kv_heads/head dims come from the model's input metadata.
  const pastInfo = {};
  for (const m of meta) if (pastNames.includes(m.name)) pastInfo[m.name] = m;
  let past = {};
  for (const n of pastNames) {
    const m = pastInfo[n];
    const type = m && m.type ? m.type : 'float32';
    const dims = m && m.shape ? m.shape.map((d, i) => (i === 0 ? 1 : typeof d === 'number' ? d : 0)) : [1, 0, 0, 0];
    const Ctor = type === 'float16' ? Uint16Array : Float32Array;
    past[n] = new ort.Tensor(type, new Ctor(0), dims);
  }
  let ids = a.prompt.slice();
  let total = ids.length;
  const tokens = [], margins = [];
  for (let step = 0; step < a.gen; ++step) {
    const feeds = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
      ...past,
    };
    const out = await session.run(feeds);
    const logits = out.logits;
    const vocab = logits.dims[2], seq = logits.dims[1];
    const data = logits.type === 'float16' ? Array.from(logits.data, halfToFloat) : logits.data;
    let best = 0, second = -Infinity;
    const base = (seq - 1) * vocab;
    for (let v = 1; v < vocab; ++v) if (data[base + v] > data[base + best]) best = v;
    for (let v = 0; v < vocab; ++v) if (v !== best) second = Math.max(second, data[base + v]);
    tokens.push(best);
    margins.push(data[base + best] - second);
    const next = {};
    for (const n of pastNames) next[n] = out[n.replace('past_key_values.', 'present.')];
    past = next;
    ids = [best];
    total += 1;
  }
  process.stdout.write(JSON.stringify({ tokens, margins }) + '\n');
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
  if (e === 0) return s * Math.pow(2, -14) * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * Math.pow(2, e - 15) * (1 + f / 1024);
}

main().catch((e) => fail(1, String(e && e.message ? e.message : e).replace(/\s+/g, ' ')));
