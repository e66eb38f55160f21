// REAL, IMAG, COMPLEX_ABS (complex64 -> float32, complex128 -> float64) and RFFT2D (float32 -> complex64). Complex
// elements are read as interleaved (re, im) pairs of floats or doubles.
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kiln/c_api_opaque.h"
#include "ops/op_families.h"
#include "ops/op_util.h"
#include "ops/reference/complex.h"

namespace kiln::ops {
namespace {

enum class Part { kReal, kImag, kAbs };

constexpr const char* PartName(Part part) {
  switch (part) {
    case Part::kReal: return "REAL";
    case Part::kImag: return "IMAG";
    case Part::kAbs: return "COMPLEX_ABS";
  }
  return "?";
}

struct PartState {
  int64_t count = 0;
  bool is_double = false;
};

template <Part kPart>
KilnStatus PartPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = PartName(kPart);
  KILN_OPS_GET_STATE(PartState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 1, 1, 1));
  const KilnOpaqueTensor* input;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  const KilnType type = KilnOpaqueTensorType(input);
  if (type != kKilnComplex64 && type != kKilnComplex128) {
    KilnOpaqueContextReportError(context, "%s: input %s has type %s; expected complex64 or complex128", op,
                                 TensorLabel(input).c_str(), KilnTypeGetName(type));
    return kKilnError;
  }
  state->is_double = type == kKilnComplex128;
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, state->is_double ? kKilnFloat64 : kKilnFloat32));
  const Dims dims = TensorDims(input);
  state->count = reference::NumElements(dims);
  return ResizeOutput(context, op, output, dims);
}

template <Part kPart, typename T>
KilnStatus RunPart(KilnOpaqueContext* context, KilnOpaqueNode* node, int64_t count) {
  constexpr const char* op = PartName(kPart);
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "input", input, count, 2 * sizeof(T)));
  T* out;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "output", output, count, &out));
  // Copied out pair by pair: a constant complex128 may sit only 4-byte aligned in the model file.
  const auto* in = static_cast<const char*>(KilnOpaqueTensorData(input));
  for (int64_t i = 0; i < count; ++i) {
    T pair[2];
    std::memcpy(pair, in + static_cast<size_t>(i) * sizeof(pair), sizeof(pair));
    if constexpr (kPart == Part::kReal) {
      out[i] = pair[0];
    } else if constexpr (kPart == Part::kImag) {
      out[i] = pair[1];
    } else {
      out[i] = std::abs(std::complex<T>(pair[0], pair[1]));  // LiteRT's std::abs (hypot)
    }
  }
  return kKilnOk;
}

template <Part kPart>
KilnStatus PartInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = PartName(kPart);
  KILN_OPS_GET_STATE(PartState, state, context, node, op);
  if (state->count == 0) return kKilnOk;
  return state->is_double ? RunPart<kPart, double>(context, node, state->count)
                          : RunPart<kPart, float>(context, node, state->count);
}

// ---- RFFT2D: input float32 [..., rows, cols], fft_length a constant int32 [2] of powers of two -> complex64
// [..., fft_rows, fft_cols / 2 + 1].

struct RfftState {
  int64_t batches = 0, rows = 0, cols = 0, fft_rows = 0, fft_cols = 0;
  bool dynamic = false;    // fft_length computed at run time: Invoke prepares again and sizes the output
  bool at_invoke = false;  // Prepare running from Invoke (PrepareAtInvoke)
};

KilnStatus RfftPrepare(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RFFT2D";
  KILN_OPS_GET_STATE(RfftState, state, context, node, op);
  KILN_OPAQUE_ENSURE_STATUS(CheckArity(context, node, op, 2, 2, 1));
  const KilnOpaqueTensor *input, *length;
  KilnOpaqueTensor* output;
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 0, "input", &input));
  KILN_OPAQUE_ENSURE_STATUS(GetRequiredInput(context, node, op, 1, "fft_length", &length));
  KILN_OPAQUE_ENSURE_STATUS(GetOutput(context, node, op, 0, &output));
  KILN_OPAQUE_ENSURE_STATUS(CheckFloat32(context, op, "input", input));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "output", output, kKilnComplex64));
  KILN_OPAQUE_ENSURE_STATUS(CheckType(context, op, "fft_length", length, kKilnInt32));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "input", input, 2, 8));
  KILN_OPAQUE_ENSURE_STATUS(CheckRank(context, op, "fft_length", length, 1, 1));
  if (TensorDims(length)[0] != 2) {
    KilnOpaqueContextReportError(context, "%s: fft_length %s holds %lld values; expected 2", op,
                                 TensorLabel(length).c_str(), static_cast<long long>(TensorDims(length)[0]));
    return kKilnError;
  }
  // fft_length computed at run time: a dynamic output (as LiteRT); Invoke runs this again with its values.
  state->dynamic = !IsConstant(length);
  if (state->dynamic && !state->at_invoke) {
    state->batches = 0;
    return MakeOutputDynamic(context, op, output);
  }
  std::vector<int32_t> fft;
  KILN_OPAQUE_ENSURE_STATUS(ReadInt32Values(context, op, "fft_length", length, false, &fft));
  for (int k = 0; k < 2; ++k) {
    // Powers of two, as LiteRT requires; 2^30 at most, so the sizes below stay far inside int64.
    if (fft[k] < 1 || fft[k] > (1 << 30) || (fft[k] & (fft[k] - 1)) != 0) {
      KilnOpaqueContextReportError(context, "%s: fft_length %s holds %d at %d; expected a power of two", op,
                                   TensorLabel(length).c_str(), fft[k], k);
      return kKilnError;
    }
  }
  if (fft[1] < 2) {
    // Measured: LiteRT 2.3.0's transform of width 1 writes a wrong imaginary part (minus the first value in row 0).
    KilnOpaqueContextReportError(context,
                                 "%s: fft_length %s asks for a transform 1 column wide; Kiln needs at least 2 (LiteRT's "
                                 "result for width 1 is wrong)",
                                 op, TensorLabel(length).c_str());
    return kKilnError;
  }
  Dims dims = TensorDims(input);
  state->rows = dims[dims.size() - 2];
  state->cols = dims.back();
  state->batches = reference::NumElements(Dims(dims.begin(), dims.end() - 2));
  state->fft_rows = fft[0];
  state->fft_cols = fft[1];
  dims[dims.size() - 2] = state->fft_rows;
  dims.back() = state->fft_cols / 2 + 1;
  return ResizeOutput(context, op, output, dims);
}

KilnStatus RfftInvoke(KilnOpaqueContext* context, KilnOpaqueNode* node) {
  constexpr const char* op = "RFFT2D";
  KILN_OPS_GET_STATE(RfftState, state, context, node, op);
  if (state->dynamic) KILN_OPAQUE_ENSURE_STATUS(PrepareAtInvoke(state, [&] { return RfftPrepare(context, node); }));
  const int64_t out_count = state->batches * state->fft_rows * (state->fft_cols / 2 + 1);
  if (out_count == 0) return kKilnOk;
  const KilnOpaqueTensor* input = KilnOpaqueNodeGetInput(context, node, 0);
  KilnOpaqueTensor* output = KilnOpaqueNodeGetOutput(context, node, 0);
  const float* in;
  KILN_OPAQUE_ENSURE_STATUS(GetTypedData(context, op, "input", input, state->batches * state->rows * state->cols, &in));
  KILN_OPAQUE_ENSURE_STATUS(CheckData(context, op, "output", output, out_count, 8));
  // An empty input (0 rows or columns) transforms to zeros.
  reference::Rfft2d(in, state->batches, state->rows, state->cols, state->fft_rows, state->fft_cols,
                    static_cast<float*>(KilnOpaqueTensorData(output)));
  return kKilnOk;
}

template <Part kPart>
void AddPart(std::vector<BuiltinOp>* table, KilnBuiltinOperator code) {
  table->push_back({code, 1, 1, MakeOperator<PartState>(code, 1, &PartPrepare<kPart>, &PartInvoke<kPart>)});
}

}  // namespace

void AddComplexOps(std::vector<BuiltinOp>* table) {
  // LiteRT 2.3.0 registers REAL, IMAG, COMPLEX_ABS and RFFT2D at v1 (measured in its Interpreter).
  AddPart<Part::kReal>(table, kKilnBuiltinReal);
  AddPart<Part::kImag>(table, kKilnBuiltinImag);
  AddPart<Part::kAbs>(table, kKilnBuiltinComplexAbs);
  table->push_back(
      {kKilnBuiltinRfft2d, 1, 1, MakeOperator<RfftState>(kKilnBuiltinRfft2d, 1, &RfftPrepare, &RfftInvoke)});
}

}  // namespace kiln::ops
