#!/usr/bin/env node
'use strict';
// dynqual runner protocol v3 (and v2, v1) over onnxruntime-node, CPU execution provider (variant
// `ort:cpu`). The protocol is specified in docs/runners.md. Usage:
//
//   ort-runner.js --protocol 1|2|3 --model MODEL.onnx --output-dir DIR --reps R --warmup W
//                 --min-sample-ms M [--clock wall|process-cpu] [--serve] [--input FILE]...
//   ort-runner.js --protocol-version
//
// Writes DIR/output_K.pb (last inference, graph output order) and DIR/result.json; exits 0 on
// success, 1 on a failure (result.json has ok=false and a one-line error), 2 on a usage error.
// With --serve (protocol 3) the samples are taken one at a time when the driver asks on stdin, so
// that two runners can be sampled in alternation (docs/runners.md, "Serve mode").

const fs = require('node:fs');
const path = require('node:path');
const { decodeTensorProto, encodeTensorProto, ORT_TYPE_TO_CODE, DTYPES } = require('./tensorproto.js');

// The newest protocol spoken; a driver may ask for any of PROTOCOLS and gets its result format.
const PROTOCOL = 3;
const PROTOCOLS = ['1', '2', '3'];
const CLOCKS = ['wall', 'process-cpu'];
// Upper bound on the iterations per sample, so a near-zero warm-up time cannot ask for billions.
const MAX_ITERATIONS = 1000000;

class UsageError extends Error {}

function oneLine(s) {
  return String(s).replace(/\s*[\r\n]+\s*/g, ' / ').trim();
}

function parseArgs(argv) {
  const a = { inputs: [] };
  const need = (i, flag) => {
    if (i + 1 >= argv.length) throw new UsageError(`${flag} needs a value`);
    return argv[i + 1];
  };
  const int = (v, flag, min) => {
    if (!/^[0-9]+$/.test(v) || Number(v) < min) throw new UsageError(`${flag} must be an integer >= ${min}, got '${v}'`);
    return Number(v);
  };
  for (let i = 0; i < argv.length; i += 2) {
    const f = argv[i];
    switch (f) {
      case '--protocol': a.protocol = need(i, f); break;
      case '--model': a.model = need(i, f); break;
      case '--output-dir': a.outputDir = need(i, f); break;
      case '--reps': a.reps = int(need(i, f), f, 1); break;
      case '--warmup': a.warmup = int(need(i, f), f, 0); break;
      case '--min-sample-ms': {
        const v = need(i, f);
        const n = Number(v);
        if (v.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`${f} must be a number >= 0, got '${v}'`);
        a.minSampleMs = n;
        break;
      }
      case '--clock': a.clock = need(i, f); break;
      case '--input': a.inputs.push(need(i, f)); break;
      case '--serve': a.serve = true; i -= 1; break;
      default: throw new UsageError(`unknown argument '${f}'`);
    }
  }
  for (const [k, flag] of [['protocol', '--protocol'], ['model', '--model'], ['outputDir', '--output-dir'],
    ['reps', '--reps'], ['warmup', '--warmup'], ['minSampleMs', '--min-sample-ms']]) {
    if (a[k] === undefined) throw new UsageError(`missing ${flag}`);
  }
  if (!PROTOCOLS.includes(a.protocol))
    throw new UsageError(`protocol ${a.protocol} requested, this runner speaks ${PROTOCOLS.join(' and ')}`);
  a.protocol = Number(a.protocol);
  if (a.clock !== undefined && a.protocol < 2) throw new UsageError('--clock needs protocol 2 or later');
  if (a.clock === undefined) a.clock = 'wall';
  if (a.serve && a.protocol < 3) throw new UsageError('--serve needs protocol 3 or later');
  if (!CLOCKS.includes(a.clock)) throw new UsageError(`--clock must be ${CLOCKS.join(' or ')}, got '${a.clock}'`);
  return a;
}

function nowMs() {
  return Number(process.hrtime.bigint()) / 1e6;
}

// User plus system CPU time of this whole process (every thread), ms.
function processCpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function clockFn(clock) {
  return clock === 'process-cpu' ? processCpuMs : nowMs;
}

function loadOrt() {
  try {
    const ort = require('onnxruntime-node');
    const version = require('onnxruntime-node/package.json').version;
    return { ort, version };
  } catch (e) {
    throw new Error(`onnxruntime-node is not installed in ${__dirname}/node_modules (run scripts/setup): ${oneLine(e.message)}`);
  }
}

// Removes what an earlier run left in the output folder, so nothing stale is read back.
function cleanOutputDir(dir) {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of fs.readdirSync(dir)) {
    if (f === 'result.json' || f === 'result.json.tmp' || /^output_[0-9]+\.pb$/.test(f)) fs.rmSync(path.join(dir, f));
  }
}

function writeJson(dir, obj) {
  const tmp = path.join(dir, 'result.json.tmp');
  fs.writeFileSync(tmp, JSON.stringify(obj) + '\n');
  fs.renameSync(tmp, path.join(dir, 'result.json'));
}

function readInputs(ort, files) {
  return files.map((f) => {
    let bytes;
    try {
      bytes = fs.readFileSync(f);
    } catch (e) {
      throw new Error(`cannot read input ${f}: ${e.code || oneLine(e.message)}`);
    }
    const t = decodeTensorProto(bytes, path.basename(f));
    return { file: f, name: t.name, tensor: new ort.Tensor(DTYPES[t.dataType].ort, t.data, t.dims) };
  });
}

// Maps input files to graph inputs: by TensorProto name when every file names a distinct graph
// input, otherwise by position (graph input order, as the ONNX backend test data does).
function makeFeeds(session, inputs, model) {
  const names = session.inputNames;
  if (inputs.length !== names.length)
    throw new Error(`${path.basename(model)} has ${names.length} inputs (${names.join(', ')}), got ${inputs.length} input files`);
  const feeds = {};
  const byName = inputs.every((x) => x.name && names.includes(x.name)) && new Set(inputs.map((x) => x.name)).size === inputs.length;
  inputs.forEach((x, i) => { feeds[byName ? x.name : names[i]] = x.tensor; });
  return feeds;
}

function outputToProto(name, t, model) {
  const code = ORT_TYPE_TO_CODE[t.type];
  if (code === undefined) throw new Error(`unsupported: output '${name}' of ${path.basename(model)} has type ${t.type}`);
  let data = t.data;
  // float16 comes back as 16-bit patterns (Uint16Array), or as Float16Array where node has one.
  if (t.type === 'float16' && !(data instanceof Uint16Array)) data = new Uint16Array(data.buffer, data.byteOffset, data.length);
  return encodeTensorProto({ name, dataType: code, dims: t.dims.map(Number), data });
}

/// Session options and the thread settings they amount to (reported in result.json).
/// onnxruntime sizes its thread pools itself (0 = its default) unless DYNQUAL_ORT_INTRA_OP_THREADS /
/// DYNQUAL_ORT_INTER_OP_THREADS set them. The process-cpu clock sums every thread of the process
/// and an idle pool thread spin-waits on the CPU, so under that clock the defaults become one
/// intra-op and one inter-op thread with spinning off; the variables still win (docs/runners.md).
/// Serve mode does the same: its driver pins the runner to one CPU, where a second pool thread
/// could only compete with the first.
function sessionOptions(clock, serve) {
  const cpuClock = clock === 'process-cpu' || serve === true;
  const opts = { executionProviders: ['cpu'] };
  const threads = { intra_op: cpuClock ? 1 : 0, inter_op: cpuClock ? 1 : 0, allow_spinning: !cpuClock };
  for (const [env, key, field] of [['DYNQUAL_ORT_INTRA_OP_THREADS', 'intraOpNumThreads', 'intra_op'],
                                   ['DYNQUAL_ORT_INTER_OP_THREADS', 'interOpNumThreads', 'inter_op']]) {
    const v = process.env[env];
    if (v !== undefined && v !== '') {
      const n = Number(v);
      if (!/^[0-9]+$/.test(v.trim()) || !Number.isInteger(n) || n < 0) throw new Error(`${env}='${v}' is not a thread count`);
      threads[field] = n;
    }
  }
  if (threads.intra_op > 0) opts.intraOpNumThreads = threads.intra_op;
  if (threads.inter_op > 0) opts.interOpNumThreads = threads.inter_op;
  if (!threads.allow_spinning)
    opts.extra = { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };
  return { opts, threads };
}

// Creates the session, runs the checked first inference and the warm-ups, and sizes a sample:
// everything both modes share.
async function prepare(a) {
  const { ort, version } = loadOrt();
  const modelName = path.basename(a.model);
  if (!fs.existsSync(a.model)) throw new Error(`model ${a.model} does not exist`);
  const inputs = readInputs(ort, a.inputs);

  const { opts, threads } = sessionOptions(a.clock, a.serve);
  const clock = clockFn(a.clock);
  const t0 = nowMs();
  let session;
  try {
    session = await ort.InferenceSession.create(a.model, opts);
  } catch (e) {
    throw new Error(`session creation failed for ${a.model}: ${oneLine(e.message)}`);
  }
  const sessionMs = nowMs() - t0;
  const feeds = makeFeeds(session, inputs, a.model);

  const ctx = { a, version, threads, session, sessionMs, clock, modelName, last: undefined, samples: [] };
  ctx.infer = async () => {
    try {
      ctx.last = await session.run(feeds);
    } catch (e) {
      throw new Error(`inference failed for ${modelName}: ${oneLine(e.message)}`);
    }
  };

  // The first inference is always run and timed alone (wall clock); it is the first warm-up.
  // Calibration reads the sample clock, so a batch lasts min-sample-ms on the clock it is read on.
  let t = nowMs();
  let c = clock();
  await ctx.infer();
  ctx.firstInferMs = nowMs() - t;
  // Calibration: the fastest warm-up after the first (or the first when there is none) estimates
  // one inference; k is the smallest count whose batch lasts at least min-sample-ms.
  // A CPU reading of 0 (below the clock's resolution) falls back to the wall time.
  let estimate = clock() - c || ctx.firstInferMs;
  for (let i = 1; i < a.warmup; i++) {
    t = nowMs();
    c = clock();
    await ctx.infer();
    const d = clock() - c || nowMs() - t;
    estimate = i === 1 ? d : Math.min(estimate, d);
  }
  ctx.k = 1;
  if (a.minSampleMs > 0) ctx.k = Math.min(MAX_ITERATIONS, Math.max(1, Math.ceil(a.minSampleMs / Math.max(estimate, 1e-6))));
  return ctx;
}

// Times one batch of k inferences; returns and keeps the per-inference time, ms.
async function takeSample(ctx) {
  const t = ctx.clock();
  for (let i = 0; i < ctx.k; i++) await ctx.infer();
  const ms = (ctx.clock() - t) / ctx.k;
  ctx.samples.push(ms);
  return ms;
}

// Writes the outputs of the last inference and returns result.json's object.
async function finish(ctx) {
  const { a, session, last, modelName } = ctx;
  session.outputNames.forEach((name, i) => {
    const t = last[name];
    if (!t) throw new Error(`${modelName}: output '${name}' missing from the inference result`);
    fs.writeFileSync(path.join(a.outputDir, `output_${i}.pb`), outputToProto(name, t, a.model));
  });
  if (typeof session.release === 'function') await session.release();

  const extra = a.protocol >= 2 ? { clock: a.clock, threads: ctx.threads } : {};
  return {
    protocol: a.protocol,
    ok: true,
    runner: 'ort-node',
    version: `onnxruntime-node ${ctx.version}`,
    samples_ms: ctx.samples,
    iterations_per_sample: ctx.k,
    session_ms: ctx.sessionMs,
    first_infer_ms: ctx.firstInferMs,
    counters: {},
    ...extra,
  };
}

async function run(a) {
  const ctx = await prepare(a);
  for (let s = 0; s < a.reps; s++) await takeSample(ctx);
  return finish(ctx);
}

function sendLine(obj) {
  fs.writeSync(1, JSON.stringify(obj) + '\n');
}

// Serve mode: after the warm-ups, one JSON line {"ready":true,"iterations_per_sample":k}; then
// per stdin line "sample" one line {"sample_ms":X}; "finish" writes the outputs and result.json
// (every sample taken) and answers {"finished":true}; "quit" or the end of stdin exits without
// writing. Returns result.json's object, or null when nothing is to be written.
async function serve(a) {
  const ctx = await prepare(a);
  sendLine({ ready: true, iterations_per_sample: ctx.k });
  const lines = require('node:readline').createInterface({ input: process.stdin, terminal: false });
  for await (const raw of lines) {
    const cmd = raw.trim();
    if (cmd === 'sample') {
      sendLine({ sample_ms: await takeSample(ctx) });
    } else if (cmd === 'finish') {
      if (ctx.samples.length === 0) await takeSample(ctx);
      const result = await finish(ctx);
      lines.close();
      return result;
    } else if (cmd === 'quit') {
      lines.close();
      return null;
    } else {
      throw new Error(`serve: unknown command '${oneLine(cmd)}' (expected sample, finish or quit)`);
    }
  }
  return null;
}

// The protocol a failed command line asked for when it is one this runner speaks, so the driver
// reads the error in the format it expects; else the newest.
function askedProtocol(argv) {
  const i = argv.indexOf('--protocol');
  return i >= 0 && PROTOCOLS.includes(argv[i + 1]) ? Number(argv[i + 1]) : PROTOCOL;
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length === 1 && argv[0] === '--protocol-version') {
    process.stdout.write(`${PROTOCOL}\n`);
    return 0;
  }
  let a;
  try {
    a = parseArgs(argv);
  } catch (e) {
    process.stderr.write(`ort-runner: usage error: ${oneLine(e.message)}\n`);
    // Still report through result.json when the output folder is known.
    const i = argv.indexOf('--output-dir');
    if (i >= 0 && i + 1 < argv.length) {
      try {
        cleanOutputDir(argv[i + 1]);
        writeJson(argv[i + 1], { protocol: askedProtocol(argv), ok: false, error: `usage: ${oneLine(e.message)}` });
      } catch (_) { /* nothing more to report */ }
    }
    return 2;
  }
  try {
    cleanOutputDir(a.outputDir);
  } catch (e) {
    process.stderr.write(`ort-runner: error: cannot prepare output folder ${a.outputDir}: ${oneLine(e.message)}\n`);
    return 1;
  }
  try {
    if (a.serve) {
      const result = await serve(a);
      if (result) {
        writeJson(a.outputDir, result);
        sendLine({ finished: true });
      }
    } else {
      writeJson(a.outputDir, await run(a));
    }
    return 0;
  } catch (e) {
    const msg = oneLine(e.message);
    process.stderr.write(`ort-runner: error: ${msg}\n`);
    if (a.serve) {
      try { sendLine({ error: msg }); } catch (_) { /* the exit code still says it failed */ }
    }
    try {
      // Outputs of a failed run are not results.
      cleanOutputDir(a.outputDir);
      writeJson(a.outputDir, { protocol: a.protocol, ok: false, error: msg });
    } catch (_) { /* the exit code still says it failed */ }
    return 1;
  }
}

main().then((code) => { process.exitCode = code; });
