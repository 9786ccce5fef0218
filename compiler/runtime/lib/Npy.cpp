// .npy reader and writer (the subset in docs/devices.md).
#include "dq/runtime/Npy.h"

#include "dq/runtime/Error.h"

#include <cstdio>
#include <fstream>
#include <iterator>

namespace dq::rt {
namespace {

struct DescrEntry {
  const char *code; ///< descr without its byte-order character
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {{"f4", DType::F32}, {"f8", DType::F64}, {"f2", DType::F16}, {"i1", DType::I8},
                                  {"u1", DType::U8},  {"i4", DType::I32}, {"i8", DType::I64}, {"b1", DType::Bool}};

// Value text of `key` in the header dict: from after "'key':" up to the next top-level ',' or '}'.
std::string field(const std::string &header, const std::string &key, const std::string &name) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw RuntimeError(name + ": npy header has no '" + key + "'");
  size_t c = header.find(':', k);
  if (c == std::string::npos) throw RuntimeError(name + ": npy header is malformed near '" + key + "'");
  size_t i = c + 1, depth = 0;
  std::string v;
  for (; i < header.size(); ++i) {
    char ch = header[i];
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (depth == 0 && (ch == ',' || ch == '}')) break;
    v += ch;
  }
  size_t a = v.find_first_not_of(" \t"), b = v.find_last_not_of(" \t");
  return a == std::string::npos ? "" : v.substr(a, b - a + 1);
}

} // namespace

HostTensor parseNpy(const std::vector<uint8_t> &bytes, const std::string &name) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::string(bytes.begin(), bytes.begin() + 6) != std::string(kMagic, 6))
    throw RuntimeError(name + ": not an npy file (bad magic)");
  const int major = bytes[6];
  size_t headerLen = 0, pos = 0;
  if (major == 1) {
    headerLen = bytes[8] | (size_t{bytes[9]} << 8);
    pos = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw RuntimeError(name + ": truncated npy header");
    headerLen = bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
    pos = 12;
  } else {
    throw RuntimeError(name + ": npy format version " + std::to_string(major) + " is not supported (1, 2, 3)");
  }
  if (bytes.size() - pos < headerLen) throw RuntimeError(name + ": truncated npy header");
  const std::string header(bytes.begin() + static_cast<long>(pos), bytes.begin() + static_cast<long>(pos + headerLen));
  pos += headerLen;

  std::string descr = field(header, "descr", name);
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"'))
    throw RuntimeError(name + ": npy descr " + descr + " is not a simple dtype (structured arrays are not supported)");
  descr = descr.substr(1, descr.size() - 2);
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '='))
    throw RuntimeError(name + ": npy dtype '" + descr +
                       "' is not supported (little-endian f4 f8 f2 i1 u1 i4 i8 b1 only)");
  bool found = false;
  DType dtype = DType::F32;
  for (const DescrEntry &e : kDescrs)
    if (descr.substr(1) == e.code) {
      dtype = e.dtype;
      found = true;
    }
  if (!found) throw RuntimeError(name + ": npy dtype '" + descr + "' is not supported (f4 f8 f2 i1 u1 i4 i8 b1 only)");
  if (field(header, "fortran_order", name) != "False")
    throw RuntimeError(name + ": npy array is in Fortran order; save it in C order (numpy.ascontiguousarray)");

  std::string shape = field(header, "shape", name);
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    throw RuntimeError(name + ": npy shape " + shape + " is malformed");
  std::vector<int64_t> dims;
  std::string cur;
  for (size_t i = 1; i + 1 <= shape.size(); ++i) {
    char ch = shape[i];
    if (ch == ',' || ch == ')') {
      size_t a = cur.find_first_not_of(" "), b = cur.find_last_not_of(" L");
      if (a != std::string::npos) {
        std::string t = cur.substr(a, b - a + 1);
        if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos)
          throw RuntimeError(name + ": npy shape " + shape + " is malformed");
        dims.push_back(std::stoll(t));
      }
      cur.clear();
    } else {
      cur += ch;
    }
  }
  HostTensor t(dtype, dims);
  const size_t have = bytes.size() - pos;
  if (have < t.bytes.size())
    throw RuntimeError(name + ": truncated npy data: " + t.describe() + " needs " + std::to_string(t.bytes.size()) +
                       " bytes, the file has " + std::to_string(have));
  if (have > t.bytes.size())
    throw RuntimeError(name + ": " + std::to_string(have - t.bytes.size()) + " unexpected trailing bytes after " +
                       t.describe());
  std::copy(bytes.begin() + static_cast<long>(pos), bytes.end(), t.bytes.begin());
  return t;
}

HostTensor readNpy(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw RuntimeError(path + ": cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parseNpy(bytes, path);
}

std::vector<uint8_t> serializeNpy(const HostTensor &t) {
  std::string code;
  for (const DescrEntry &e : kDescrs)
    if (e.dtype == t.dtype) code = e.code;
  if (code.empty()) throw RuntimeError("npy: dtype " + dtypeName(t.dtype) + " has no npy type");
  const char order = (code == "i1" || code == "u1" || code == "b1") ? '|' : '<';
  std::string shape = "(";
  for (size_t i = 0; i < t.dims.size(); ++i)
    shape += std::to_string(t.dims[i]) + (t.dims.size() == 1 ? "," : i + 1 < t.dims.size() ? ", " : "");
  shape += ")";
  std::string header =
      "{'descr': '" + std::string(1, order) + code + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // magic(6) + version(2) + length(2) + header + '\n' padded to a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out = {0x93,
                              'N',
                              'U',
                              'M',
                              'P',
                              'Y',
                              1,
                              0,
                              static_cast<uint8_t>(header.size() & 0xFF),
                              static_cast<uint8_t>(header.size() >> 8)};
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), t.bytes.begin(), t.bytes.end());
  return out;
}

void writeNpy(const std::string &path, const HostTensor &t) {
  const std::vector<uint8_t> bytes = serializeNpy(t);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw RuntimeError(path + ": cannot write");
    f.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw RuntimeError(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw RuntimeError(path + ": cannot rename " + tmp);
}

} // namespace dq::rt
