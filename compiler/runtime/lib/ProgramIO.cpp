// The .dqp byte format (docs/artifact.md): little-endian, length-prefixed, FNV-1a checksummed.
#include "dq/runtime/ProgramIO.h"

#include "dq/runtime/Error.h"
#include "dq/runtime/ProgramCheck.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace dq::rt {
namespace {

constexpr uint8_t kMagic[4] = {'D', 'Q', 'P', 'G'};
constexpr size_t kHeaderBytes = 16; // magic, version, body length
constexpr size_t kTrailerBytes = 8; // checksum

uint64_t fnv1a64(const uint8_t *data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

class Writer {
public:
  std::vector<uint8_t> out;
  void u(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
      out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u8(uint8_t v) { u(v, 1); }
  void u16(uint16_t v) { u(v, 2); }
  void u32(uint32_t v) { u(v, 4); }
  void u64(uint64_t v) { u(v, 8); }
  void i32(int32_t v) { u(static_cast<uint32_t>(v), 4); }
  void i64(int64_t v) { u(static_cast<uint64_t>(v), 8); }
  void f64(double v) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    u64(b);
  }
  void str(const std::string &s) {
    u32(static_cast<uint32_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
  void dims(const std::vector<int64_t> &d) {
    u32(static_cast<uint32_t>(d.size()));
    for (int64_t x : d)
      i64(x);
  }
  void spec(const TensorSpec &t) {
    str(t.name);
    u8(static_cast<uint8_t>(t.dtype));
    dims(t.dims);
  }
};

class Reader {
public:
  Reader(const uint8_t *data, size_t size, size_t base, const std::string &where)
      : data_(data), size_(size), base_(base), where_(where) {}
  std::string field = "header";

  uint64_t u(int bytes) {
    need(static_cast<size_t>(bytes));
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
      v |= static_cast<uint64_t>(data_[pos_ + i]) << (8 * i);
    pos_ += static_cast<size_t>(bytes);
    return v;
  }
  uint8_t u8() { return static_cast<uint8_t>(u(1)); }
  uint16_t u16() { return static_cast<uint16_t>(u(2)); }
  uint32_t u32() { return static_cast<uint32_t>(u(4)); }
  uint64_t u64() { return u(8); }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  double f64() {
    uint64_t b = u64();
    double v;
    std::memcpy(&v, &b, 8);
    return v;
  }
  // A count of items each at least `minBytes` long; refusing impossible counts avoids huge
  // allocations from a corrupted length.
  size_t count(size_t minBytes) {
    uint32_t n = u32();
    if (static_cast<uint64_t>(n) * minBytes > size_ - pos_) truncated(static_cast<size_t>(n) * minBytes);
    return n;
  }
  std::string str() {
    size_t n = count(1);
    std::string s(reinterpret_cast<const char *>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  std::vector<int64_t> dims() {
    std::vector<int64_t> d(count(8));
    for (int64_t &x : d)
      x = i64();
    return d;
  }
  TensorSpec spec() {
    TensorSpec t;
    t.name = str();
    t.dtype = static_cast<DType>(u8());
    t.dims = dims();
    return t;
  }
  size_t remaining() const { return size_ - pos_; }
  [[noreturn]] void fail(const std::string &problem) const { throw RuntimeError(where_ + ": " + problem); }

private:
  void need(size_t n) {
    if (n > size_ - pos_) truncated(n);
  }
  [[noreturn]] void truncated(size_t n) const {
    fail("truncated or corrupt: " + field + " needs " + std::to_string(n) + " bytes at byte " +
         std::to_string(base_ + pos_) + ", only " + std::to_string(size_ - pos_) + " remain");
  }
  const uint8_t *data_;
  size_t size_, pos_ = 0, base_;
  const std::string &where_;
};

std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuntimeError(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw RuntimeError(path + ": read error");
  return bytes;
}

void writeFile(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw RuntimeError(path + ": cannot create: " + std::strerror(errno));
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw RuntimeError(path + ": write failed (disk full?)");
}

} // namespace

ProgramBytes serializeProgram(const Program &p, const std::string &where) {
  validateProgram(p, where);
  Writer body;
  body.str(p.compilerVersion);
  body.str(p.pipelineSpec);
  body.str(p.sourceName);
  body.u32(static_cast<uint32_t>(p.inputs.size()));
  for (const TensorSpec &t : p.inputs)
    body.spec(t);
  body.u32(static_cast<uint32_t>(p.outputs.size()));
  for (const TensorSpec &t : p.outputs)
    body.spec(t);
  body.i32(p.numScalarRegs);
  body.i32(p.numBufferRegs);
  body.u32(static_cast<uint32_t>(p.constants.size()));
  for (const ConstantSpec &c : p.constants) {
    body.u8(static_cast<uint8_t>(c.dtype));
    body.dims(c.dims);
    body.u64(c.offset);
    body.u64(c.size);
  }
  body.u64(p.constantData.size());
  body.u64(fnv1a64(p.constantData.data(), p.constantData.size()));
  body.u32(static_cast<uint32_t>(p.code.size()));
  for (const Instr &in : p.code) {
    body.u16(static_cast<uint16_t>(in.op));
    body.u8(static_cast<uint8_t>(in.dtype));
    body.u8(static_cast<uint8_t>(in.space));
    body.str(in.name);
    body.str(in.loc);
    body.u32(static_cast<uint32_t>(in.s.size()));
    for (int32_t r : in.s)
      body.i32(r);
    body.u32(static_cast<uint32_t>(in.b.size()));
    for (int32_t r : in.b)
      body.i32(r);
    body.u32(static_cast<uint32_t>(in.imm.size()));
    for (int64_t v : in.imm)
      body.i64(v);
    body.u32(static_cast<uint32_t>(in.fimm.size()));
    for (double v : in.fimm)
      body.f64(v);
  }
  Writer file;
  file.out.assign(std::begin(kMagic), std::end(kMagic));
  file.u32(p.formatVersion);
  file.u64(body.out.size());
  file.out.insert(file.out.end(), body.out.begin(), body.out.end());
  file.u64(fnv1a64(body.out.data(), body.out.size()));
  return {std::move(file.out), p.constantData};
}

Program deserializeProgram(const std::vector<uint8_t> &bytes, const std::vector<uint8_t> &sidecar,
                           const std::string &where) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 4) != 0)
    throw RuntimeError(where + ": not a dqp program (bad magic); expected a file written by "
                               "dynqual compile --emit dqp");
  Reader header(bytes.data(), bytes.size(), 0, where);
  header.u32(); // magic, checked above
  uint32_t version = header.u32();
  if (version != Program::kFormatVersion)
    throw RuntimeError(where + ": format version " + std::to_string(version) + ", this runtime reads version " +
                       std::to_string(Program::kFormatVersion) + "; recompile the model");
  uint64_t bodyBytes = header.u64();
  uint64_t have = bytes.size() - kHeaderBytes;
  if (have < kTrailerBytes || bodyBytes > have - kTrailerBytes)
    throw RuntimeError(where + ": truncated: header declares " + std::to_string(bodyBytes) +
                       " body bytes plus an 8-byte checksum, file has " + std::to_string(have) +
                       " bytes after the header");
  if (bodyBytes != have - kTrailerBytes)
    throw RuntimeError(where + ": " + std::to_string(have - kTrailerBytes - bodyBytes) +
                       " unexpected trailing bytes after the checksum");
  const uint8_t *body = bytes.data() + kHeaderBytes;
  Reader trailer(body + bodyBytes, kTrailerBytes, kHeaderBytes + bodyBytes, where);
  if (trailer.u64() != fnv1a64(body, bodyBytes))
    throw RuntimeError(where + ": checksum mismatch: the file is corrupted");

  Reader r(body, bodyBytes, kHeaderBytes, where);
  Program p;
  p.formatVersion = version;
  r.field = "compiler version";
  p.compilerVersion = r.str();
  r.field = "pipeline spec";
  p.pipelineSpec = r.str();
  r.field = "source name";
  p.sourceName = r.str();
  r.field = "inputs";
  p.inputs.resize(r.count(9));
  for (TensorSpec &t : p.inputs)
    t = r.spec();
  r.field = "outputs";
  p.outputs.resize(r.count(9));
  for (TensorSpec &t : p.outputs)
    t = r.spec();
  r.field = "register counts";
  p.numScalarRegs = r.i32();
  p.numBufferRegs = r.i32();
  r.field = "constants";
  p.constants.resize(r.count(21));
  for (ConstantSpec &c : p.constants) {
    c.dtype = static_cast<DType>(r.u8());
    c.dims = r.dims();
    c.offset = r.u64();
    c.size = r.u64();
  }
  r.field = "sidecar record";
  uint64_t sidecarSize = r.u64();
  uint64_t sidecarHash = r.u64();
  r.field = "instructions";
  p.code.resize(r.count(28));
  for (size_t i = 0; i < p.code.size(); ++i) {
    r.field = "instruction " + std::to_string(i);
    Instr &in = p.code[i];
    uint16_t op = r.u16();
    if (!isKnownOpcode(op))
      r.fail("instruction " + std::to_string(i) + ": unknown opcode " + std::to_string(op) +
             "; the file needs a newer runtime or is corrupt");
    in.op = static_cast<Opcode>(op);
    in.dtype = static_cast<DType>(r.u8());
    in.space = static_cast<MemSpace>(r.u8());
    in.name = r.str();
    in.loc = r.str();
    in.s.resize(r.count(4));
    for (int32_t &x : in.s)
      x = r.i32();
    in.b.resize(r.count(4));
    for (int32_t &x : in.b)
      x = r.i32();
    in.imm.resize(r.count(8));
    for (int64_t &x : in.imm)
      x = r.i64();
    in.fimm.resize(r.count(8));
    for (double &x : in.fimm)
      x = r.f64();
  }
  if (r.remaining() != 0) r.fail(std::to_string(r.remaining()) + " unparsed bytes after the last instruction");

  const std::string sidecarName = where + ".bin";
  for (size_t i = 0; i < p.constants.size(); ++i) {
    const ConstantSpec &c = p.constants[i];
    if (c.offset > sidecar.size() || c.size > sidecar.size() - c.offset)
      throw RuntimeError(sidecarName + ": sidecar has " + std::to_string(sidecar.size()) + " bytes but constant " +
                         std::to_string(i) + " needs bytes [" + std::to_string(c.offset) + ", " +
                         std::to_string(c.offset + c.size) +
                         "); the sidecar is truncated or belongs to another program");
  }
  if (sidecar.size() != sidecarSize)
    throw RuntimeError(sidecarName + ": sidecar has " + std::to_string(sidecar.size()) +
                       " bytes, the program records " + std::to_string(sidecarSize) +
                       "; it belongs to another build of the program");
  if (fnv1a64(sidecar.data(), sidecar.size()) != sidecarHash)
    throw RuntimeError(sidecarName + ": sidecar checksum differs from the program's record; it "
                                     "belongs to another build of the program");
  p.constantData = sidecar;
  validateProgram(p, where);
  return p;
}

void writeProgram(const Program &program, const std::string &path) {
  ProgramBytes bytes = serializeProgram(program, path);
  const std::string sidecar = path + ".bin";
  writeFile(path + ".tmp", bytes.program);
  writeFile(sidecar + ".tmp", bytes.sidecar);
  if (std::rename((sidecar + ".tmp").c_str(), sidecar.c_str()) != 0 ||
      std::rename((path + ".tmp").c_str(), path.c_str()) != 0)
    throw RuntimeError(path + ": cannot rename temporary file into place: " + std::strerror(errno));
}

Program readProgram(const std::string &path) {
  std::vector<uint8_t> bytes = readFile(path);
  std::vector<uint8_t> sidecar;
  const std::string sidecarPath = path + ".bin";
  std::ifstream probe(sidecarPath, std::ios::binary);
  const bool present = static_cast<bool>(probe);
  if (present) {
    probe.close();
    sidecar = readFile(sidecarPath);
  }
  try {
    return deserializeProgram(bytes, sidecar, path);
  } catch (const RuntimeError &e) {
    if (present || std::string(e.what()).rfind(sidecarPath + ":", 0) != 0) throw;
    throw RuntimeError(sidecarPath + ": missing; the program needs its constants sidecar next to it");
  }
}

} // namespace dq::rt
