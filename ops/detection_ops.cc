// TFLite_Detection_PostProcess: the custom op LiteRT's builtin resolver serves out of the box (SSD models end in
// it), served the same way here: registered in the builtin table under its custom name, version 1, so that a
// model needs nothing from the application (a user's operator of the same name still takes precedence). Options
// come from its flexbuffer map; the kernel is ops/reference/detection.h.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kiln/c_api_opaque.h"
#include "kiln/flex.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/detection.h"

namespace kiln::ops {
namespace {

constexpr const char* kOp = "TFLite_Detection_PostProcess";
constexpr int64_t kMaxSlots = int64_t{1} << 20;  // max_detections * max_classes_per_detection

struct DetectionState {
  reference::DetectionParams params;
  KilnType box_type = kKilnFloat32;    // box encodings and anchors: float32, or uint8 (both, quantized)
  KilnType score_type = kKilnFloat32;  // float32 or uint8
  float box_scale = 0, anchor_scale = 0, score_scale = 0;
  int32_t box_zero_point = 0, anchor_zero_point = 0, score_zero_point = 0;
  std::vector<float> encodings, anchors, scores, decoded;  // dequantized inputs; decoded boxes
};

KilnStatus ReadInt(KilnOpaqueContext* context, const void* data, int size, const char* key, bool required, int fallback,
                   int* out) {
  int64_t value = 0;
  if (KilnFlexMapGetInt(data, static_cast<size_t>(size), key, &value) != kKilnOk) {
    float as_float = 0;
    if (KilnFlexMapGetFloat(data, static_cast<size_t>(size), key, &as_float) == kKilnOk) {
      KilnOpaqueContextReportError(context, "%s: option '%s' is %g; expected an integer", kOp, key, as_float);
      return kKilnError;
    }
    if (!required) {
      *out = fallback;
      return kKilnOk;
    }
    KilnOpaqueContextReportError(context, "%s: option '%s' is missing from the custom options (or not an integer)", kOp,
                                 key);
    return kKilnError;
  }
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    KilnOpaqueContextReportError(context, "%s: option '%s' is %lld, beyond int32", kOp, key,
                                 static_cast<long long>(value));
    return kKilnError;
  }
  *out = static_cast<int>(value);
  return kKilnOk;
}

KilnStatus ReadFloat(KilnOpaqueContext* context, const void* data, int size, const char* key, float* out) {
  if (KilnFlexMapGetFloat(data, static_cast<size_t>(size), key, out) != kKilnOk) {
    KilnOpaqueContextReportError(context, "%s: option '%s' is missing from the custom options (or not a number)", kOp,
                                 key);
    return kKilnError;
  }
  if (!std::isfinite(*out)) {
    KilnOpaqueContextReportError(context, "%s: option '%s' is %g; expected a finite number", kOp, key, *out);
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus ReadOptions(KilnOpaqueContext* context, const KilnOpaqueNode* node, reference::DetectionParams* p) {
  const void* data = nullptr;
  int size = 0;
  if (KilnOpaqueNodeGetCustomInitialData(node, &data, &size) != kKilnOk || data == nullptr || size <= 0) {
    KilnOpaqueContextReportError(context, "%s: the node has no custom options (a flexbuffer map is required)", kOp);
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(ReadInt(context, data, size, "max_detections", true, 0, &p->max_detections));
  KILN_OPAQUE_ENSURE_STATUS(
      ReadInt(context, data, size, "max_classes_per_detection", true, 0, &p->max_classes_per_detection));
  KILN_OPAQUE_ENSURE_STATUS(ReadInt(context, data, size, "detections_per_class", false, 100, &p->detections_per_class));
  KILN_OPAQUE_ENSURE_STATUS(ReadInt(context, data, size, "num_classes", true, 0, &p->num_classes));
  bool regular = false;
  if (KilnFlexMapGetBool(data, static_cast<size_t>(size), "use_regular_nms", &regular) != kKilnOk) {
    int as_int = 0;
    KILN_OPAQUE_ENSURE_STATUS(ReadInt(context, data, size, "use_regular_nms", false, 0, &as_int));
    regular = as_int != 0;
  }
  p->use_regular_nms = regular;
  KILN_OPAQUE_ENSURE_STATUS(ReadFloat(context, data, size, "nms_score_threshold", &p->score_threshold));
  KILN_OPAQUE_ENSURE_STATUS(ReadFloat(context, data, size, "nms_iou_threshold", &p->iou_threshold));
  KILN_OPAQUE_ENSURE_STATUS(ReadFloat(context, data, size, "y_scale", &p->y_scale));
  KILN_OPAQUE_ENSURE_STATUS(ReadFloat(context, data, size, "x_scale", &p->x_scale));
  KILN_OPAQUE_ENSURE_STATUS(ReadFloat(context, data, size, "h_scale", &p->h_scale));
  KILN_OPAQUE_ENSURE_STATUS(ReadFloat(context, data, size, "w_scale", &p->w_scale));

  if (p->num_classes <= 0) {
    KilnOpaqueContextReportError(context, "%s: num_classes is %d; expected at least 1", kOp, p->num_classes);
    return kKilnError;
  }
  if (p->max_detections < 0) {
    KilnOpaqueContextReportError(context, "%s: max_detections is %d; expected 0 or more", kOp, p->max_detections);
    return kKilnError;
  }
  if (p->max_classes_per_detection <= 0) {
    KilnOpaqueContextReportError(context, "%s: max_classes_per_detection is %d; expected at least 1", kOp,
                                 p->max_classes_per_detection);
    return kKilnError;
  }
  if (p->use_regular_nms && p->detections_per_class <= 0) {
    KilnOpaqueContextReportError(context, "%s: detections_per_class is %d; regular NMS needs at least 1", kOp,
                                 p->detections_per_class);
    return kKilnError;
  }
  if (!(p->iou_threshold > 0.0f && p->iou_threshold <= 1.0f)) {
    KilnOpaqueContextReportError(context, "%s: nms_iou_threshold is %g; expected a value in (0, 1]", kOp,
                                 p->iou_threshold);
    return kKilnError;
  }
  const struct {
    const char* name;
    float value;
  } scales[] = {{"y_scale", p->y_scale}, {"x_scale", p->x_scale}, {"h_scale", p->h_scale}, {"w_scale", p->w_scale}};
  for (const auto& s : scales) {
    if (s.value == 0.0f) {
      KilnOpaqueContextReportError(context, "%s: option '%s' is 0; the box decoding divides by it", kOp, s.name);
      return kKilnError;
    }
  }
  // LiteRT only refuses an int32 overflow here; Kiln bounds the output slots far above any real model, so that a
  // few option bytes cannot ask for gigabytes of output.
  const int64_t slots = static_cast<int64_t>(p->max_detections) * p->max_classes_per_detection;
  if (slots > kMaxSlots) {
    KilnOpaqueContextReportError(context,
                                 "%s: max_detections %d x max_classes_per_detection %d is too large (at most %lld "
                                 "output slots)",
                                 kOp, p->max_detections, p->max_classes_per_detection,
                                 static_cast<long long>(kMaxSlots));
    return kKilnError;
  }
  return kKilnOk;
}

KilnStatus CheckDims(KilnOpaqueContext* context, const char* role, const KilnOpaqueTensor* tensor, const Dims& expected,
                     const char* meaning) {
  if (TensorDims(tensor) == expected) return kKilnOk;
  KilnOpaqueContextReportError(context, "%s: %s %s has shape %s; expected %s (%s)", kOp, role,
                               TensorLabel(tensor).c_str(), DimsToString(TensorDims(tensor)).c_str(),
                               DimsToString(expected).c_str(), meaning);
  return kKilnError;
}

KilnStatus DetectionPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KILN_OPS_GET_STATE(DetectionState, state, context, node, kOp);
  reference::DetectionParams& p = state->params;
  KILN_OPAQUE_ENSURE_STATUS(ReadOptions(context, node, &p));
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, kOp, 3, 3, 4));
  const KilnOpaqueTensor *boxes, *scores, *anchors;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, kOp, 0, "box encodings", &boxes));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, kOp, 1, "class predictions", &scores));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, kOp, 2, "anchors", &anchors));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, kOp, "box encodings", boxes, 3, 3));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, kOp, "class predictions", scores, 3, 3));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, kOp, "anchors", anchors, 2, 2));
  const Dims box_dims = TensorDims(boxes), score_dims = TensorDims(scores);
  if (box_dims[0] != 1 || box_dims[2] < 4) {
    KilnOpaqueContextReportError(context, "%s: box encodings %s have shape %s; expected [1, boxes, >= 4]", kOp,
                                 TensorLabel(boxes).c_str(), DimsToString(box_dims).c_str());
    return kKilnError;
  }
  p.num_boxes = static_cast<int>(box_dims[1]);
  p.box_code_size = static_cast<int>(box_dims[2]);
  if (score_dims[0] != 1 || score_dims[1] != box_dims[1]) {
    KilnOpaqueContextReportError(context, "%s: class predictions %s have shape %s; expected [1, %d, classes]", kOp,
                                 TensorLabel(scores).c_str(), DimsToString(score_dims).c_str(), p.num_boxes);
    return kKilnError;
  }
  p.num_classes_with_background = static_cast<int>(score_dims[2]);
  const int background = p.num_classes_with_background - p.num_classes;
  if (background != 0 && background != 1) {
    KilnOpaqueContextReportError(
        context, "%s: class predictions %s have %d classes per box; num_classes %d needs %d or %d (with background)",
        kOp, TensorLabel(scores).c_str(), p.num_classes_with_background, p.num_classes, p.num_classes,
        p.num_classes + 1);
    return kKilnError;
  }
  KILN_OPAQUE_ENSURE_STATUS(CheckDims(context, "anchors", anchors, {box_dims[1], 4}, "one y, x, h, w per box"));

  state->box_type = KilnOpaqueTensorType(boxes);
  if (state->box_type == kKilnUInt8) {
    KILN_OPAQUE_ENSURE_STATUS(
        GetQuantization8(context, kOp, "box encodings", boxes, kKilnUInt8, &state->box_scale, &state->box_zero_point));
    KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, kOp, "anchors", anchors, kKilnUInt8, &state->anchor_scale,
                                               &state->anchor_zero_point));
  } else if (state->box_type == kKilnFloat32) {
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, kOp, "anchors", anchors));
  } else {
    KilnOpaqueContextReportError(context, "%s: box encodings %s have type %s; expected float32 or uint8", kOp,
                                 TensorLabel(boxes).c_str(), KilnTypeGetName(state->box_type));
    return kKilnError;
  }
  state->score_type = KilnOpaqueTensorType(scores);
  if (state->score_type == kKilnUInt8) {
    KILN_OPAQUE_ENSURE_STATUS(GetQuantization8(context, kOp, "class predictions", scores, kKilnUInt8,
                                               &state->score_scale, &state->score_zero_point));
  } else if (state->score_type != kKilnFloat32) {
    KilnOpaqueContextReportError(context, "%s: class predictions %s have type %s; expected float32 or uint8", kOp,
                                 TensorLabel(scores).c_str(), KilnTypeGetName(state->score_type));
    return kKilnError;
  }

  const int64_t slots = static_cast<int64_t>(p.max_detections) * p.max_classes_per_detection;
  const char* roles[] = {"detection boxes", "detection classes", "detection scores", "num detections"};
  const Dims shapes[] = {{1, slots, 4}, {1, slots}, {1, slots}, {1}};
  for (int i = 0; i < 4; ++i) {
    KilnOpaqueTensor* output;
    KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, kOp, i, &output));
    KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, kOp, roles[i], output));
    KILN_OPAQUE_ENSURE_STATUS(ResizeOutput(context, kOp, output, shapes[i]));
  }
  state->decoded.resize(static_cast<size_t>(p.num_boxes) * 4);
  if (state->box_type == kKilnUInt8) {
    state->encodings.resize(static_cast<size_t>(p.num_boxes) * p.box_code_size);
    state->anchors.resize(static_cast<size_t>(p.num_boxes) * 4);
  }
  if (state->score_type == kKilnUInt8) {
    state->scores.resize(static_cast<size_t>(p.num_boxes) * p.num_classes_with_background);
  }
  return kKilnOk;
}

// uint8 values as LiteRT dequantizes them: (value - zero_point) * scale in float.
void Dequantize(const uint8_t* in, size_t count, int32_t zero_point, float scale, float* out) {
  for (size_t i = 0; i < count; ++i) {
    out[i] = static_cast<float>(static_cast<int32_t>(in[i]) - zero_point) * scale;
  }
}

KilnStatus DetectionInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  KILN_OPS_GET_STATE(DetectionState, state, context, node, kOp);
  const reference::DetectionParams& p = state->params;
  const KilnOpaqueTensor* boxes = KilnOpaqueNodeGetInput(context, node, 0);
  const KilnOpaqueTensor* scores = KilnOpaqueNodeGetInput(context, node, 1);
  const KilnOpaqueTensor* anchors = KilnOpaqueNodeGetInput(context, node, 2);
  const int64_t box_count = static_cast<int64_t>(p.num_boxes) * p.box_code_size;
  const int64_t anchor_count = static_cast<int64_t>(p.num_boxes) * 4;
  const int64_t score_count = static_cast<int64_t>(p.num_boxes) * p.num_classes_with_background;
  const int64_t slots = static_cast<int64_t>(p.max_detections) * p.max_classes_per_detection;
  const size_t box_size = state->box_type == kKilnUInt8 ? 1 : sizeof(float);
  const size_t score_size = state->score_type == kKilnUInt8 ? 1 : sizeof(float);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, kOp, "box encodings", boxes, box_count, box_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, kOp, "anchors", anchors, anchor_count, box_size));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, kOp, "class predictions", scores, score_count, score_size));
  float* out[4];
  const int64_t out_counts[4] = {slots * 4, slots, slots, 1};
  for (int i = 0; i < 4; ++i) {
    KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, i);
    KILN_OPAQUE_ENSURE_STATUS(CheckData(context, kOp, "output", output, out_counts[i], sizeof(float)));
    out[i] = FloatData(output);
  }
  const float* encoding_data = static_cast<const float*>(KilnOpaqueTensorData(boxes));
  const float* anchor_data = static_cast<const float*>(KilnOpaqueTensorData(anchors));
  if (state->box_type == kKilnUInt8) {
    Dequantize(static_cast<const uint8_t*>(KilnOpaqueTensorData(boxes)), state->encodings.size(), state->box_zero_point,
               state->box_scale, state->encodings.data());
    Dequantize(static_cast<const uint8_t*>(KilnOpaqueTensorData(anchors)), state->anchors.size(),
               state->anchor_zero_point, state->anchor_scale, state->anchors.data());
    encoding_data = state->encodings.data();
    anchor_data = state->anchors.data();
  }
  const float* score_data = static_cast<const float*>(KilnOpaqueTensorData(scores));
  if (state->score_type == kKilnUInt8) {
    Dequantize(static_cast<const uint8_t*>(KilnOpaqueTensorData(scores)), state->scores.size(), state->score_zero_point,
               state->score_scale, state->scores.data());
    score_data = state->scores.data();
  }
  if (!reference::DecodeCenterSizeBoxes(p, encoding_data, anchor_data, state->decoded.data())) {
    KilnOpaqueContextReportError(context,
                                 "%s: a decoded box is inverted (ymin > ymax or xmin > xmax): anchors %s hold a "
                                 "negative height or width",
                                 kOp, TensorLabel(anchors).c_str());
    return kKilnError;
  }
  reference::DetectionNonMaxSuppression(p, state->decoded.data(), score_data, out[0], out[1], out[2], out[3]);
  return kKilnOk;
}

}  // namespace

void AddDetectionOps(std::vector<BuiltinOp>* table) {
  // LiteRT's BuiltinOpResolver adds TFLite_Detection_PostProcess as a custom op, version 1.
  KilnOperator* op = KilnOperatorCreate(kKilnBuiltinCustom, "TFLite_Detection_PostProcess", 1);
  if (op != nullptr) {
    KilnOperatorSetInit(op, &InitState<DetectionState>);
    KilnOperatorSetFree(op, &FreeState<DetectionState>);
    KilnOperatorSetPrepare(op, &DetectionPrepare);
    KilnOperatorSetInvoke(op, &DetectionInvoke);
  }
  table->push_back({kKilnBuiltinCustom, 1, 1, op});
}

}  // namespace kiln::ops
