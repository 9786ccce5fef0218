#include "dynqual/store/Fingerprint.h"

#include <openssl/evp.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace dynqual::store {

namespace {

class Sha256 {
public:
  Sha256() : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("sha256: OpenSSL digest initialisation failed");
  }
  ~Sha256() { EVP_MD_CTX_free(ctx_); }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const char* p, size_t n) { EVP_DigestUpdate(ctx_, p, n); }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned len = 0;
    EVP_DigestFinal_ex(ctx_, md.data(), &len);
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
      out += digits[md[i] >> 4];
      out += digits[md[i] & 15];
    }
    return out;
  }

private:
  EVP_MD_CTX* ctx_;
};

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// Value after "key:" (cpuinfo, meminfo, nvidia information) or "key=" (os-release).
std::string fieldOf(const fs::path& file, const std::string& key, char sep) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    auto pos = line.find(sep);
    if (pos != std::string::npos && trim(line.substr(0, pos)) == key) {
      std::string v = trim(line.substr(pos + 1));
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
        v = v.substr(1, v.size() - 2);
      return v;
    }
  }
  return "";
}

/// Runs a command and returns its trimmed stdout; "" on any failure.
std::string capture(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p)
    return "";
  std::string out;
  std::array<char, 256> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p))
    out.append(buf.data(), n);
  int rc = pclose(p);
  return rc == 0 ? trim(out) : "";
}

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

} // namespace

std::string sha256Hex(const std::string& data) {
  Sha256 h;
  h.update(data.data(), data.size());
  return h.hex();
}

std::string sha256File(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw std::runtime_error(file.string() + ": cannot read the file to hash it");
  Sha256 h;
  std::array<char, 1 << 16> buf{};
  while (in) {
    in.read(buf.data(), buf.size());
    h.update(buf.data(), static_cast<size_t>(in.gcount()));
  }
  return h.hex();
}

Machine probeMachine() {
  Machine m;
  m.cpuModel = fieldOf("/proc/cpuinfo", "model name", ':');
  if (m.cpuModel.empty())
    m.cpuModel = "unknown";
  m.cores = std::thread::hardware_concurrency();
  std::string mem = fieldOf("/proc/meminfo", "MemTotal", ':'); // "24576000 kB"
  if (!mem.empty())
    m.memoryBytes = std::stoll(mem) * 1024;
  utsname u{};
  std::string kernel = uname(&u) == 0 ? std::string(u.sysname) + " " + u.release : "unknown";
  std::string distro = fieldOf("/etc/os-release", "PRETTY_NAME", '=');
  m.os = distro.empty() ? kernel : kernel + " (" + distro + ")";
  std::error_code ec;
  if (fs::exists("/proc/driver/nvidia/gpus", ec)) {
    for (const auto& g : fs::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
      m.gpuName = fieldOf(g.path() / "information", "Model", ':');
      break;
    }
    std::string v = capture("cat /proc/driver/nvidia/version 2>/dev/null | head -1");
    auto k = v.find("Kernel Module");
    m.gpuDriver = k == std::string::npos ? v : trim(v.substr(k + 13, v.find_first_of(" \t", k + 15) - k - 13));
  }
  m.fingerprint = machineFingerprint(m);
  return m;
}

Build probeBuild(const fs::path& sourceDir, const std::string& dynqualVersion, const std::vector<fs::path>& artifacts) {
  Build b;
  std::string git = "git -C " + shellQuote(sourceDir.string());
  b.revision = capture(git + " rev-parse HEAD 2>/dev/null");
  if (b.revision.empty())
    b.revision = "unknown";
  else
    b.dirty = !capture(git + " status --porcelain --untracked-files=no 2>/dev/null").empty();
#if defined(__clang__)
  b.compilerVersion = "clang " __clang_version__;
#elif defined(__GNUC__)
  b.compilerVersion = "g++ " __VERSION__;
#else
  b.compilerVersion = "unknown";
#endif
  b.dynqualVersion = dynqualVersion;
  for (const auto& a : artifacts) {
    std::error_code ec;
    if (!fs::is_regular_file(a, ec))
      continue;
    b.artifacts.push_back({a.filename().string(), sha256File(a), static_cast<int64_t>(fs::file_size(a))});
  }
  b.key = buildKey(b);
  return b;
}

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string newRunKey() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::random_device rd;
  uint64_t r = (uint64_t(rd()) << 32) ^ rd();
  auto ns = std::chrono::system_clock::now().time_since_epoch().count();
  std::ostringstream s;
  s << host << '\n' << getpid() << '\n' << ns << '\n' << r;
  return sha256Hex(s.str()).substr(0, 32);
}

std::string machineFingerprint(const Machine& m) {
  std::ostringstream s;
  s << m.cpuModel << '\n'
    << m.cores << '\n'
    << m.memoryBytes << '\n'
    << m.os << '\n'
    << m.gpuName << '\n'
    << m.gpuDriver;
  return sha256Hex(s.str());
}

std::string buildKey(const Build& b) {
  std::ostringstream s;
  s << b.revision << '\n' << b.dirty << '\n' << b.compilerVersion << '\n' << b.dynqualVersion;
  for (const auto& a : b.artifacts)
    s << '\n' << a.path << '\t' << a.sha256 << '\t' << a.sizeBytes;
  return sha256Hex(s.str());
}

} // namespace dynqual::store
