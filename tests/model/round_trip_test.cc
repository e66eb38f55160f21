// ModelWriter -> ReadModel round trips: every op whose options Kiln parses, the format's defaults for an
// absent options table, quantization, custom options, external (>2 GB layout) data, subgraphs.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/builtin_ops.h"
#include "kiln/flex.h"
#include "runtime/model/model.h"
#include "runtime/model/model_writer.h"
#include "tests/model/model_test_util.h"

namespace kiln {
namespace {

// A ModelDesc points into the bytes it was read from, so every file read here stays alive until exit.
ModelDesc ReadOrDie(std::vector<uint8_t> file) {
  static std::vector<std::unique_ptr<std::vector<uint8_t>>> files;
  files.push_back(std::make_unique<std::vector<uint8_t>>(std::move(file)));
  const std::vector<uint8_t>& bytes = *files.back();
  ModelDesc model;
  std::string error;
  EXPECT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
  return model;
}

// A one-op model: `inputs` float tensors of shape [1, 4, 4, 2] (plus whatever `add_extra` adds), one output.
template <typename Params>
const Params* RoundTrip(KilnBuiltinOperator code, const Params& params, ModelDesc* model,
                        int extra_inputs = 0, std::vector<uint8_t>* bytes_out = nullptr) {
  ModelWriter w;
  std::vector<int> inputs = {w.AddTensor(kKilnFloat32, {1, 4, 4, 2}, "in")};
  for (int i = 0; i < extra_inputs; ++i) {
    inputs.push_back(
        w.AddConstTensor<float>(kKilnFloat32, {2, 2}, "extra" + std::to_string(i), {1, 2, 3, 4}));
  }
  int out = w.AddTensor(kKilnFloat32, {1, 4, 4, 2}, "out");
  EXPECT_EQ(w.AddOp(code, inputs, {out}, params), 0) << w.error();
  w.SetInputs({inputs[0]});
  w.SetOutputs({out});
  std::vector<uint8_t> bytes = w.Finish();
  EXPECT_FALSE(bytes.empty()) << w.error();
  *model = ReadOrDie(bytes);
  if (bytes_out) *bytes_out = bytes;
  if (model->subgraphs.empty() || model->subgraphs[0].operators.size() != 1) return nullptr;
  const OperatorDesc& op = model->subgraphs[0].operators[0];
  EXPECT_EQ(op.builtin_code, code);
  EXPECT_NE(op.builtin_data, nullptr);
  return static_cast<const Params*>(op.builtin_data.get());
}

TEST(RoundTripTest, AddAndSub) {
  for (KilnBuiltinOperator code : {kKilnBuiltinAdd, kKilnBuiltinSub}) {
    for (bool pot : {false, true}) {
      ModelDesc model;
      KilnAddParams in = {kKilnActRelu6, pot};
      const KilnAddParams* out = RoundTrip(code, in, &model, 1);
      ASSERT_NE(out, nullptr);
      EXPECT_EQ(out->activation, kKilnActRelu6);
      EXPECT_EQ(out->pot_scale_int16, pot);
    }
  }
}

TEST(RoundTripTest, MulAndDiv) {
  for (KilnBuiltinOperator code : {kKilnBuiltinMul, kKilnBuiltinDiv}) {
    for (KilnFusedActivation act :
         {kKilnActNone, kKilnActRelu, kKilnActReluN1To1, kKilnActRelu6, kKilnActTanh, kKilnActSignBit}) {
      ModelDesc model;
      const KilnMulParams* out = RoundTrip(code, KilnMulParams{act}, &model, 1);
      ASSERT_NE(out, nullptr);
      EXPECT_EQ(out->activation, act);
    }
  }
}

TEST(RoundTripTest, Conv2d) {
  ModelDesc model;
  KilnConvParams in = {kKilnPaddingValid, 2, 3, 4, 5, kKilnActRelu};
  const KilnConvParams* out = RoundTrip(kKilnBuiltinConv2d, in, &model, 1);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->padding, kKilnPaddingValid);
  EXPECT_EQ(out->stride_width, 2);
  EXPECT_EQ(out->stride_height, 3);
  EXPECT_EQ(out->dilation_width_factor, 4);
  EXPECT_EQ(out->dilation_height_factor, 5);
  EXPECT_EQ(out->activation, kKilnActRelu);

  in.padding = kKilnPaddingSame;
  out = RoundTrip(kKilnBuiltinConv2d, in, &model, 1);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->padding, kKilnPaddingSame);
}

TEST(RoundTripTest, DepthwiseConv2d) {
  ModelDesc model;
  KilnDepthwiseConvParams in = {kKilnPaddingSame, 1, 2, 3, kKilnActRelu6, 2, 1};
  const KilnDepthwiseConvParams* out = RoundTrip(kKilnBuiltinDepthwiseConv2d, in, &model, 1);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->padding, kKilnPaddingSame);
  EXPECT_EQ(out->stride_width, 1);
  EXPECT_EQ(out->stride_height, 2);
  EXPECT_EQ(out->depth_multiplier, 3);
  EXPECT_EQ(out->activation, kKilnActRelu6);
  EXPECT_EQ(out->dilation_width_factor, 2);
  EXPECT_EQ(out->dilation_height_factor, 1);
}

TEST(RoundTripTest, Pools) {
  for (KilnBuiltinOperator code : {kKilnBuiltinAveragePool2d, kKilnBuiltinMaxPool2d, kKilnBuiltinL2Pool2d}) {
    ModelDesc model;
    KilnPoolParams in = {kKilnPaddingValid, 2, 1, 3, 4, kKilnActTanh};
    const KilnPoolParams* out = RoundTrip(code, in, &model);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->padding, kKilnPaddingValid);
    EXPECT_EQ(out->stride_width, 2);
    EXPECT_EQ(out->stride_height, 1);
    EXPECT_EQ(out->filter_width, 3);
    EXPECT_EQ(out->filter_height, 4);
    EXPECT_EQ(out->activation, kKilnActTanh);
  }
}

TEST(RoundTripTest, FullyConnected) {
  ModelDesc model;
  KilnFullyConnectedParams in = {kKilnActRelu, kKilnFullyConnectedWeightsFormatShuffled4x16Int8, true, true};
  const KilnFullyConnectedParams* out = RoundTrip(kKilnBuiltinFullyConnected, in, &model, 1);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->activation, kKilnActRelu);
  EXPECT_EQ(out->weights_format, kKilnFullyConnectedWeightsFormatShuffled4x16Int8);
  EXPECT_TRUE(out->keep_num_dims);
  EXPECT_TRUE(out->asymmetric_quantize_inputs);
}

TEST(RoundTripTest, Softmax) {
  ModelDesc model;
  const KilnSoftmaxParams* out = RoundTrip(kKilnBuiltinSoftmax, KilnSoftmaxParams{0.25f}, &model);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->beta, 0.25f);
}

TEST(RoundTripTest, Concatenation) {
  ModelDesc model;
  const KilnConcatenationParams* out =
      RoundTrip(kKilnBuiltinConcatenation, KilnConcatenationParams{-1, kKilnActRelu}, &model, 1);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->axis, -1);
  EXPECT_EQ(out->activation, kKilnActRelu);
}

TEST(RoundTripTest, Reshape) {
  ModelDesc model;
  KilnReshapeParams in = {};
  in.num_dimensions = 3;
  in.shape[0] = 4;
  in.shape[1] = -1;
  in.shape[2] = 2;
  const KilnReshapeParams* out = RoundTrip(kKilnBuiltinReshape, in, &model);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->num_dimensions, 3);
  EXPECT_EQ(out->shape[0], 4);
  EXPECT_EQ(out->shape[1], -1);
  EXPECT_EQ(out->shape[2], 2);

  KilnReshapeParams full = {};
  full.num_dimensions = KILN_RESHAPE_MAX_DIMENSIONS;
  for (int i = 0; i < KILN_RESHAPE_MAX_DIMENSIONS; ++i) full.shape[i] = i + 1;
  out = RoundTrip(kKilnBuiltinReshape, full, &model);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->num_dimensions, KILN_RESHAPE_MAX_DIMENSIONS);
  EXPECT_EQ(out->shape[7], 8);

  // No new_shape: the shape comes from the second input.
  out = RoundTrip(kKilnBuiltinReshape, KilnReshapeParams{}, &model, 1);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->num_dimensions, 0);
}

TEST(RoundTripTest, Squeeze) {
  ModelDesc model;
  KilnSqueezeParams in = {};
  in.num_squeeze_dims = 2;
  in.squeeze_dims[0] = 1;
  in.squeeze_dims[1] = -2;
  const KilnSqueezeParams* out = RoundTrip(kKilnBuiltinSqueeze, in, &model);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->num_squeeze_dims, 2);
  EXPECT_EQ(out->squeeze_dims[0], 1);
  EXPECT_EQ(out->squeeze_dims[1], -2);
}

TEST(RoundTripTest, Reducers) {
  for (KilnBuiltinOperator code : {kKilnBuiltinMean, kKilnBuiltinSum, kKilnBuiltinReduceMax,
                                   kKilnBuiltinReduceMin, kKilnBuiltinReduceProd}) {
    for (bool keep : {false, true}) {
      ModelDesc model;
      const KilnReducerParams* out = RoundTrip(code, KilnReducerParams{keep}, &model, 1);
      ASSERT_NE(out, nullptr) << BuiltinOperatorName(code);
      EXPECT_EQ(out->keep_dims, keep) << BuiltinOperatorName(code);
    }
  }
}

TEST(RoundTripTest, SlicingAndIndexOps) {
  ModelDesc model;
  const KilnStridedSliceParams* ss =
      RoundTrip(kKilnBuiltinStridedSlice, KilnStridedSliceParams{1, 2, 4, 8, 16, true}, &model, 1);
  ASSERT_NE(ss, nullptr);
  EXPECT_EQ(ss->begin_mask, 1);
  EXPECT_EQ(ss->end_mask, 2);
  EXPECT_EQ(ss->ellipsis_mask, 4);
  EXPECT_EQ(ss->new_axis_mask, 8);
  EXPECT_EQ(ss->shrink_axis_mask, 16);
  EXPECT_TRUE(ss->offset);
  const KilnGatherParams* gather = RoundTrip(kKilnBuiltinGather, KilnGatherParams{-1, 2}, &model, 1);
  ASSERT_NE(gather, nullptr);
  EXPECT_EQ(gather->axis, -1);
  EXPECT_EQ(gather->batch_dims, 2);
  const KilnOneHotParams* one_hot = RoundTrip(kKilnBuiltinOneHot, KilnOneHotParams{-1}, &model, 1);
  ASSERT_NE(one_hot, nullptr);
  EXPECT_EQ(one_hot->axis, -1);
  const KilnSplitParams* split = RoundTrip(kKilnBuiltinSplit, KilnSplitParams{3}, &model, 1);
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->num_splits, 3);
  const KilnSplitVParams* split_v = RoundTrip(kKilnBuiltinSplitV, KilnSplitVParams{4}, &model, 1);
  ASSERT_NE(split_v, nullptr);
  EXPECT_EQ(split_v->num_splits, 4);
  const KilnPackParams* pack = RoundTrip(kKilnBuiltinPack, KilnPackParams{2, -1}, &model, 1);
  ASSERT_NE(pack, nullptr);
  EXPECT_EQ(pack->values_count, 2);
  EXPECT_EQ(pack->axis, -1);
  const KilnUnpackParams* unpack = RoundTrip(kKilnBuiltinUnpack, KilnUnpackParams{5, 1}, &model);
  ASSERT_NE(unpack, nullptr);
  EXPECT_EQ(unpack->num, 5);
  EXPECT_EQ(unpack->axis, 1);
  const KilnShapeParams* shape = RoundTrip(kKilnBuiltinShape, KilnShapeParams{kKilnInt64}, &model);
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->out_type, kKilnInt64);
  const KilnArgMaxParams* arg_max = RoundTrip(kKilnBuiltinArgMax, KilnArgMaxParams{kKilnInt32}, &model, 1);
  ASSERT_NE(arg_max, nullptr);
  EXPECT_EQ(arg_max->output_type, kKilnInt32);
  const KilnArgMinParams* arg_min = RoundTrip(kKilnBuiltinArgMin, KilnArgMinParams{kKilnInt64}, &model, 1);
  ASSERT_NE(arg_min, nullptr);
  EXPECT_EQ(arg_min->output_type, kKilnInt64);
  // Without an options table the index type is left to the output tensor.
  const KilnShapeParams* bare = RoundTrip(kKilnBuiltinShape, KilnShapeParams{kKilnNoType}, &model);
  ASSERT_NE(bare, nullptr);
  EXPECT_EQ(bare->out_type, kKilnNoType);
}

// One op without an options table reads with the format's defaults.
ModelDesc OneOpWithoutOptions(KilnBuiltinOperator code, int inputs = 1) {
  ModelWriter w;
  std::vector<int> in = {w.AddTensor(kKilnFloat32, {1, 4}, "a")};
  if (inputs > 1) in.push_back(w.AddTensor(kKilnFloat32, {1, 4}, "b"));
  int out = w.AddTensor(kKilnFloat32, {1, 4}, "out");
  w.AddOp(code, in, {out});
  w.SetInputs(std::vector<int>(in.begin(), in.end()));
  w.SetOutputs({out});
  return ReadOrDie(w.Finish());
}

TEST(RoundTripTest, RecurrentOps) {
  ModelDesc model;
  {
    const auto* out = RoundTrip(kKilnBuiltinLstm,
                                KilnLSTMParams{kKilnActRelu6, 1.5f, 0.25f, kKilnLSTMBasicKernel, true}, &model);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->activation, kKilnActRelu6);
    EXPECT_EQ(out->cell_clip, 1.5f);
    EXPECT_EQ(out->proj_clip, 0.25f);
    EXPECT_EQ(out->kernel_type, kKilnLSTMBasicKernel);
    EXPECT_TRUE(out->asymmetric_quantize_inputs);
  }
  {
    const auto* out = RoundTrip(kKilnBuiltinUnidirectionalSequenceLstm,
                                KilnUnidirectionalSequenceLSTMParams{kKilnActTanh, 2.0f, 0.5f, true, false, true},
                                &model);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->activation, kKilnActTanh);
    EXPECT_EQ(out->cell_clip, 2.0f);
    EXPECT_EQ(out->proj_clip, 0.5f);
    EXPECT_TRUE(out->time_major);
    EXPECT_FALSE(out->asymmetric_quantize_inputs);
    EXPECT_TRUE(out->diagonal_recurrent_tensors);
  }
  {
    const auto* out = RoundTrip(kKilnBuiltinSvdf, KilnSVDFParams{3, kKilnActRelu, true}, &model);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->rank, 3);
    EXPECT_EQ(out->activation, kKilnActRelu);
    EXPECT_TRUE(out->asymmetric_quantize_inputs);
  }
  {
    const auto* out = RoundTrip(kKilnBuiltinRnn, KilnRNNParams{kKilnActReluN1To1, false}, &model);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->activation, kKilnActReluN1To1);
  }
  {
    const auto* out =
        RoundTrip(kKilnBuiltinUnidirectionalSequenceRnn, KilnSequenceRNNParams{true, kKilnActTanh, true}, &model);
    ASSERT_NE(out, nullptr);
    EXPECT_TRUE(out->time_major);
    EXPECT_EQ(out->activation, kKilnActTanh);
    EXPECT_TRUE(out->asymmetric_quantize_inputs);
  }
  {
    const auto* out = RoundTrip(kKilnBuiltinBidirectionalSequenceLstm,
                                KilnBidirectionalSequenceLSTMParams{kKilnActTanh, 3.0f, 0.0f, true, false, true},
                                &model);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->cell_clip, 3.0f);
    EXPECT_TRUE(out->merge_outputs);
    EXPECT_FALSE(out->time_major);
    EXPECT_TRUE(out->asymmetric_quantize_inputs);
  }
  {
    const auto* out = RoundTrip(kKilnBuiltinBidirectionalSequenceRnn,
                                KilnBidirectionalSequenceRNNParams{true, kKilnActRelu, true, false}, &model);
    ASSERT_NE(out, nullptr);
    EXPECT_TRUE(out->time_major);
    EXPECT_EQ(out->activation, kKilnActRelu);
    EXPECT_TRUE(out->merge_outputs);
  }
}

TEST(RoundTripTest, AbsentOptionsTakeTheFormatDefaults) {
  ModelDesc model = OneOpWithoutOptions(kKilnBuiltinAdd, 2);
  auto* add = static_cast<const KilnAddParams*>(model.subgraphs[0].operators[0].builtin_data.get());
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->activation, kKilnActNone);
  EXPECT_TRUE(add->pot_scale_int16);  // the schema default

  model = OneOpWithoutOptions(kKilnBuiltinSoftmax);
  auto* softmax = static_cast<const KilnSoftmaxParams*>(model.subgraphs[0].operators[0].builtin_data.get());
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->beta, 0.0f);  // the schema default, as in LiteRT

  model = OneOpWithoutOptions(kKilnBuiltinFullyConnected, 2);
  auto* fc = static_cast<const KilnFullyConnectedParams*>(model.subgraphs[0].operators[0].builtin_data.get());
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->weights_format, kKilnFullyConnectedWeightsFormatDefault);
  EXPECT_FALSE(fc->keep_num_dims);

  model = OneOpWithoutOptions(kKilnBuiltinMean, 2);
  ASSERT_NE(model.subgraphs[0].operators[0].builtin_data, nullptr);

  // Ops without parsed options have no builtin data.
  model = OneOpWithoutOptions(kKilnBuiltinTanh);
  EXPECT_EQ(model.subgraphs[0].operators[0].builtin_data, nullptr);
}

TEST(RoundTripTest, AbsentConvOptionsMeanStrideZeroWhichIsRejected) {
  ModelWriter w;
  int x = w.AddTensor(kKilnFloat32, {1, 4, 4, 1}, "x");
  int f = w.AddConstTensor<float>(kKilnFloat32, {1, 1, 1, 1}, "f", {1});
  int y = w.AddTensor(kKilnFloat32, {1, 4, 4, 1}, "y");
  w.AddOp(kKilnBuiltinConv2d, {x, f, -1}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  EXPECT_MODEL_ERROR(w.Finish(), "operator 0 (CONV_2D): stride_w must be at least 1 (got 0)");
}

TEST(RoundTripTest, TensorsQuantizationAndData) {
  ModelWriter w;
  w.SetDescription("round trip");
  int x = w.AddTensor(kKilnInt8, {1, 2, 2, 3}, "x");
  w.SetQuantization(x, {0.5f}, {-3});
  std::vector<int8_t> weights(3 * 2 * 2 * 3);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<int8_t>(i * 7 - 40);
  int f = w.AddConstTensor<int8_t>(kKilnInt8, {3, 2, 2, 3}, "filter", weights);
  w.SetQuantization(f, {0.1f, 0.2f, 0.3f}, {0, 0, 0}, 0);
  int bias = w.AddConstTensor<int32_t>(kKilnInt32, {3}, "bias", {1, -2, 3});
  int y = w.AddTensor(kKilnInt8, {1, 1, 1, 3}, "y");
  w.SetQuantization(y, {0.25f}, {5});
  w.SetShapeSignature(x, {-1, 2, 2, 3});
  w.AddOp(kKilnBuiltinConv2d, {x, f, bias}, {y}, KilnConvParams{kKilnPaddingValid, 1, 1, 1, 1, kKilnActNone});
  w.SetInputs({x});
  w.SetOutputs({y});
  std::vector<uint8_t> bytes = w.Finish();
  ModelDesc model;
  std::string error;
  ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
  EXPECT_EQ(model.description, "round trip");
  const SubgraphDesc& s = model.subgraphs[0];
  EXPECT_EQ(s.name, "main");
  ASSERT_EQ(s.tensors.size(), 4u);
  EXPECT_EQ(s.tensors[0].name, "x");
  EXPECT_EQ(s.tensors[0].type, kKilnInt8);
  EXPECT_EQ(s.tensors[0].shape, (std::vector<int>{1, 2, 2, 3}));
  EXPECT_EQ(s.tensors[0].shape_signature, (std::vector<int>{-1, 2, 2, 3}));
  EXPECT_EQ(s.tensors[0].data, nullptr);
  EXPECT_EQ(s.tensors[0].quantization.scale, std::vector<float>{0.5f});
  EXPECT_EQ(s.tensors[0].quantization.zero_point, std::vector<int32_t>{-3});
  EXPECT_EQ(s.tensors[1].quantization.scale, (std::vector<float>{0.1f, 0.2f, 0.3f}));
  EXPECT_EQ(s.tensors[1].quantization.quantized_dimension, 0);
  ASSERT_EQ(s.tensors[1].data_size, weights.size());
  EXPECT_EQ(std::memcmp(s.tensors[1].data, weights.data(), weights.size()), 0);
  // The converter's alignment of constant data, which kernels rely on.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s.tensors[1].data) % 16, 0u);
  ASSERT_EQ(s.tensors[2].data_size, 12u);
  int32_t bias_values[3];
  std::memcpy(bias_values, s.tensors[2].data, 12);
  EXPECT_EQ(bias_values[1], -2);
  EXPECT_EQ(s.inputs, std::vector<int>{x});
  EXPECT_EQ(s.outputs, std::vector<int>{y});
  EXPECT_EQ(s.operators[0].inputs, (std::vector<int>{x, f, bias}));
}

TEST(RoundTripTest, OptionalInputsVariablesAndVersions) {
  ModelWriter w;
  int x = w.AddTensor(kKilnFloat32, {1, 4}, "x");
  int state = w.AddTensor(kKilnFloat32, {1, 4}, "state");
  w.SetVariable(state);
  int y = w.AddTensor(kKilnFloat32, {1, 4}, "y");
  int op = w.AddOp(kKilnBuiltinAdd, {x, state, -1}, {y});
  w.SetOpVersion(op, 4);
  w.SetInputs({x});
  w.SetOutputs({y});
  ModelDesc model = ReadOrDie(w.Finish());
  ASSERT_EQ(model.subgraphs.size(), 1u);
  EXPECT_TRUE(model.subgraphs[0].tensors[static_cast<size_t>(state)].is_variable);
  EXPECT_EQ(model.subgraphs[0].operators[0].inputs, (std::vector<int>{x, state, -1}));
  EXPECT_EQ(model.subgraphs[0].operators[0].version, 4);
}

TEST(RoundTripTest, OpCodesAbove127UseTheExtendedField) {
  ModelWriter w;
  int a = w.AddTensor(kKilnFloat32, {2}, "a");
  int b = w.AddTensor(kKilnFloat32, {2}, "b");
  int y = w.AddTensor(kKilnFloat32, {2}, "y");
  int z = w.AddTensor(kKilnFloat32, {2}, "z");
  w.AddOp(kKilnBuiltinAtan2, {a, b}, {y});
  w.AddOp(kKilnBuiltinCumsum, {y, -1}, {z});
  w.SetInputs({a, b});
  w.SetOutputs({z});
  ModelDesc model = ReadOrDie(w.Finish());
  ASSERT_EQ(model.subgraphs.size(), 1u);
  EXPECT_EQ(model.subgraphs[0].operators[0].builtin_code, kKilnBuiltinAtan2);
  EXPECT_EQ(model.subgraphs[0].operators[1].builtin_code, kKilnBuiltinCumsum);
}

TEST(RoundTripTest, CustomOpWithFlexOptions) {
  ModelWriter w;
  int x = w.AddTensor(kKilnFloat32, {4}, "x");
  int y = w.AddTensor(kKilnFloat32, {4}, "y");
  std::vector<uint8_t> options = FlexMap().Float("offset", 0.5f).Int("n", 3).String("mode", "fast").Finish();
  w.AddCustomOp("MyOp", {x}, {y}, options);
  w.SetInputs({x});
  w.SetOutputs({y});
  ModelDesc model = ReadOrDie(w.Finish());
  ASSERT_EQ(model.subgraphs.size(), 1u);
  const OperatorDesc& op = model.subgraphs[0].operators[0];
  EXPECT_EQ(op.builtin_code, kKilnBuiltinCustom);
  EXPECT_EQ(op.custom_name, "MyOp");
  EXPECT_EQ(op.builtin_data, nullptr);
  ASSERT_EQ(op.custom_options_size, options.size());
  EXPECT_EQ(std::memcmp(op.custom_options, options.data(), options.size()), 0);
  float offset = 0;
  EXPECT_EQ(KilnFlexMapGetFloat(op.custom_options, op.custom_options_size, "offset", &offset), kKilnOk);
  EXPECT_EQ(offset, 0.5f);
}

TEST(RoundTripTest, ExternalDataLayout) {
  ModelWriter w;
  w.set_external_data(true);
  int x = w.AddTensor(kKilnFloat32, {1, 3}, "x");
  std::vector<float> k = {1.5f, -2.5f, 3.25f};
  int c = w.AddConstTensor<float>(kKilnFloat32, {1, 3}, "k", k);
  int y = w.AddTensor(kKilnFloat32, {1, 3}, "y");
  int z = w.AddTensor(kKilnFloat32, {1, 3}, "z");
  w.AddOp(kKilnBuiltinAdd, {x, c}, {y}, KilnAddParams{kKilnActNone, false});
  std::vector<uint8_t> options = FlexMap().Int("n", 7).Finish();
  w.AddCustomOp("Ext", {y}, {z}, options);
  w.SetInputs({x});
  w.SetOutputs({z});
  std::vector<uint8_t> bytes = w.Finish();
  ASSERT_FALSE(bytes.empty()) << w.error();
  ModelDesc model;
  std::string error;
  ASSERT_TRUE(ReadModel(bytes.data(), bytes.size(), &model, &error)) << error;
  ASSERT_EQ(model.subgraphs.size(), 1u);
  const TensorDesc& constant = model.subgraphs[0].tensors[static_cast<size_t>(c)];
  ASSERT_EQ(constant.data_size, 12u);
  EXPECT_EQ(std::memcmp(constant.data, k.data(), 12), 0);
  // The data lives after the flatbuffer, at a 16-aligned offset.
  size_t offset = static_cast<size_t>(constant.data - bytes.data());
  EXPECT_EQ(offset % 16, 0u);
  const OperatorDesc& custom = model.subgraphs[0].operators[1];
  ASSERT_EQ(custom.custom_options_size, options.size());
  EXPECT_EQ(std::memcmp(custom.custom_options, options.data(), options.size()), 0);
  EXPECT_GT(static_cast<size_t>(custom.custom_options - bytes.data()), offset);
  int64_t n = 0;
  EXPECT_EQ(KilnFlexMapGetInt(custom.custom_options, custom.custom_options_size, "n", &n), kKilnOk);
  EXPECT_EQ(n, 7);
}

TEST(RoundTripTest, SeveralSubgraphs) {
  ModelWriter w;
  int x = w.AddTensor(kKilnFloat32, {2}, "x");
  int y = w.AddTensor(kKilnFloat32, {2}, "y");
  w.AddOp(kKilnBuiltinRelu, {x}, {y});
  w.SetInputs({x});
  w.SetOutputs({y});
  EXPECT_EQ(w.AddSubgraph("body"), 1);
  int a = w.AddTensor(kKilnInt32, {3}, "a");
  int b = w.AddTensor(kKilnInt32, {3}, "b");
  w.AddOp(kKilnBuiltinNeg, {a}, {b});
  w.SetInputs({a});
  w.SetOutputs({b});
  ModelDesc model = ReadOrDie(w.Finish());
  ASSERT_EQ(model.subgraphs.size(), 2u);
  EXPECT_EQ(model.subgraphs[1].name, "body");
  EXPECT_EQ(model.subgraphs[1].tensors[0].type, kKilnInt32);
  EXPECT_EQ(model.subgraphs[1].operators[0].builtin_code, kKilnBuiltinNeg);
}

TEST(RoundTripTest, WriterRefusesBadArguments) {
  {
    ModelWriter w;
    EXPECT_EQ(w.AddConstTensor<float>(kKilnFloat32, {2, 2}, "k", {1, 2, 3}), -1);
    EXPECT_NE(w.error().find("12 bytes of data, but the shape needs 16"), std::string::npos) << w.error();
    EXPECT_TRUE(w.Finish().empty());
  }
  {
    ModelWriter w;
    int x = w.AddTensor(kKilnFloat32, {2}, "x");
    EXPECT_EQ(w.AddOp(kKilnBuiltinRelu, {x}, {5}), -1);
    EXPECT_NE(w.error().find("output tensor 5 does not exist"), std::string::npos) << w.error();
  }
  {
    ModelWriter w;
    int x = w.AddTensor(kKilnFloat32, {2}, "x");
    EXPECT_EQ(w.AddOp(kKilnBuiltinConv2d, {x}, {x}, KilnAddParams{}), -1);
    EXPECT_NE(w.error().find("does not belong"), std::string::npos) << w.error();
  }
  {
    ModelWriter w;
    EXPECT_EQ(w.AddTensor(kKilnFloat32, {2, -1}, "x"), -1);
    EXPECT_NE(w.error().find("negative dimension"), std::string::npos) << w.error();
  }
}

TEST(RoundTripTest, NamesAndSizes) {
  EXPECT_EQ(BuiltinOperatorName(kKilnBuiltinConv2d), "CONV_2D");
  EXPECT_EQ(BuiltinOperatorName(kKilnBuiltinCustom), "CUSTOM");
  EXPECT_EQ(BuiltinOperatorName(kKilnBuiltinAtan2), "ATAN2");
  EXPECT_EQ(BuiltinOperatorName(kKilnBuiltinDepthToSpace), "DEPTH_TO_SPACE");
  EXPECT_EQ(BuiltinOperatorName(-1), "UNKNOWN(-1)");
  EXPECT_EQ(BuiltinOperatorName(100000), "UNKNOWN(100000)");
  EXPECT_EQ(TypeSize(kKilnFloat32), 4u);
  EXPECT_EQ(TypeSize(kKilnInt8), 1u);
  EXPECT_EQ(TypeSize(kKilnFloat16), 2u);
  EXPECT_EQ(TypeSize(kKilnComplex128), 16u);
  EXPECT_EQ(TypeSize(kKilnInt64), 8u);
  EXPECT_EQ(TypeSize(kKilnString), 0u);
  EXPECT_EQ(TypeSize(kKilnResource), 0u);
}

// Every element type survives the trip, with the TensorType -> KilnType mapping of the format.
TEST(RoundTripTest, AllFixedSizeTypes) {
  for (KilnType type :
       {kKilnFloat32, kKilnFloat16, kKilnInt32, kKilnUInt8, kKilnInt64, kKilnBool, kKilnInt16, kKilnComplex64,
        kKilnInt8, kKilnFloat64, kKilnComplex128, kKilnUInt64, kKilnUInt32, kKilnUInt16}) {
    ModelWriter w;
    std::vector<uint8_t> data(TypeSize(type) * 3, 0x11);
    int c = w.AddConstTensor(type, {3}, "c", data.data(), data.size());
    int x = w.AddTensor(type, {3}, "x");
    int y = w.AddTensor(type, {3}, "y");
    w.AddOp(kKilnBuiltinAdd, {x, c}, {y});
    w.SetInputs({x});
    w.SetOutputs({y});
    ModelDesc model = ReadOrDie(w.Finish());
    ASSERT_EQ(model.subgraphs.size(), 1u) << type;
    EXPECT_EQ(model.subgraphs[0].tensors[0].type, type);
    EXPECT_EQ(model.subgraphs[0].tensors[0].data_size, data.size());
  }
}

}  // namespace
}  // namespace kiln
