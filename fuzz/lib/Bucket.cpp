#include "dynqual/fuzz/Bucket.h"

#include "dynqual/fuzz/CaseRunner.h"

#include <cctype>
#include <map>

namespace dynqual::fuzz {

namespace {

bool wordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// `text` after the last "instruction N (...)[ at LOC]: " prefix (and whatever precedes it: the
/// program's path), or after the stage prefix.
std::string stripContext(const std::string& text) {
  std::string s = text;
  // "v0 case: run: " / "v1 case: compile: dynqual compile: " say where, not what.
  for (const char* stage : {"case: run: ", "case: compile: "})
    if (auto at = s.find(stage); at != std::string::npos)
      s = s.substr(at + std::string(stage).size());
  for (const char* tool : {"dynqual compile: ", "dynqual-exec: "})
    if (s.rfind(tool, 0) == 0)
      s = s.substr(std::string(tool).size());
  size_t at = s.rfind("instruction ");
  if (at != std::string::npos) {
    size_t colon = s.find(": ", at);
    if (colon != std::string::npos)
      s = s.substr(colon + 2);
  }
  return s;
}

/// The runtime opcode of "instruction N (OPCODE 'name')" in `detail`, or "".
std::string instructionOpcode(const std::string& detail) {
  size_t at = detail.rfind("instruction ");
  if (at == std::string::npos)
    return "";
  size_t open = detail.find(" (", at);
  if (open == std::string::npos || open > detail.find(':', at))
    return "";
  size_t end = detail.find_first_of(" )", open + 2);
  return end == std::string::npos ? "" : detail.substr(open + 2, end - open - 2);
}

} // namespace

std::string BucketKey::text() const {
  return symptom + "|" + pass + "|" + origin + "|" + message;
}

std::string BucketKey::hash() const {
  return fnv1aHex(text());
}

std::string normalizeMessage(const std::string& detail) {
  std::string s = stripContext(detail);
  std::string out;
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if (c == '\'' || c == '"') {
      size_t end = s.find(c, i + 1);
      if (end != std::string::npos) {
        out += c;
        out += '_';
        out += c;
        i = end + 1;
        continue;
      }
    }
    if (c == '[') {
      int depth = 0;
      size_t j = i;
      for (; j < s.size(); ++j) {
        depth += s[j] == '[' ? 1 : s[j] == ']' ? -1 : 0;
        if (depth == 0)
          break;
      }
      if (j < s.size()) {
        out += "[_]";
        i = j + 1;
        continue;
      }
    }
    if (c == '/' && (i == 0 || s[i - 1] == ' ')) { // a path
      size_t j = s.find_first_of(" :,", i);
      out += "PATH";
      i = j == std::string::npos ? s.size() : j;
      continue;
    }
    if (wordChar(c)) {
      size_t j = i;
      bool digit = false;
      while (j < s.size() && (wordChar(s[j]) || s[j] == '.' || s[j] == '-')) {
        digit |= std::isdigit(static_cast<unsigned char>(s[j])) != 0;
        ++j;
      }
      out += digit ? std::string("#") : s.substr(i, j - i);
      i = j;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ')
        out += ' ';
      ++i;
      continue;
    }
    out += c;
    ++i;
  }
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
  if (out.size() > 120)
    out = out.substr(0, 120);
  return out;
}

std::string originOp(const onnx::ModelProto& model, const std::string& detail) {
  // A trap in a runtime instruction other than a kernel (an output allocation, a scalar
  // readback, a host store, a view) starts there, whichever graph node the value belongs to.
  std::string opcode = instructionOpcode(detail);
  if (!opcode.empty() && opcode != "Kernel")
    return opcode;
  size_t best = std::string::npos;
  std::string op = "-";
  for (const auto& n : model.graph().node()) {
    const std::string& name = n.name();
    if (name.empty())
      continue;
    for (size_t at = detail.find(name); at != std::string::npos; at = detail.find(name, at + 1)) {
      size_t end = at + name.size();
      bool whole = (at == 0 || !wordChar(detail[at - 1])) && (end == detail.size() || !wordChar(detail[end]));
      if (whole) {
        if (at < best) {
          best = at;
          op = n.op_type();
        }
        break;
      }
    }
  }
  if (best != std::string::npos)
    return op;
  // A comparison names the graph output: its producer is where the wrong value comes from.
  const std::string marker = "output '";
  if (auto at = detail.find(marker); at != std::string::npos) {
    size_t end = detail.find('\'', at + marker.size());
    std::string out =
        detail.substr(at + marker.size(), end == std::string::npos ? std::string::npos : end - at - marker.size());
    for (const auto& n : model.graph().node())
      for (const auto& o : n.output())
        if (o == out)
          return n.op_type();
    for (const auto& in : model.graph().input())
      if (in.name() == out)
        return "input";
  }
  return "-";
}

BucketKey makeBucketKey(const std::string& symptom, const std::string& pass, const onnx::ModelProto& minimized,
                        const std::string& minimizedDetail) {
  return {symptom, pass, originOp(minimized, minimizedDetail), normalizeMessage(minimizedDetail)};
}

bool nodeOwnOpcode(const std::string& opcode) {
  // What lowers one node's computation (its views, shape checks, scalar shape arithmetic, its
  // kernel), as against allocation and host-device transfers, which serve every node alike.
  static const char* kOwn[] = {"Kernel", "View", "CheckShape", "Dim", "Assert", "ScalarBinary", "Select", "ConstIndex"};
  for (const char* o : kOwn)
    if (opcode == o)
      return true;
  return false;
}

BucketKey tracedBucketKey(const BucketKey& today, const OriginTrace& trace) {
  if (trace.result == OriginTrace::Result::Difference)
    return {trace.kind, today.pass, trace.op, kTracedMessage};
  if (trace.result != OriginTrace::Result::Trap || trace.kind != "run-trap")
    return today;
  std::string opcode = instructionOpcode(trace.detail);
  if (opcode.empty() || nodeOwnOpcode(opcode))
    return {trace.kind, today.pass, trace.op, kTracedTrapMessage};
  // An allocation or transfer instruction: the instruction and the headline of its message
  // (up to the first ':'), as the untraced key keeps them apart.
  std::string headline = normalizeMessage(trace.detail);
  if (auto colon = headline.find(':'); colon != std::string::npos)
    headline = headline.substr(0, colon);
  return {trace.kind, today.pass, opcode, "traced: " + headline};
}

namespace {

std::string typeText(const onnx::TypeProto& t) {
  if (!t.has_tensor_type())
    return "?";
  const auto& tt = t.tensor_type();
  std::string s = onnx::TensorProto_DataType_Name(tt.elem_type());
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!tt.has_shape())
    return s + "[?]";
  s += "[";
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    s += (i ? "," : "") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
  }
  return s + "]";
}

std::string attrText(const onnx::AttributeProto& a) {
  std::string v;
  switch (a.type()) {
  case onnx::AttributeProto::INT:
    v = std::to_string(a.i());
    break;
  case onnx::AttributeProto::FLOAT:
    v = std::to_string(a.f());
    break;
  case onnx::AttributeProto::STRING:
    v = "'" + a.s() + "'";
    break;
  case onnx::AttributeProto::INTS:
    v = "[";
    for (int i = 0; i < a.ints_size(); ++i)
      v += (i ? "," : "") + std::to_string(a.ints(i));
    v += "]";
    break;
  case onnx::AttributeProto::TENSOR: {
    v = "tensor";
    const auto& t = a.t();
    if (t.int64_data_size() > 0 && t.int64_data_size() <= 8) {
      v = "[";
      for (int i = 0; i < t.int64_data_size(); ++i)
        v += (i ? "," : "") + std::to_string(t.int64_data(i));
      v += "]";
    }
    break;
  }
  default:
    v = "...";
    break;
  }
  return a.name() + "=" + v;
}

} // namespace

std::string graphText(const onnx::ModelProto& model) {
  const auto& g = model.graph();
  std::string s;
  std::map<std::string, bool> init;
  for (const auto& i : g.initializer())
    init[i.name()] = true;
  for (const auto& in : g.input())
    if (!init.count(in.name()))
      s += "input " + in.name() + ": " + typeText(in.type()) + "\n";
  for (const auto& n : g.node()) {
    std::string ins, outs, attrs;
    for (const auto& i : n.input())
      ins += (ins.empty() ? "" : ", ") + i;
    for (const auto& o : n.output())
      outs += (outs.empty() ? "" : ", ") + o;
    for (const auto& a : n.attribute())
      attrs += (attrs.empty() ? "" : " ") + attrText(a);
    s += (n.name().empty() ? n.op_type() : n.name()) + " = " + n.op_type() + (attrs.empty() ? "" : "{" + attrs + "}") +
         "(" + ins + ") -> " + outs + "\n";
  }
  for (const auto& o : g.output())
    s += "output " + o.name() + ": " + typeText(o.type()) + "\n";
  return s;
}

} // namespace dynqual::fuzz
