#include "dynqual/exec/Variant.h"

#include "dq/Pipeline/ProductionOptions.h"
#include "dq/runtime/Device.h"

#include <algorithm>
#include <cctype>

namespace dynqual::exec {

namespace {

const char* kForms = "forms: dq[:PIPELINE][@sim|@hip], ort:cpu, ext:NAME";

// "production{inject=KNOB views=false}": the options of the named production pipeline.
void checkProductionOptions(const std::string& text, const std::string& pipeline) {
  if (pipeline.rfind("production{", 0) != 0)
    return;
  dq::ProductionOptions options;
  std::string why;
  if (pipeline.back() != '}')
    throw VariantError("variant '" + text + "': production options end with '}'");
  if (!dq::parseProductionOptions(pipeline.substr(11, pipeline.size() - 12), options, why))
    throw VariantError("variant '" + text + "': " + why);
}

bool isWord(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; });
}

VariantError bad(const std::string& text, const std::string& why) {
  return VariantError("variant '" + text + "': " + why + " (" + kForms + ")");
}

} // namespace

std::string Variant::text() const {
  switch (kind) {
  case Kind::Dq:
    return "dq:" + pipeline + "@" + device;
  case Kind::Ort:
    return "ort:" + device;
  case Kind::Ext:
    return "ext:" + runner;
  }
  return "?";
}

Variant parseVariant(const std::string& text) {
  Variant v;
  if (text.rfind("ort", 0) == 0 && (text.size() == 3 || text[3] == ':')) {
    v.kind = Variant::Kind::Ort;
    v.device = text.size() > 4 ? text.substr(4) : "";
    if (v.device != "cpu")
      throw bad(text, "onnxruntime runs only as ort:cpu here");
    return v;
  }
  if (text.rfind("ext:", 0) == 0) {
    v.kind = Variant::Kind::Ext;
    v.runner = text.substr(4);
    if (!isWord(v.runner))
      throw bad(text, "ext needs a runner NAME of letters, digits, '_', '-' or '.'");
    return v;
  }
  if (text.rfind("dq", 0) != 0 || (text.size() > 2 && text[2] != ':' && text[2] != '@'))
    throw bad(text, "unknown kind");
  std::string rest = text.substr(2);
  if (auto at = rest.rfind('@'); at != std::string::npos && isWord(rest.substr(at + 1))) {
    v.device = rest.substr(at + 1);
    rest = rest.substr(0, at);
  }
  // The runtime's registry says which devices a variant may name (dq::rt::deviceRegistry).
  const auto& devices = dq::rt::deviceRegistry();
  if (std::none_of(devices.begin(), devices.end(),
                   [&](const dq::rt::DeviceInfo& d) { return d.variant && v.device == d.name; })) {
    std::string names = dq::rt::deviceNames(true);
    if (auto comma = names.rfind(", "); comma != std::string::npos)
      names.replace(comma, 2, " or ");
    throw bad(text, "device '" + v.device + "' is not " + names);
  }
  if (!rest.empty()) {
    if (rest[0] != ':' || rest.size() == 1)
      throw bad(text, "expected ':PIPELINE' after dq");
    v.pipeline = rest.substr(1);
    checkProductionOptions(text, v.pipeline);
  }
  return v;
}

} // namespace dynqual::exec
