'use strict';
// A minimal ONNX TensorProto codec (protobuf wire format) for the ort-node runner.
//
// Why hand-written: the runner may take exactly one package from npm (onnxruntime-node, pinned by
// package-lock.json) and Debian ships no protobuf library for node, so no protobuf decoder is
// reachable from node here. A TensorProto file (input_N.pb / output_N.pb, as in the ONNX backend
// test data) only needs a handful of fields, which this file implements against onnx.proto:
//
//   decode: dims(1), data_type(2), segment(3: rejected), float_data(4), int32_data(5),
//           string_data(6: rejected), int64_data(7), name(8), raw_data(9), double_data(10),
//           uint64_data(11), external_data(13) / data_location(14) = EXTERNAL (rejected);
//           every other field is skipped by wire type.
//   encode: dims(1), data_type(2), name(8), raw_data(9), in field order and with dims unpacked,
//           which is what the C++ protobuf library writes for onnx.proto (proto2), so the bytes
//           match a file written by dynqual's C++ writeTensorFile.
//
// A decoded tensor is {name, dataType, dims, data}: dataType is the ONNX code, dims an array of
// Numbers, data a typed array of the kind onnxruntime-node takes for that type (see DTYPES).

const os = require('node:os');

// ONNX TensorProto.DataType codes onnxruntime-node supports (string is left out on purpose).
// field: the typed repeated field ONNX assigns to the type when raw_data is absent.
const DTYPES = {
  1: { name: 'FLOAT', ort: 'float32', Array: Float32Array, field: 'float' },
  2: { name: 'UINT8', ort: 'uint8', Array: Uint8Array, field: 'int32' },
  3: { name: 'INT8', ort: 'int8', Array: Int8Array, field: 'int32' },
  4: { name: 'UINT16', ort: 'uint16', Array: Uint16Array, field: 'int32' },
  5: { name: 'INT16', ort: 'int16', Array: Int16Array, field: 'int32' },
  6: { name: 'INT32', ort: 'int32', Array: Int32Array, field: 'int32' },
  7: { name: 'INT64', ort: 'int64', Array: BigInt64Array, field: 'int64' },
  9: { name: 'BOOL', ort: 'bool', Array: Uint8Array, field: 'int32' },
  // float16 travels as its 16-bit patterns (raw bytes), never converted.
  10: { name: 'FLOAT16', ort: 'float16', Array: Uint16Array, field: 'int32' },
  11: { name: 'DOUBLE', ort: 'float64', Array: Float64Array, field: 'double' },
  12: { name: 'UINT32', ort: 'uint32', Array: Uint32Array, field: 'uint64' },
  13: { name: 'UINT64', ort: 'uint64', Array: BigUint64Array, field: 'uint64' },
};

// Names of the codes this codec does not support, for error messages.
const OTHER_DTYPE_NAMES = {
  0: 'UNDEFINED', 8: 'STRING', 14: 'COMPLEX64', 15: 'COMPLEX128', 16: 'BFLOAT16',
  17: 'FLOAT8E4M3FN', 18: 'FLOAT8E4M3FNUZ', 19: 'FLOAT8E5M2', 20: 'FLOAT8E5M2FNUZ',
  21: 'UINT4', 22: 'INT4', 23: 'FLOAT4E2M1',
};

const ORT_TYPE_TO_CODE = Object.fromEntries(Object.entries(DTYPES).map(([c, d]) => [d.ort, Number(c)]));

function dtypeName(code) {
  if (DTYPES[code]) return DTYPES[code].name;
  return OTHER_DTYPE_NAMES[code] || `UNKNOWN(${code})`;
}

function checkLittleEndian() {
  if (os.endianness() !== 'LE') throw new Error('unsupported: big-endian host (raw_data is little-endian)');
}

// ---- wire-format reading ---------------------------------------------------------------------

class Reader {
  constructor(bytes, what) {
    this.b = bytes;
    this.pos = 0;
    this.what = what;
  }
  fail(msg) {
    throw new Error(`${this.what}: malformed TensorProto: ${msg} at byte ${this.pos}`);
  }
  eof() {
    return this.pos >= this.b.length;
  }
  // A varint as BigInt (full 64 bits, unsigned).
  varintBig() {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.b.length) this.fail('truncated varint');
      const byte = this.b[this.pos++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return BigInt.asUintN(64, result);
      shift += 7n;
    }
    this.fail('varint longer than 10 bytes');
  }
  // A varint that must fit in a Number (tags, lengths, enum values, dims).
  varintNum() {
    // Fast path: up to 4 bytes (< 2^28).
    let result = 0;
    const start = this.pos;
    for (let i = 0; i < 4 && this.pos < this.b.length; i++) {
      const byte = this.b[this.pos++];
      result |= (byte & 0x7f) << (7 * i);
      if ((byte & 0x80) === 0) return result >>> 0;
    }
    this.pos = start;
    const v = this.varintBig();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) this.fail('value too large');
    return Number(v);
  }
  bytes(n) {
    if (n > this.b.length - this.pos) this.fail('truncated field');
    const out = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wireType) {
    switch (wireType) {
      case 0: this.varintBig(); break;
      case 1: this.bytes(8); break;
      case 2: this.bytes(this.varintNum()); break;
      case 5: this.bytes(4); break;
      default: this.fail(`unsupported wire type ${wireType}`);
    }
  }
}

// Reads a repeated scalar field, packed (wire type 2) or not; `one` reads one element.
function readRepeated(r, wireType, scalarWireType, one, out) {
  if (wireType === 2) {
    const len = r.varintNum();
    const end = r.pos + len;
    if (end > r.b.length) r.fail('truncated packed field');
    while (r.pos < end) out.push(one(r));
    if (r.pos !== end) r.fail('packed field overruns its length');
  } else if (wireType === scalarWireType) {
    out.push(one(r));
  } else {
    r.fail(`wire type ${wireType} for a repeated scalar field`);
  }
}

const readFloat = (r) => {
  const v = Buffer.from(r.bytes(4)).readFloatLE(0);
  return v;
};
const readDouble = (r) => Buffer.from(r.bytes(8)).readDoubleLE(0);
const readVarintBig = (r) => r.varintBig();

// Copies `bytes` into a fresh, aligned typed array of `Ctor`.
function typedFromBytes(Ctor, bytes, what) {
  if (bytes.length % Ctor.BYTES_PER_ELEMENT !== 0)
    throw new Error(`${what}: raw_data has ${bytes.length} bytes, not a multiple of ${Ctor.BYTES_PER_ELEMENT}`);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new Ctor(copy.buffer, 0, bytes.length / Ctor.BYTES_PER_ELEMENT);
}

function numelOf(dims) {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/**
 * Decodes one serialized TensorProto.
 * @param {Uint8Array} bytes the file contents
 * @param {string} what the file name, first word of every error
 * @returns {{name: string, dataType: number, dims: number[], data: ArrayLike}}
 * Throws Error "unsupported: ... in <what>" for string, external, segmented or unsupported-dtype
 * tensors and "<what>: malformed TensorProto: ..." for bad wire data or a data length that does not
 * match dims.
 */
function decodeTensorProto(bytes, what = 'tensor') {
  checkLittleEndian();
  const r = new Reader(bytes, what);
  const dims = [];
  let dataType = 0;
  let name = '';
  let raw = null;
  const floats = [];
  const int32s = [];
  const int64s = [];
  const doubles = [];
  const uint64s = [];
  let hasStrings = false;
  let hasExternal = false;
  let hasSegment = false;
  while (!r.eof()) {
    const tag = r.varintNum();
    const field = Math.floor(tag / 8);
    const wt = tag & 7;
    switch (field) {
      case 1: {
        const raw64 = [];
        readRepeated(r, wt, 0, readVarintBig, raw64);
        for (const v of raw64) {
          const s = BigInt.asIntN(64, v);
          if (s < 0n || s > BigInt(Number.MAX_SAFE_INTEGER)) r.fail(`dim ${s} out of range`);
          dims.push(Number(s));
        }
        break;
      }
      case 2:
        if (wt !== 0) r.fail('data_type is not a varint');
        dataType = Number(BigInt.asIntN(32, r.varintBig()));
        break;
      case 3: hasSegment = true; r.skip(wt); break;
      case 4: readRepeated(r, wt, 5, readFloat, floats); break;
      case 5: readRepeated(r, wt, 0, (rr) => Number(BigInt.asIntN(32, rr.varintBig())), int32s); break;
      case 6: hasStrings = true; r.skip(wt); break;
      case 7: readRepeated(r, wt, 0, (rr) => BigInt.asIntN(64, rr.varintBig()), int64s); break;
      case 8:
        if (wt !== 2) r.fail('name is not length-delimited');
        name = Buffer.from(r.bytes(r.varintNum())).toString('utf8');
        break;
      case 9:
        if (wt !== 2) r.fail('raw_data is not length-delimited');
        raw = r.bytes(r.varintNum());
        break;
      case 10: readRepeated(r, wt, 1, readDouble, doubles); break;
      case 11: readRepeated(r, wt, 0, readVarintBig, uint64s); break;
      case 13: hasExternal = true; r.skip(wt); break;
      case 14:
        if (wt !== 0) r.fail('data_location is not a varint');
        if (r.varintNum() === 1) hasExternal = true;
        break;
      default: r.skip(wt);
    }
  }
  const label = name ? `tensor '${name}'` : 'tensor';
  if (hasExternal) throw new Error(`unsupported: external data in ${what}`);
  if (hasSegment) throw new Error(`unsupported: segmented tensor in ${what}`);
  if (hasStrings || dataType === 8) throw new Error(`unsupported: dtype STRING in ${what}`);
  const dt = DTYPES[dataType];
  if (!dt) throw new Error(`unsupported: dtype ${dtypeName(dataType)} (code ${dataType}) in ${what}`);

  const numel = numelOf(dims);
  let data;
  if (raw !== null) {
    data = typedFromBytes(dt.Array, raw, what);
  } else {
    const src = { float: floats, int32: int32s, int64: int64s, double: doubles, uint64: uint64s }[dt.field];
    // Elements in a field other than the one ONNX assigns to the dtype are a writer bug.
    for (const [f, arr] of Object.entries({ float: floats, int32: int32s, int64: int64s, double: doubles, uint64: uint64s })) {
      if (f !== dt.field && arr.length > 0)
        throw new Error(`${what}: malformed TensorProto: ${dt.name} ${label} has elements in ${f}_data`);
    }
    data = new dt.Array(src.length);
    if (dt.Array === BigInt64Array || dt.Array === BigUint64Array) {
      for (let i = 0; i < src.length; i++) data[i] = dt.Array === BigInt64Array ? BigInt.asIntN(64, src[i]) : BigInt.asUintN(64, src[i]);
    } else if (dt.field === 'uint64') {
      for (let i = 0; i < src.length; i++) data[i] = Number(BigInt.asUintN(32, src[i]));
    } else {
      // int32_data holds narrower ints, bool and float16 bit patterns; the typed array wraps them
      // to the element width (float16 -> its 16 bits).
      for (let i = 0; i < src.length; i++) data[i] = src[i];
    }
  }
  if (dataType === 9) {
    for (let i = 0; i < data.length; i++) if (data[i] > 1) data[i] = 1;
  }
  if (data.length !== numel)
    throw new Error(`${what}: malformed TensorProto: ${label} has ${data.length} elements, dims [${dims.join(',')}] need ${numel}`);
  return { name, dataType, dims, data };
}

// ---- wire-format writing ---------------------------------------------------------------------

function varintBytes(value) {
  let v = BigInt.asUintN(64, BigInt(value));
  const out = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return out;
}

/**
 * Encodes a tensor as a TensorProto with dims, data_type, name and raw_data (little-endian).
 * @param {{name?: string, dataType: number, dims: number[], data: ArrayLike}} t data must be the
 *   typed array DTYPES names for dataType (any ArrayBufferView of the right byte size is taken
 *   as-is).
 * @returns {Buffer}
 */
function encodeTensorProto(t) {
  checkLittleEndian();
  const dt = DTYPES[t.dataType];
  if (!dt) throw new Error(`unsupported: dtype ${dtypeName(t.dataType)} (code ${t.dataType}) cannot be written`);
  const numel = numelOf(t.dims);
  let view = t.data;
  if (!ArrayBuffer.isView(view)) view = dt.Array.from(view);
  const rawBytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  if (rawBytes.length !== numel * dt.Array.BYTES_PER_ELEMENT)
    throw new Error(`${dt.name} tensor '${t.name || ''}': ${rawBytes.length} data bytes, dims [${t.dims.join(',')}] need ${numel * dt.Array.BYTES_PER_ELEMENT}`);
  const parts = [];
  for (const d of t.dims) {
    if (!Number.isInteger(d) || d < 0) throw new Error(`tensor '${t.name || ''}': bad dim ${d}`);
    parts.push(Buffer.from([0x08, ...varintBytes(d)]));
  }
  parts.push(Buffer.from([0x10, ...varintBytes(t.dataType)]));
  if (t.name) {
    const nameBytes = Buffer.from(t.name, 'utf8');
    parts.push(Buffer.from([0x42, ...varintBytes(nameBytes.length)]), nameBytes);
  }
  // proto2 writes a set optional bytes field even when empty; the C++ writer always sets raw_data.
  parts.push(Buffer.from([0x4a, ...varintBytes(rawBytes.length)]), Buffer.from(rawBytes));
  return Buffer.concat(parts);
}

module.exports = { DTYPES, ORT_TYPE_TO_CODE, dtypeName, decodeTensorProto, encodeTensorProto };
