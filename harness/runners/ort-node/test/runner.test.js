'use strict';
// Command-line behaviour of ort-runner.js: protocol version, usage errors and failures reported
// through result.json, and one real run when onnxruntime-node is installed.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const RUNNER = path.join(__dirname, '..', 'ort-runner.js');
const run = (args) => spawnSync(process.execPath, [RUNNER, ...args], { encoding: 'utf8' });
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'ort-runner-test-'));
const result = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'result.json'), 'utf8'));
const ortInstalled = fs.existsSync(path.join(__dirname, '..', 'node_modules', 'onnxruntime-node', 'package.json'));
const TEST_ADD = '/usr/share/libonnx-testdata/data/node/test_add';

test('--protocol-version prints 3', () => {
  const r = run(['--protocol-version']);
  assert.equal(r.status, 0);
  assert.equal(r.stdout, '3\n');
});

test('a wrong protocol is a usage error reported in result.json', () => {
  const dir = tmp();
  const r = run(['--protocol', '4', '--model', 'm.onnx', '--output-dir', dir, '--reps', '1', '--warmup', '0', '--min-sample-ms', '0']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /protocol 4 requested, this runner speaks 1 and 2 and 3/);
  assert.deepEqual(result(dir), { protocol: 3, ok: false, error: 'usage: protocol 4 requested, this runner speaks 1 and 2 and 3' });
});

test('--clock is protocol 2 only, and only wall or process-cpu', () => {
  const dir = tmp();
  const base = ['--model', 'm.onnx', '--output-dir', dir, '--reps', '1', '--warmup', '0', '--min-sample-ms', '0'];
  assert.equal(run(['--protocol', '1', ...base, '--clock', 'wall']).status, 2);
  // A protocol 1 driver reads its error in protocol 1's format.
  assert.deepEqual(result(dir), { protocol: 1, ok: false, error: 'usage: --clock needs protocol 2 or later' });
  assert.equal(run(['--protocol', '2', ...base, '--clock', 'thread-cpu']).status, 2);
  assert.deepEqual(result(dir), { protocol: 2, ok: false, error: "usage: --clock must be wall or process-cpu, got 'thread-cpu'" });
});

test('bad numbers and unknown flags are usage errors', () => {
  const dir = tmp();
  const base = ['--protocol', '1', '--model', 'm.onnx', '--output-dir', dir, '--warmup', '0', '--min-sample-ms', '0'];
  assert.equal(run([...base, '--reps', '0']).status, 2);
  assert.match(result(dir).error, /--reps must be an integer >= 1/);
  assert.equal(run([...base, '--reps', '1', '--bogus', 'x']).status, 2);
  assert.match(result(dir).error, /unknown argument '--bogus'/);
});

test('a missing model fails with one line naming it, and stale outputs are removed', () => {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, 'output_0.pb'), 'stale');
  const r = run(['--protocol', '1', '--model', path.join(dir, 'nope.onnx'), '--output-dir', dir, '--reps', '1', '--warmup', '0', '--min-sample-ms', '0']);
  assert.equal(r.status, 1);
  const res = result(dir);
  assert.equal(res.ok, false);
  assert.ok(!fs.existsSync(path.join(dir, 'output_0.pb')));
  if (ortInstalled) assert.match(res.error, /model .*nope\.onnx does not exist/);
});

test('an unsupported input is reported naming the file', { skip: !ortInstalled && 'onnxruntime-node not installed (run scripts/setup)' }, () => {
  const dir = tmp();
  const bad = path.join(dir, 'input_0.pb');
  fs.writeFileSync(bad, Uint8Array.from([0x08, 0x01, 0x10, 0x08, 0x32, 0x01, 0x61]));
  const r = run(['--protocol', '1', '--model', path.join(TEST_ADD, 'model.onnx'), '--output-dir', dir, '--reps', '1', '--warmup', '0', '--min-sample-ms', '0', '--input', bad]);
  assert.equal(r.status, 1);
  assert.equal(result(dir).error, 'unsupported: dtype STRING in input_0.pb');
});

test('the wrong number of inputs is an error naming the model', { skip: (!ortInstalled || !fs.existsSync(TEST_ADD)) && 'onnxruntime-node or ONNX test data missing' }, () => {
  const dir = tmp();
  const r = run(['--protocol', '1', '--model', path.join(TEST_ADD, 'model.onnx'), '--output-dir', dir, '--reps', '1', '--warmup', '0', '--min-sample-ms', '0',
    '--input', path.join(TEST_ADD, 'test_data_set_0', 'input_0.pb')]);
  assert.equal(r.status, 1);
  assert.equal(result(dir).error, 'model.onnx has 2 inputs (x, y), got 1 input files');
});

test('a real run of test_add matches the stored output bit for bit', { skip: (!ortInstalled || !fs.existsSync(TEST_ADD)) && 'onnxruntime-node or ONNX test data missing' }, () => {
  const dir = tmp();
  const ds = path.join(TEST_ADD, 'test_data_set_0');
  const r = run(['--protocol', '1', '--model', path.join(TEST_ADD, 'model.onnx'), '--output-dir', dir, '--reps', '3', '--warmup', '2', '--min-sample-ms', '1',
    '--input', path.join(ds, 'input_0.pb'), '--input', path.join(ds, 'input_1.pb')]);
  assert.equal(r.status, 0, r.stderr);
  const res = result(dir);
  assert.equal(res.ok, true);
  assert.equal(res.version, 'onnxruntime-node 1.30.0');
  assert.equal(res.samples_ms.length, 3);
  assert.ok(res.samples_ms.every((s) => Number.isFinite(s) && s >= 0));
  assert.ok(Number.isInteger(res.iterations_per_sample) && res.iterations_per_sample >= 1);
  assert.deepEqual(fs.readFileSync(path.join(dir, 'output_0.pb')), fs.readFileSync(path.join(ds, 'output_0.pb')));
  assert.ok(!fs.existsSync(path.join(dir, 'output_1.pb')));
});

const addArgs = (protocol, dir, extra) => {
  const ds = path.join(TEST_ADD, 'test_data_set_0');
  return ['--protocol', protocol, '--model', path.join(TEST_ADD, 'model.onnx'), '--output-dir', dir, '--reps', '2', '--warmup', '1',
    '--min-sample-ms', '0', ...extra, '--input', path.join(ds, 'input_0.pb'), '--input', path.join(ds, 'input_1.pb')];
};
const needOrt = { skip: (!ortInstalled || !fs.existsSync(TEST_ADD)) && 'onnxruntime-node or ONNX test data missing' };

test('protocol 1 results carry no protocol 2 fields', needOrt, () => {
  const dir = tmp();
  const r = run(addArgs('1', dir, []));
  assert.equal(r.status, 0, r.stderr);
  const res = result(dir);
  assert.equal(res.protocol, 1);
  assert.ok(!('clock' in res) && !('threads' in res));
});

test('protocol 2 reports the clock and the thread settings; process-cpu pins one thread without spinning', needOrt, () => {
  const env = { ...process.env };
  delete env.DYNQUAL_ORT_INTRA_OP_THREADS;
  delete env.DYNQUAL_ORT_INTER_OP_THREADS;
  const runEnv = (args, e) => spawnSync(process.execPath, [RUNNER, ...args], { encoding: 'utf8', env: e });
  let dir = tmp();
  let r = runEnv(addArgs('2', dir, []), env);
  assert.equal(r.status, 0, r.stderr);
  let res = result(dir);
  assert.equal(res.protocol, 2);
  assert.equal(res.clock, 'wall');
  assert.deepEqual(res.threads, { intra_op: 0, inter_op: 0, allow_spinning: true });

  dir = tmp();
  r = runEnv(addArgs('2', dir, ['--clock', 'process-cpu']), env);
  assert.equal(r.status, 0, r.stderr);
  res = result(dir);
  assert.equal(res.clock, 'process-cpu');
  assert.deepEqual(res.threads, { intra_op: 1, inter_op: 1, allow_spinning: false });
  assert.equal(res.samples_ms.length, 2);
  assert.ok(res.samples_ms.every((s) => Number.isFinite(s) && s >= 0));
  assert.deepEqual(fs.readFileSync(path.join(dir, 'output_0.pb')),
    fs.readFileSync(path.join(TEST_ADD, 'test_data_set_0', 'output_0.pb')));

  // An explicit thread count wins over the clock's default.
  dir = tmp();
  r = runEnv(addArgs('2', dir, ['--clock', 'process-cpu']), { ...env, DYNQUAL_ORT_INTRA_OP_THREADS: '2' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(result(dir).threads, { intra_op: 2, inter_op: 1, allow_spinning: false });
});

test('--serve needs protocol 3', () => {
  const dir = tmp();
  const r = run(['--protocol', '2', '--serve', '--model', 'm.onnx', '--output-dir', dir, '--reps', '1', '--warmup', '0', '--min-sample-ms', '0']);
  assert.equal(r.status, 2);
  assert.deepEqual(result(dir), { protocol: 2, ok: false, error: 'usage: --serve needs protocol 3 or later' });
});

test('serve mode answers one sample per request, then finish writes the outputs and every sample', needOrt, () => {
  const dir = tmp();
  const args = addArgs('3', dir, ['--serve']);
  const r = spawnSync(process.execPath, [RUNNER, ...args], { encoding: 'utf8', input: 'sample\nsample\nsample\nfinish\n' });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 5);
  assert.equal(lines[0].ready, true);
  assert.ok(Number.isInteger(lines[0].iterations_per_sample) && lines[0].iterations_per_sample >= 1);
  const answered = lines.slice(1, 4).map((l) => l.sample_ms);
  assert.ok(answered.every((x) => x >= 0));
  assert.deepEqual(lines[4], { finished: true });
  const res = result(dir);
  assert.deepEqual(res.samples_ms, answered);
  assert.equal(res.iterations_per_sample, lines[0].iterations_per_sample);
  // Serve mode runs onnxruntime on one thread: its driver binds it to one CPU.
  assert.equal(res.threads.intra_op, 1);
  assert.equal(res.threads.inter_op, 1);
  assert.ok(fs.existsSync(path.join(dir, 'output_0.pb')));
});

test('serve mode: quit writes nothing, an unknown command is an error line', needOrt, () => {
  const dir = tmp();
  let r = spawnSync(process.execPath, [RUNNER, ...addArgs('3', dir, ['--serve'])], { encoding: 'utf8', input: 'sample\nquit\n' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n').length, 2);
  assert.ok(!fs.existsSync(path.join(dir, 'result.json')));
  r = spawnSync(process.execPath, [RUNNER, ...addArgs('3', dir, ['--serve'])], { encoding: 'utf8', input: 'measure\n' });
  assert.equal(r.status, 1);
  const last = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.equal(last.error, "serve: unknown command 'measure' (expected sample, finish or quit)");
  assert.equal(result(dir).ok, false);
});
