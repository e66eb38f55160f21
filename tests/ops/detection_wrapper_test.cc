// TFLite_Detection_PostProcess through the interpreter, served without the application registering anything (as
// LiteRT's builtin resolver serves it): options from the flexbuffer map, float32 and uint8 inputs, output shapes,
// the precedence of a user's operator of the same name, and the errors with their messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/c_api.h"
#include "kiln/c_api_opaque.h"
#include "kiln/operator.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::CollectErrors;
using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

constexpr const char* kName = "TFLite_Detection_PostProcess";

FlexMap DefaultOptions() {
  FlexMap m;
  m.Int("max_detections", 3)
      .Int("max_classes_per_detection", 1)
      .Int("num_classes", 2)
      .Float("nms_score_threshold", 0.0f)
      .Float("nms_iou_threshold", 0.5f)
      .Float("y_scale", 10.0f)
      .Float("x_scale", 10.0f)
      .Float("h_scale", 5.0f)
      .Float("w_scale", 5.0f);
  return m;
}

struct Shapes {
  std::vector<int> boxes = {1, 3, 4};
  std::vector<int> scores = {1, 3, 3};
  std::vector<int> anchors = {3, 4};
  KilnType box_type = kKilnFloat32;
  KilnType score_type = kKilnFloat32;
  KilnType output_type = kKilnFloat32;
  int slots = 3;
};

// Three anchors (y, x, h, w): 0 and 1 overlap with IoU 0.6, 2 stands apart; zero encodings decode to the anchor.
const std::vector<float> kAnchors = {0.5f, 0.5f, 1.0f, 1.0f, 0.5f, 0.75f, 1.0f, 1.0f, 3.0f, 3.0f, 1.0f, 1.0f};

void Build(ModelWriter& w, const std::vector<uint8_t>& options, const Shapes& s = Shapes()) {
  const int boxes = w.AddTensor(s.box_type, s.boxes, "box_encodings");
  const int scores = w.AddTensor(s.score_type, s.scores, "class_predictions");
  int anchors;
  if (s.box_type == kKilnUInt8) {
    std::vector<uint8_t> a;
    for (float v : kAnchors) a.push_back(static_cast<uint8_t>(v * 50));
    anchors = w.AddConstTensor(kKilnUInt8, s.anchors, "anchors", a);
    w.SetQuantization(anchors, {0.02f}, {0});
    w.SetQuantization(boxes, {0.5f}, {128});
  } else if (s.anchors[0] == 0) {  // no boxes: an empty constant cannot be written, so a (empty) model input
    anchors = w.AddTensor(kKilnFloat32, s.anchors, "anchors");
  } else {
    std::vector<float> a = kAnchors;
    a.resize(static_cast<size_t>(s.anchors[0]) * (s.anchors.size() > 1 ? s.anchors[1] : 1), 1.0f);
    anchors = w.AddConstTensor(kKilnFloat32, s.anchors, "anchors", a);
  }
  if (s.score_type == kKilnUInt8) w.SetQuantization(scores, {0.01f}, {0});
  const int out_boxes = w.AddTensor(s.output_type, {1, s.slots, 4}, "detection_boxes");
  const int classes = w.AddTensor(kKilnFloat32, {1, s.slots}, "detection_classes");
  const int out_scores = w.AddTensor(kKilnFloat32, {1, s.slots}, "detection_scores");
  const int count = w.AddTensor(kKilnFloat32, {1}, "num_detections");
  w.AddCustomOp(kName, {boxes, scores, anchors}, {out_boxes, classes, out_scores, count}, options);
  if (s.anchors[0] == 0) {
    w.SetInputs({boxes, scores, anchors});
  } else {
    w.SetInputs({boxes, scores});
  }
  w.SetOutputs({out_boxes, classes, out_scores, count});
}

TEST(DetectionWrapperTest, ServedWithoutRegistrationFastNms) {
  ModelWriter w;
  Build(w, DefaultOptions().Finish());
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const std::vector<float> boxes(12, 0.0f);
  // Background first: box 0 best class 1 (0.7), box 1 best class 0 (0.9), box 2 class 1 (0.3).
  const std::vector<float> scores = {0.0f, 0.1f, 0.7f, 0.5f, 0.9f, 0.2f, 0.1f, 0.0f, 0.3f};
  r.SetInput(0, boxes.data(), boxes.size() * 4);
  r.SetInput(1, scores.data(), scores.size() * 4);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.OutputDims(0), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(r.OutputDims(1), (std::vector<int>{1, 3}));
  EXPECT_EQ(r.OutputDims(3), (std::vector<int>{1}));
  EXPECT_EQ(r.Output(0), (std::vector<float>{0.0f, 0.25f, 1.0f, 1.25f, 2.5f, 2.5f, 3.5f, 3.5f, 0, 0, 0, 0}));
  EXPECT_EQ(r.Output(1), (std::vector<float>{0, 1, 0}));
  EXPECT_EQ(r.Output(2), (std::vector<float>{0.9f, 0.3f, 0}));
  EXPECT_EQ(r.Output(3), (std::vector<float>{2}));
}

TEST(DetectionWrapperTest, RegularNmsAndTwoClassesPerDetection) {
  {
    ModelWriter w;
    Build(w, DefaultOptions().Bool("use_regular_nms", true).Int("detections_per_class", 2).Finish());
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const std::vector<float> boxes(12, 0.0f);
    const std::vector<float> scores = {0.0f, 0.1f, 0.7f, 0.5f, 0.9f, 0.2f, 0.1f, 0.0f, 0.3f};
    r.SetInput(0, boxes.data(), boxes.size() * 4);
    r.SetInput(1, scores.data(), scores.size() * 4);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    // Per class: class 0 keeps box 1 (0.9) (box 2's 0.1... also kept: no overlap), class 1 keeps box 0 (0.7) and
    // box 2 (0.3); box 1's 0.2 in class 1 overlaps box 0 by 0.6 and goes.
    EXPECT_EQ(r.Output(2), (std::vector<float>{0.9f, 0.7f, 0.3f}));
    EXPECT_EQ(r.Output(1), (std::vector<float>{0, 1, 1}));
    EXPECT_EQ(r.Output(3), (std::vector<float>{3}));
  }
  {
    ModelWriter w;
    Shapes s;
    s.slots = 6;
    Build(w, DefaultOptions().Int("max_classes_per_detection", 2).Finish(), s);
    Runner r(w);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    EXPECT_EQ(r.OutputDims(0), (std::vector<int>{1, 6, 4}));
    const std::vector<float> boxes(12, 0.0f);
    const std::vector<float> scores = {0.0f, 0.1f, 0.7f, 0.5f, 0.9f, 0.2f, 0.1f, 0.0f, 0.3f};
    r.SetInput(0, boxes.data(), boxes.size() * 4);
    r.SetInput(1, scores.data(), scores.size() * 4);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(1), (std::vector<float>{0, 1, 1, 0, 0, 0}));
    EXPECT_EQ(r.Output(2), (std::vector<float>{0.9f, 0.2f, 0.3f, 0.0f, 0, 0}));
  }
}

TEST(DetectionWrapperTest, Uint8InputsAreDequantized) {
  ModelWriter w;
  Shapes s;
  s.box_type = kKilnUInt8;
  s.score_type = kKilnUInt8;
  Build(w, DefaultOptions().Finish(), s);
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const std::vector<uint8_t> boxes(12, 128);  // (128 - 128) * 0.5 = 0: the anchors themselves
  const std::vector<uint8_t> scores = {0, 10, 70, 50, 90, 20, 10, 0, 30};
  r.SetInput(0, boxes.data(), boxes.size());
  r.SetInput(1, scores.data(), scores.size());
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(1), (std::vector<float>{0, 1, 0}));
  const std::vector<float> got = r.Output(2);
  EXPECT_FLOAT_EQ(got[0], 0.9f);
  EXPECT_FLOAT_EQ(got[1], 0.3f);
  EXPECT_EQ(r.Output(3), (std::vector<float>{2}));
}

TEST(DetectionWrapperTest, NoBoxesAndNoDetections) {
  ModelWriter w;
  Shapes s;
  s.boxes = {1, 0, 4};
  s.scores = {1, 0, 3};
  s.anchors = {0, 4};
  Build(w, DefaultOptions().Finish(), s);
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(3), (std::vector<float>{0}));
  EXPECT_EQ(r.Output(2), (std::vector<float>{0, 0, 0}));
  ModelWriter w0;
  Shapes s0;
  s0.slots = 0;
  Build(w0, DefaultOptions().Int("max_detections", 0).Finish(), s0);
  Runner r0(w0);
  ASSERT_EQ(r0.status(), kKilnOk) << r0.errors();
  const std::vector<float> boxes(12, 0.0f), scores(9, 0.5f);
  r0.SetInput(0, boxes.data(), boxes.size() * 4);
  r0.SetInput(1, scores.data(), scores.size() * 4);
  ASSERT_EQ(r0.Invoke(), kKilnOk) << r0.errors();
  EXPECT_EQ(r0.OutputDims(0), (std::vector<int>{1, 0, 4}));
  EXPECT_EQ(r0.Output(3), (std::vector<float>{0}));
}

TEST(DetectionWrapperTest, BadOptionsFailPrepare) {
  for (const char* key : {"max_detections", "max_classes_per_detection", "num_classes", "nms_score_threshold",
                          "nms_iou_threshold", "y_scale", "x_scale", "h_scale", "w_scale"}) {
    FlexMap m;
    // Every required key but `key`.
    const std::vector<std::pair<const char*, float>> all = {{"max_detections", 3},
                                                            {"max_classes_per_detection", 1},
                                                            {"num_classes", 2},
                                                            {"nms_score_threshold", 0},
                                                            {"nms_iou_threshold", 0.5f},
                                                            {"y_scale", 10},
                                                            {"x_scale", 10},
                                                            {"h_scale", 5},
                                                            {"w_scale", 5}};
    for (const auto& [k, v] : all) {
      if (std::string(k) == key) continue;
      if (std::string(k).find("max_") == 0 || std::string(k) == "num_classes") {
        m.Int(k, static_cast<int64_t>(v));
      } else {
        m.Float(k, v);
      }
    }
    ModelWriter w;
    Build(w, m.Finish());
    Runner r(w);
    ExpectErrorMentions(r, {kName, key, "missing"});
  }
  const struct {
    FlexMap options;
    std::vector<std::string> words;
  } cases[] = {
      {DefaultOptions().Int("num_classes", 0), {"num_classes is 0", "at least 1"}},
      {DefaultOptions().Int("max_detections", -1), {"max_detections is -1"}},
      {DefaultOptions().Int("max_classes_per_detection", 0), {"max_classes_per_detection is 0"}},
      {DefaultOptions().Bool("use_regular_nms", true).Int("detections_per_class", 0), {"detections_per_class is 0"}},
      {DefaultOptions().Float("nms_iou_threshold", 0.0f), {"nms_iou_threshold is 0", "(0, 1]"}},
      {DefaultOptions().Float("nms_iou_threshold", 1.5f), {"nms_iou_threshold is 1.5"}},
      {DefaultOptions().Float("h_scale", 0.0f), {"'h_scale' is 0"}},
      {DefaultOptions().Float("max_detections", 2.5f), {"'max_detections' is 2.5", "integer"}},
      {DefaultOptions().Int("max_detections", 1 << 20).Int("max_classes_per_detection", 1 << 20), {"too large"}},
      {DefaultOptions().Int("max_detections", 150994947), {"too large", "at most 1048576"}},
      // num_classes 4 needs 4 or 5 score columns; the scores tensor has 3.
      {DefaultOptions().Int("num_classes", 4), {"class_predictions", "num_classes 4 needs 4 or 5"}},
      {DefaultOptions().Int("num_classes", 1), {"class_predictions", "num_classes 1 needs 1 or 2"}},
  };
  for (const auto& c : cases) {
    ModelWriter w;
    Build(w, c.options.Finish());
    Runner r(w);
    std::vector<std::string> words = c.words;
    words.push_back(kName);
    ExpectErrorMentions(r, words);
  }
  ModelWriter w;
  Build(w, {});
  Runner r(w);
  ExpectErrorMentions(r, {kName, "no custom options"});
}

TEST(DetectionWrapperTest, BadTensorsFailPrepare) {
  const auto check = [](const Shapes& s, const std::vector<std::string>& words) {
    ModelWriter w;
    Build(w, DefaultOptions().Finish(), s);
    Runner r(w);
    std::vector<std::string> all = words;
    all.push_back(kName);
    ExpectErrorMentions(r, all);
  };
  Shapes s;
  s.boxes = {1, 3, 3};
  check(s, {"box_encodings", "[1, boxes, >= 4]"});
  s = Shapes();
  s.boxes = {2, 3, 4};
  s.scores = {2, 3, 3};
  check(s, {"box_encodings"});
  s = Shapes();
  s.scores = {1, 2, 3};
  check(s, {"class_predictions", "[1, 3, classes]"});
  s = Shapes();
  s.boxes = {3, 4};
  check(s, {"box_encodings", "rank"});
  s = Shapes();
  s.anchors = {3, 5};
  check(s, {"anchors", "[3, 4]"});
  s = Shapes();
  s.anchors = {2, 4};
  check(s, {"anchors", "[3, 4]"});
  s = Shapes();
  s.box_type = kKilnInt8;
  check(s, {"box_encodings", "int8", "float32 or uint8"});
  s = Shapes();
  s.score_type = kKilnInt32;
  check(s, {"class_predictions", "int32", "float32 or uint8"});
  s = Shapes();
  s.output_type = kKilnUInt8;
  check(s, {"detection_boxes"});
}

TEST(DetectionWrapperTest, InvertedAnchorsFailInvoke) {
  ModelWriter w;
  const int boxes = w.AddTensor(kKilnFloat32, {1, 1, 4}, "box_encodings");
  const int scores = w.AddTensor(kKilnFloat32, {1, 1, 1}, "class_predictions");
  const int anchors = w.AddConstTensor(kKilnFloat32, {1, 4}, "anchors", std::vector<float>{0, 0, -1, 1});
  std::vector<int> outs;
  outs.push_back(w.AddTensor(kKilnFloat32, {1, 3, 4}, "detection_boxes"));
  outs.push_back(w.AddTensor(kKilnFloat32, {1, 3}, "detection_classes"));
  outs.push_back(w.AddTensor(kKilnFloat32, {1, 3}, "detection_scores"));
  outs.push_back(w.AddTensor(kKilnFloat32, {1}, "num_detections"));
  w.AddCustomOp(kName, {boxes, scores, anchors}, outs, DefaultOptions().Int("num_classes", 1).Finish());
  w.SetInputs({boxes, scores});
  w.SetOutputs(outs);
  Runner r(w);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  const std::vector<float> b(4, 0.0f), sc(1, 0.5f);
  r.SetInput(0, b.data(), 16);
  r.SetInput(1, sc.data(), 4);
  EXPECT_NE(r.Invoke(), kKilnOk);
  EXPECT_NE(r.errors().find("inverted"), std::string::npos) << r.errors();
  EXPECT_NE(r.errors().find("'anchors'"), std::string::npos) << r.errors();
}

KilnStatus FillSeven(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KilnOpaqueTensor* count = KilnOpaqueNodeGetOutput(context, node, 3);
  *static_cast<float*>(KilnOpaqueTensorData(count)) = 7.0f;
  return kKilnOk;
}

TEST(DetectionWrapperTest, AUsersOperatorOfTheSameNameWins) {
  ModelWriter w;
  Build(w, DefaultOptions().Finish());
  const std::vector<uint8_t> bytes = w.Finish();
  KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, kName, 1);
  KilnOperatorSetInvoke(op, &FillSeven);
  std::string errors;
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsAddOperator(options, op);
  KilnInterpreterOptionsSetErrorReporter(options, &CollectErrors, &errors);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  ASSERT_NE(interpreter, nullptr) << errors;
  ASSERT_EQ(KilnInterpreterAllocateTensors(interpreter), kKilnOk) << errors;
  ASSERT_EQ(KilnInterpreterInvoke(interpreter), kKilnOk) << errors;
  float count = 0;
  ASSERT_EQ(KilnTensorCopyToBuffer(KilnInterpreterGetOutputTensor(interpreter, 3), &count, 4), kKilnOk);
  EXPECT_EQ(count, 7.0f);
  KilnInterpreterDelete(interpreter);
  KilnModelDelete(model);
  KilnOperatorDelete(op);
}

TEST(DetectionWrapperTest, TheCApiSaysItIsServed) {
  EXPECT_TRUE(KilnCustomOpIsSupported(kName, 1));
  EXPECT_TRUE(KilnCustomOpIsSupported(kName, 0));
  EXPECT_FALSE(KilnCustomOpIsSupported(kName, 2));
  EXPECT_FALSE(KilnCustomOpIsSupported("Atan", 0));
  EXPECT_FALSE(KilnCustomOpIsSupported(nullptr, 0));
  EXPECT_FALSE(KilnBuiltinOpIsSupported(kKilnBuiltinCustom, 0));
}

TEST(DetectionWrapperTest, OnlyVersionOneIsServed) {
  ModelWriter w;
  Build(w, DefaultOptions().Finish());
  w.SetOpVersion(0, 2);
  Runner r(w);
  ExpectErrorMentions(r, {"unresolved custom op", kName});
}

}  // namespace
}  // namespace kiln::ops
