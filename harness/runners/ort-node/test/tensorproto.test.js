'use strict';
// Tests of the hand-written TensorProto codec: round trips of every supported dtype, the typed
// repeated fields ONNX writers use instead of raw_data, and every rejection.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { DTYPES, decodeTensorProto, encodeTensorProto } = require('../tensorproto.js');

// ---- a tiny independent protobuf writer for building test inputs ----
function varint(v) {
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
  return out;
}
const key = (field, wt) => varint(field * 8 + wt);
const fVarint = (field, v) => [...key(field, 0), ...varint(v)];
const fBytes = (field, bytes) => [...key(field, 2), ...varint(bytes.length), ...bytes];
const packed = (field, elems) => fBytes(field, elems.flat());
const f32 = (v) => { const b = Buffer.alloc(4); b.writeFloatLE(v); return [...b]; };
const f64 = (v) => { const b = Buffer.alloc(8); b.writeDoubleLE(v); return [...b]; };
const msg = (...fields) => Uint8Array.from(fields.flat());
const str = (s) => [...Buffer.from(s, 'utf8')];

const SAMPLES = {
  1: [0, -1.5, 3.25, Infinity, -0, 1e-30],
  2: [0, 1, 127, 255],
  3: [-128, -1, 0, 127],
  4: [0, 1, 65535, 32768],
  5: [-32768, -1, 0, 32767],
  6: [-2147483648, -1, 0, 2147483647],
  7: [-(2n ** 63n), -1n, 0n, 2n ** 63n - 1n],
  9: [0, 1, 1, 0],
  10: [0x0000, 0x3c00, 0xfc00, 0x7e00], // 0, 1, -inf, NaN as float16 bit patterns
  11: [Math.PI, -0, 1e300, -Infinity],
  12: [0, 1, 4294967295, 2147483648],
  13: [0n, 1n, 2n ** 64n - 1n, 2n ** 63n],
};

test('every supported dtype round-trips through encode and decode', () => {
  for (const [code, values] of Object.entries(SAMPLES)) {
    const dt = DTYPES[code];
    const data = dt.Array.from(values);
    const t = { name: `t_${dt.name}`, dataType: Number(code), dims: [1, values.length], data };
    const back = decodeTensorProto(encodeTensorProto(t), 'x.pb');
    assert.equal(back.name, t.name);
    assert.equal(back.dataType, Number(code));
    assert.deepEqual(back.dims, [1, values.length]);
    assert.ok(back.data instanceof dt.Array, dt.name);
    assert.deepEqual(Buffer.from(back.data.buffer), Buffer.from(data.buffer), dt.name);
  }
});

test('scalars, empty tensors and unnamed tensors round-trip', () => {
  const s = decodeTensorProto(encodeTensorProto({ dataType: 1, dims: [], data: Float32Array.of(7) }), 's.pb');
  assert.deepEqual(s.dims, []);
  assert.deepEqual([...s.data], [7]);
  assert.equal(s.name, '');
  const e = decodeTensorProto(encodeTensorProto({ name: 'e', dataType: 7, dims: [3, 0], data: new BigInt64Array(0) }), 'e.pb');
  assert.deepEqual(e.dims, [3, 0]);
  assert.equal(e.data.length, 0);
});

test('the encoder writes dims unpacked, then data_type, name, raw_data (as C++ protobuf does)', () => {
  const bytes = encodeTensorProto({ name: 'ab', dataType: 1, dims: [1, 300], data: new Float32Array(300) });
  const expectHead = [0x08, 0x01, 0x08, 0xac, 0x02, 0x10, 0x01, 0x42, 0x02, 0x61, 0x62, 0x4a, 0xb0, 0x09];
  assert.deepEqual([...bytes.subarray(0, expectHead.length)], expectHead);
  assert.equal(bytes.length, expectHead.length + 1200);
});

test('typed fields decode: float_data packed and unpacked', () => {
  const p = decodeTensorProto(msg(fVarint(1, 3), fVarint(2, 1), packed(4, [f32(1.5), f32(-2), f32(0.25)])), 'p.pb');
  assert.deepEqual([...p.data], [1.5, -2, 0.25]);
  const u = decodeTensorProto(msg(fVarint(1, 2), fVarint(2, 1), key(4, 5), f32(4), key(4, 5), f32(5)), 'u.pb');
  assert.deepEqual([...u.data], [4, 5]);
});

test('typed fields decode: packed dims, int32_data for narrow ints, bool and float16', () => {
  const i8 = decodeTensorProto(msg(packed(1, [varint(2), varint(2)]), fVarint(2, 3), packed(5, [varint(-1), varint(-128), varint(5), varint(127)])), 'i8.pb');
  assert.deepEqual(i8.dims, [2, 2]);
  assert.deepEqual([...i8.data], [-1, -128, 5, 127]);
  const u16 = decodeTensorProto(msg(fVarint(1, 2), fVarint(2, 4), packed(5, [varint(65535), varint(1)])), 'u16.pb');
  assert.deepEqual([...u16.data], [65535, 1]);
  const b = decodeTensorProto(msg(fVarint(1, 3), fVarint(2, 9), packed(5, [varint(0), varint(1), varint(1)])), 'b.pb');
  assert.deepEqual([...b.data], [0, 1, 1]);
  const h = decodeTensorProto(msg(fVarint(1, 2), fVarint(2, 10), packed(5, [varint(0x3c00), varint(0xc000)])), 'h.pb');
  assert.ok(h.data instanceof Uint16Array);
  assert.deepEqual([...h.data], [0x3c00, 0xc000]);
  const i32 = decodeTensorProto(msg(fVarint(1, 2), fVarint(2, 6), packed(5, [varint(-2147483648), varint(2147483647)])), 'i32.pb');
  assert.deepEqual([...i32.data], [-2147483648, 2147483647]);
});

test('typed fields decode: int64_data, double_data, uint64_data (uint32 and uint64)', () => {
  const i64 = decodeTensorProto(msg(fVarint(1, 3), fVarint(2, 7), packed(7, [varint(-5n), varint(2n ** 62n), varint(0)])), 'i64.pb');
  assert.deepEqual([...i64.data], [-5n, 2n ** 62n, 0n]);
  const d = decodeTensorProto(msg(fVarint(1, 2), fVarint(2, 11), packed(10, [f64(Math.E), f64(-1e-300)])), 'd.pb');
  assert.deepEqual([...d.data], [Math.E, -1e-300]);
  const u32 = decodeTensorProto(msg(fVarint(1, 2), fVarint(2, 12), packed(11, [varint(4294967295), varint(7)])), 'u32.pb');
  assert.deepEqual([...u32.data], [4294967295, 7]);
  const u64 = decodeTensorProto(msg(fVarint(1, 1), fVarint(2, 13), packed(11, [varint(2n ** 64n - 1n)])), 'u64.pb');
  assert.deepEqual([...u64.data], [2n ** 64n - 1n]);
});

test('unknown fields (doc_string, metadata) are skipped', () => {
  const t = decodeTensorProto(msg(fVarint(1, 1), fVarint(2, 1), fBytes(12, str('doc')), fBytes(8, str('n')), fBytes(9, f32(2))), 'k.pb');
  assert.equal(t.name, 'n');
  assert.deepEqual([...t.data], [2]);
});

test('rejections name the file and what is unsupported', () => {
  const base = [fVarint(1, 1), fVarint(2, 1)];
  assert.throws(() => decodeTensorProto(msg(fVarint(1, 1), fVarint(2, 8), fBytes(6, str('hi'))), 'input_0.pb'),
    { message: 'unsupported: dtype STRING in input_0.pb' });
  assert.throws(() => decodeTensorProto(msg(...base, fBytes(13, fBytes(1, str('location'))), fVarint(14, 1)), 'input_0.pb'),
    { message: 'unsupported: external data in input_0.pb' });
  assert.throws(() => decodeTensorProto(msg(...base, fVarint(14, 1)), 'input_1.pb'),
    { message: 'unsupported: external data in input_1.pb' });
  assert.throws(() => decodeTensorProto(msg(...base, fBytes(3, fVarint(1, 0)), fBytes(9, f32(1))), 'input_0.pb'),
    { message: 'unsupported: segmented tensor in input_0.pb' });
  assert.throws(() => decodeTensorProto(msg(fVarint(1, 1), fVarint(2, 16), fBytes(9, [0, 0])), 'input_2.pb'),
    { message: 'unsupported: dtype BFLOAT16 (code 16) in input_2.pb' });
  assert.throws(() => decodeTensorProto(msg(fVarint(1, 1), fVarint(2, 14), fBytes(9, f32(0).concat(f32(0)))), 'input_2.pb'),
    { message: 'unsupported: dtype COMPLEX64 (code 14) in input_2.pb' });
  assert.throws(() => decodeTensorProto(msg(fVarint(1, 1), fBytes(9, f32(0))), 'input_3.pb'),
    { message: 'unsupported: dtype UNDEFINED (code 0) in input_3.pb' });
  assert.throws(() => encodeTensorProto({ dataType: 8, dims: [1], data: ['x'] }), /unsupported: dtype STRING/);
});

test('malformed data is an error naming the file', () => {
  assert.throws(() => decodeTensorProto(msg(fVarint(1, 3), fVarint(2, 1), fBytes(9, f32(1))), 'o.pb'),
    { message: "o.pb: malformed TensorProto: tensor has 1 elements, dims [3] need 3" });
  assert.throws(() => decodeTensorProto(msg(fVarint(1, 1), fVarint(2, 1), fBytes(9, [1, 2, 3])), 'o.pb'), /o\.pb: raw_data has 3 bytes/);
  assert.throws(() => decodeTensorProto(Uint8Array.from([0x4a, 0x10, 1, 2]), 'o.pb'), /o\.pb: malformed TensorProto: truncated field/);
  assert.throws(() => decodeTensorProto(Uint8Array.from([0x08, 0xff]), 'o.pb'), /o\.pb: malformed TensorProto: truncated varint/);
  assert.throws(() => decodeTensorProto(msg(fVarint(1, 1), fVarint(2, 7), packed(5, [varint(1)])), 'o.pb'),
    /o\.pb: malformed TensorProto: INT64 tensor has elements in int32_data/);
  assert.throws(() => decodeTensorProto(Uint8Array.from([0x63]), 'o.pb'), /o\.pb: malformed TensorProto: unsupported wire type 3/);
});

test('decodes the ONNX backend test data when it is installed', (t) => {
  const dir = '/usr/share/libonnx-testdata/data/node/test_add/test_data_set_0';
  if (!fs.existsSync(dir)) return t.skip(`${dir} not installed`);
  const bytes = fs.readFileSync(path.join(dir, 'input_0.pb'));
  const x = decodeTensorProto(bytes, 'input_0.pb');
  assert.equal(x.name, 'x');
  assert.deepEqual(x.dims, [3, 4, 5]);
  assert.ok(x.data instanceof Float32Array);
  // Re-encoding gives back the same bytes.
  assert.deepEqual(encodeTensorProto(x), bytes);
});
