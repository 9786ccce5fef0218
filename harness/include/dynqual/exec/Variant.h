#pragma once
// The variant grammar shared by every command that names what to run (ab, gate, calibrate,
// later fuzz). docs/variants.md is the user-facing page.
//
//   dq[:PIPELINE][@DEVICE]   this project's compiler; PIPELINE is "production" (default) or an
//                            MLIR pass-pipeline spec; DEVICE is sim (default) or hip
//   ort:cpu                  onnxruntime 1.30 through the shipped runner (harness/runners)
//   ext:NAME                 an external runner declared in a runner config file
#include <stdexcept>
#include <string>

namespace dynqual::exec {

/// A variant that does not parse; the message quotes it and names the accepted forms.
class VariantError : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

struct Variant {
  enum class Kind { Dq, Ort, Ext };
  Kind kind = Kind::Dq;
  std::string pipeline = "production"; ///< dq only
  std::string device = "sim";          ///< dq: a registry device a variant may name (sim, hip); ort: cpu
  std::string runner;                  ///< ext: the NAME in the runner config
  /// Canonical spelling ("dq:production@sim", "ort:cpu", "ext:myep").
  std::string text() const;
};

/// Parses one variant. The device suffix is the text after the last '@' when it is a plain word
/// (so a pipeline spec may contain '@' elsewhere). Throws VariantError for an unknown kind, an
/// empty pipeline, a device other than sim/hip, ort with anything but cpu, or ext without a name.
Variant parseVariant(const std::string& text);

} // namespace dynqual::exec
