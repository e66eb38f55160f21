/* Kiln: the parsed options of builtin ops.
 *
 * KilnOpaqueNodeGetBuiltinData returns a pointer to one of these structs, chosen by the node's builtin code,
 * so that an operator overriding a builtin reads the same options the builtin does. Field names follow
 * LiteRT's builtin_op_data.h. This header is C99. */
#ifndef KILN_BUILTIN_OP_DATA_H_
#define KILN_BUILTIN_OP_DATA_H_

#include "kiln/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most dimensions a shape option (RESHAPE's new_shape, SQUEEZE's dims) can list. */
#define KILN_RESHAPE_MAX_DIMENSIONS 8

typedef enum KilnPadding {
  kKilnPaddingUnknown = 0,
  kKilnPaddingSame = 1,
  kKilnPaddingValid = 2,
} KilnPadding;

typedef enum KilnFusedActivation {
  kKilnActNone = 0,
  kKilnActRelu = 1,
  kKilnActReluN1To1 = 2,
  kKilnActRelu6 = 3,
  kKilnActTanh = 4,
  kKilnActSignBit = 5,
  kKilnActSigmoid = 6,
} KilnFusedActivation;

/* ADD, SUB */
typedef struct KilnAddParams {
  KilnFusedActivation activation;
  bool pot_scale_int16;
} KilnAddParams;
typedef KilnAddParams KilnSubParams;

/* MUL, DIV */
typedef struct KilnMulParams {
  KilnFusedActivation activation;
} KilnMulParams;
typedef KilnMulParams KilnDivParams;

/* CONV_2D */
typedef struct KilnConvParams {
  KilnPadding padding;
  int stride_width;
  int stride_height;
  int dilation_width_factor;
  int dilation_height_factor;
  KilnFusedActivation activation;
} KilnConvParams;

/* CONV_3D (inputs: input [N, D, H, W, C], filter [D, H, W, C, out_c], optional bias) and CONV_3D_TRANSPOSE
 * (inputs: output shape (a constant int32 [5]), filter [D, H, W, out_c, C], input, optional bias). */
typedef struct KilnConv3DParams {
  KilnPadding padding;
  int stride_width;
  int stride_height;
  int stride_depth;
  int dilation_width_factor;
  int dilation_height_factor;
  int dilation_depth_factor;
  KilnFusedActivation activation;
} KilnConv3DParams;

/* TRANSPOSE_CONV. Inputs: output shape (an int32 [4], constant or computed at run time), filter [out_c, h, w, in_c],
 * input, optional bias. */
typedef struct KilnTransposeConvParams {
  KilnPadding padding;
  int stride_width;
  int stride_height;
  KilnFusedActivation activation;
} KilnTransposeConvParams;

/* DEPTHWISE_CONV_2D */
typedef struct KilnDepthwiseConvParams {
  KilnPadding padding;
  int stride_width;
  int stride_height;
  int depth_multiplier;
  KilnFusedActivation activation;
  int dilation_width_factor;
  int dilation_height_factor;
} KilnDepthwiseConvParams;

/* AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D */
typedef struct KilnPoolParams {
  KilnPadding padding;
  int stride_width;
  int stride_height;
  int filter_width;
  int filter_height;
  KilnFusedActivation activation;
} KilnPoolParams;

typedef enum KilnFullyConnectedWeightsFormat {
  kKilnFullyConnectedWeightsFormatDefault = 0,
  kKilnFullyConnectedWeightsFormatShuffled4x16Int8 = 1,
} KilnFullyConnectedWeightsFormat;

/* FULLY_CONNECTED */
typedef struct KilnFullyConnectedParams {
  KilnFusedActivation activation;
  KilnFullyConnectedWeightsFormat weights_format;
  bool keep_num_dims;
  bool asymmetric_quantize_inputs;
} KilnFullyConnectedParams;

/* SOFTMAX */
typedef struct KilnSoftmaxParams {
  float beta;
} KilnSoftmaxParams;

/* CONCATENATION */
typedef struct KilnConcatenationParams {
  int axis;
  KilnFusedActivation activation;
} KilnConcatenationParams;

/* RESHAPE. When num_dimensions is 0 the shape comes from the second input. */
typedef struct KilnReshapeParams {
  int shape[KILN_RESHAPE_MAX_DIMENSIONS];
  int num_dimensions;
} KilnReshapeParams;

/* SQUEEZE. num_squeeze_dims 0 removes every dimension of size 1. */
typedef struct KilnSqueezeParams {
  int squeeze_dims[KILN_RESHAPE_MAX_DIMENSIONS];
  int num_squeeze_dims;
} KilnSqueezeParams;

/* DEPTH_TO_SPACE: moves blocks of block_size x block_size channel groups of an NHWC input into height and width
   (depth-column-row order, as LiteRT). block_size must be at least 1 and the channels a multiple of its square. */
typedef struct KilnDepthToSpaceParams {
  int block_size;
} KilnDepthToSpaceParams;

/* SPACE_TO_DEPTH: the inverse of DEPTH_TO_SPACE; block_size must be at least 1 and divide height and width. */
typedef struct KilnSpaceToDepthParams {
  int block_size;
} KilnSpaceToDepthParams;

/* MIRROR_PAD's mode: REFLECT leaves the edge out of the mirror image ([1 2 3] padded by 2 either side:
   3 2 | 1 2 3 | 2 1), SYMMETRIC repeats it (2 1 | 1 2 3 | 3 2). The values are the model format's. */
typedef enum KilnMirrorPadMode {
  kKilnMirrorPadReflect = 0,
  kKilnMirrorPadSymmetric = 1,
} KilnMirrorPadMode;

/* MIRROR_PAD. A model with a mode the format does not know fails to load. */
typedef struct KilnMirrorPadParams {
  KilnMirrorPadMode mode;
} KilnMirrorPadParams;

/* MEAN, SUM and the other reductions */
typedef struct KilnReducerParams {
  bool keep_dims;
} KilnReducerParams;

/* LEAKY_RELU: x for x >= 0, else alpha * x. */
typedef struct KilnLeakyReluParams {
  float alpha;
} KilnLeakyReluParams;

/* L2_NORMALIZATION: x / max(sqrt(sum of x^2 over the last axis), 1e-6). */
typedef struct KilnL2NormParams {
  KilnFusedActivation activation;
} KilnL2NormParams;

/* LOCAL_RESPONSE_NORMALIZATION over the channels of an NHWC input: x / (bias + alpha * sum of x^2 over the
 * channels within `radius`)^beta. */
typedef struct KilnLocalResponseNormParams {
  int radius;
  float bias;
  float alpha;
  float beta;
} KilnLocalResponseNormParams;

/* BATCH_MATMUL: lhs [..., r, k] times rhs [..., k, c], batch dimensions broadcast. */
typedef struct KilnBatchMatMulParams {
  bool adj_x;                      /* lhs is given transposed ([..., k, r]) */
  bool adj_y;                      /* rhs is given transposed ([..., c, k]) */
  bool asymmetric_quantize_inputs; /* hybrid kernels: quantize the float input asymmetrically */
} KilnBatchMatMulParams;

/* GELU: x * Phi(x), Phi the standard normal CDF: 0.5 * x * (1 + erf(x / sqrt(2))), or with `approximate` the
 * tanh form 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))). */
typedef struct KilnGeluParams {
  bool approximate;
} KilnGeluParams;

/* CUMSUM: the running sum along the axis input. */
typedef struct KilnCumsumParams {
  bool exclusive; /* each output leaves its own element out (the first is 0) */
  bool reverse;   /* sums run from the end of the axis */
} KilnCumsumParams;

/* RESIZE_BILINEAR. The output size comes from the second input, a constant int32 [height, width]. */
typedef struct KilnResizeBilinearParams {
  bool align_corners;      /* corner pixels of input and output coincide */
  bool half_pixel_centers; /* pixels sampled at their centres (TF2); false: TF1's legacy mapping */
} KilnResizeBilinearParams;

/* RESIZE_NEAREST_NEIGHBOR: the same options, the output size from the same constant second input. */
typedef struct KilnResizeNearestNeighborParams {
  bool align_corners;      /* corner pixels coincide; the source index is rounded, not floored */
  bool half_pixel_centers; /* pixels sampled at their centres */
} KilnResizeNearestNeighborParams;

/* STRIDED_SLICE. Bit i of a mask refers to entry i of begin/end/strides. */
typedef struct KilnStridedSliceParams {
  int begin_mask;       /* begin[i] ignored: the slice starts at the first (last, for a negative stride) element */
  int end_mask;         /* end[i] ignored: the slice runs to the end */
  int ellipsis_mask;    /* entry i stands for as many full dimensions as the spec leaves out */
  int new_axis_mask;    /* entry i inserts a dimension of size 1 */
  int shrink_axis_mask; /* entry i takes the single element begin[i] and drops the dimension */
  bool offset;          /* end[i] counts from begin[i] (end = begin + end) */
} KilnStridedSliceParams;

/* GATHER */
typedef struct KilnGatherParams {
  int axis;
  int batch_dims;
} KilnGatherParams;

/* ONE_HOT */
typedef struct KilnOneHotParams {
  int axis; /* where the new dimension of size depth goes; -1: last */
} KilnOneHotParams;

/* SPLIT */
typedef struct KilnSplitParams {
  int num_splits;
} KilnSplitParams;

/* SPLIT_V */
typedef struct KilnSplitVParams {
  int num_splits;
} KilnSplitVParams;

/* PACK */
typedef struct KilnPackParams {
  int values_count;
  int axis;
} KilnPackParams;

/* UNPACK */
typedef struct KilnUnpackParams {
  int num;
  int axis;
} KilnUnpackParams;

/* SHAPE */
typedef struct KilnShapeParams {
  KilnType out_type;
} KilnShapeParams;

/* ARG_MAX */
typedef struct KilnArgMaxParams {
  KilnType output_type;
} KilnArgMaxParams;

/* ARG_MIN */
typedef struct KilnArgMinParams {
  KilnType output_type;
} KilnArgMinParams;

/* REVERSE_SEQUENCE: along seq_dim, the first seq_lengths[b] elements of each slice b of batch_dim reversed. */
typedef struct KilnReverseSequenceParams {
  int seq_dim;
  int batch_dim;
} KilnReverseSequenceParams;

/* BUCKETIZE: the index of the bucket each value falls in, given sorted boundaries. The reader keeps the
 * boundaries in the same allocation as the struct; a writer's array must outlive ModelWriter::Finish. */
typedef struct KilnBucketizeParams {
  const float* boundaries;
  int num_boundaries;
} KilnBucketizeParams;

/* FAKE_QUANT: quantize to num_bits over [min, max] (nudged so that 0 is exact) and back to float. */
typedef struct KilnFakeQuantParams {
  float min;
  float max;
  int num_bits;
  bool narrow_range;
} KilnFakeQuantParams;

/* EMBEDDING_LOOKUP_SPARSE's combiner of the weighted rows of one output row. The values are the model format's. */
typedef enum KilnCombinerType {
  kKilnCombinerSum = 0,   /* the weighted sum */
  kKilnCombinerMean = 1,  /* the weighted sum divided by the sum of the weights */
  kKilnCombinerSqrtn = 2, /* the weighted sum divided by the square root of the sum of the squared weights */
} KilnCombinerType;

/* EMBEDDING_LOOKUP_SPARSE. A model with a combiner the format does not know fails to load. */
typedef struct KilnEmbeddingLookupSparseParams {
  KilnCombinerType combiner;
} KilnEmbeddingLookupSparseParams;

/* RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL and MULTINOMIAL: the Philox generator's seeds as the model stores them (the ops use the
 * low 32 bits of each, sign-extended, as LiteRT does; both 0: seeds drawn at random). */
typedef struct KilnRandomParams {
  int64_t seed;
  int64_t seed2;
} KilnRandomParams;
/* LSTM (full kernel) */
typedef enum KilnLSTMKernelType {
  kKilnLSTMFullKernel = 0,
  kKilnLSTMBasicKernel = 1,
} KilnLSTMKernelType;
typedef struct KilnLSTMParams {
  KilnFusedActivation activation;
  float cell_clip; /* 0: no clipping */
  float proj_clip; /* 0: no clipping */
  KilnLSTMKernelType kernel_type;
  bool asymmetric_quantize_inputs;
} KilnLSTMParams;

/* UNIDIRECTIONAL_SEQUENCE_LSTM */
typedef struct KilnUnidirectionalSequenceLSTMParams {
  KilnFusedActivation activation;
  float cell_clip; /* 0: no clipping */
  float proj_clip; /* 0: no clipping */
  bool time_major; /* input [time, batch, input]; else [batch, time, input] */
  bool asymmetric_quantize_inputs;
  bool diagonal_recurrent_tensors;
} KilnUnidirectionalSequenceLSTMParams;

/* SVDF */
typedef struct KilnSVDFParams {
  int rank;
  KilnFusedActivation activation;
  bool asymmetric_quantize_inputs;
} KilnSVDFParams;

/* RNN */
typedef struct KilnRNNParams {
  KilnFusedActivation activation;
  bool asymmetric_quantize_inputs;
} KilnRNNParams;

/* UNIDIRECTIONAL_SEQUENCE_RNN */
typedef struct KilnSequenceRNNParams {
  bool time_major;
  KilnFusedActivation activation;
  bool asymmetric_quantize_inputs;
} KilnSequenceRNNParams;

/* BIDIRECTIONAL_SEQUENCE_LSTM */
typedef struct KilnBidirectionalSequenceLSTMParams {
  KilnFusedActivation activation;
  float cell_clip; /* 0: no clipping */
  float proj_clip; /* 0: no clipping */
  bool merge_outputs; /* one output [..., fw_output + bw_output]; else a forward and a backward output */
  bool time_major;    /* input [time, batch, input]; else [batch, time, input] */
  bool asymmetric_quantize_inputs;
} KilnBidirectionalSequenceLSTMParams;

/* BIDIRECTIONAL_SEQUENCE_RNN */
typedef struct KilnBidirectionalSequenceRNNParams {
  bool time_major;
  KilnFusedActivation activation;
  bool merge_outputs;
  bool asymmetric_quantize_inputs;
} KilnBidirectionalSequenceRNNParams;

/* IF: cond picks subgraph then_subgraph_index (true) or else_subgraph_index (false). */
typedef struct KilnIfParams {
  int then_subgraph_index;
  int else_subgraph_index;
} KilnIfParams;

/* WHILE: runs body_subgraph_index while cond_subgraph_index's single bool output is true. */
typedef struct KilnWhileParams {
  int cond_subgraph_index;
  int body_subgraph_index;
} KilnWhileParams;

/* CALL_ONCE: runs init_subgraph_index once per interpreter, at the node's first Invoke. */
typedef struct KilnCallOnceParams {
  int init_subgraph_index;
} KilnCallOnceParams;

/* VAR_HANDLE: the resource variable named (container, shared_name). The strings point into the model's bytes
 * (NUL-terminated; empty when the model gives none) and live as long as the model. */
typedef struct KilnVarHandleParams {
  const char* container;
  const char* shared_name;
} KilnVarHandleParams;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_BUILTIN_OP_DATA_H_ */
