#include "dynqual/exec/Variant.h"

#include <gtest/gtest.h>

using namespace dynqual::exec;

TEST(Variant, DqDefaultsToProductionOnSim) {
  Variant v = parseVariant("dq");
  EXPECT_EQ(v.kind, Variant::Kind::Dq);
  EXPECT_EQ(v.pipeline, "production");
  EXPECT_EQ(v.device, "sim");
  EXPECT_EQ(v.text(), "dq:production@sim");
}

TEST(Variant, DqPipelineAndDevice) {
  Variant v = parseVariant("dq:builtin.module(dq-optimize-memrefs,dq-pool-allocs)@hip");
  EXPECT_EQ(v.pipeline, "builtin.module(dq-optimize-memrefs,dq-pool-allocs)");
  EXPECT_EQ(v.device, "hip");
  EXPECT_EQ(parseVariant("dq@sim").pipeline, "production");
}

TEST(Variant, AtInsideAPipelineIsNotADevice) {
  // Only a plain word after the last '@' is a device.
  Variant v = parseVariant("dq:builtin.module(x{a=@b c})");
  EXPECT_EQ(v.pipeline, "builtin.module(x{a=@b c})");
  EXPECT_EQ(v.device, "sim");
}

TEST(Variant, OrtAndExt) {
  EXPECT_EQ(parseVariant("ort:cpu").kind, Variant::Kind::Ort);
  Variant e = parseVariant("ext:my-ep.v2");
  EXPECT_EQ(e.kind, Variant::Kind::Ext);
  EXPECT_EQ(e.runner, "my-ep.v2");
  EXPECT_EQ(e.text(), "ext:my-ep.v2");
}

TEST(Variant, BadFormsNameTheVariantAndTheForms) {
  for (const char* bad : {"", "tvm", "dq:", "dq@tpu", "dqx", "ort:gpu", "ort", "ext:", "ext:a b"}) {
    try {
      parseVariant(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const VariantError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("ort:cpu"), std::string::npos) << e.what();
    }
  }
}

TEST(Variant, ProductionWithAnInjectKnob) {
  Variant v = parseVariant("dq:production{inject=slice-upper-bound}@sim");
  EXPECT_EQ(v.pipeline, "production{inject=slice-upper-bound}");
  EXPECT_EQ(v.device, "sim");
  EXPECT_EQ(v.text(), "dq:production{inject=slice-upper-bound}@sim");
  // A raw spec with pass options is not checked here (the compiler checks it).
  EXPECT_EQ(parseVariant("dq:builtin.module(dq-convert-onnx{inject=slice-upper-bound})").pipeline,
            "builtin.module(dq-convert-onnx{inject=slice-upper-bound})");
}

TEST(Variant, UnknownInjectKnobListsTheValidOnes) {
  for (const char* bad : {"dq:production{inject=nope}", "dq:production{other=1}@hip"}) {
    try {
      parseVariant(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const VariantError& e) {
      EXPECT_NE(std::string(e.what()).find("reshape-by-type-equality"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("strided-view-base-pointer"), std::string::npos) << e.what();
    }
  }
}
