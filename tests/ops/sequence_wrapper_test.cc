// UNIDIRECTIONAL_SEQUENCE_LSTM, LSTM, SVDF, RNN and UNIDIRECTIONAL_SEQUENCE_RNN through the interpreter, against
// plain step-by-step implementations of their equations written here: sizes, batch 1 and more, time-major and
// batch-major, each optional part of the LSTM, the state carried across two Invokes and reset by
// KilnInterpreterResetVariableTensors, empty inputs, and the errors with their messages. Also the variable tensors
// themselves (reset to zero or the int8 zero point, a variable with a buffer refused).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kiln/builtin_op_data.h"
#include "kiln/c_api.h"
#include "ops/reference/quantized.h"
#include "runtime/interpreter.h"
#include "runtime/model/model_writer.h"
#include "tests/ops/wrapper_runner.h"

namespace kiln::ops {
namespace {

using wrapper_testing::CollectErrors;
using wrapper_testing::ExpectErrorMentions;
using wrapper_testing::Runner;

using Vec = std::vector<float>;

Vec Random(std::mt19937& rng, size_t n, float scale) {
  std::uniform_real_distribution<float> d(-scale, scale);
  Vec v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void ExpectNear(const Vec& got, const Vec& want, float tolerance = 2e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tolerance * std::max(1.0f, std::fabs(want[i]))) << "element " << i;
  }
}

float ApplyAct(KilnFusedActivation a, float x) {
  if (a == kKilnActRelu) return x < 0 ? 0 : x;
  if (a == kKilnActRelu6) return x < 0 ? 0 : (x > 6 ? 6 : x);
  if (a == kKilnActReluN1To1) return x < -1 ? -1 : (x > 1 ? 1 : x);
  if (a == kKilnActTanh) return std::tanh(x);
  if (a == kKilnActSigmoid) return 1 / (1 + std::exp(-x));
  return x;
}

// ------------------------------------------------------------------------------------------------------------
// LSTM

struct LstmConfig {
  int batch = 2, time = 3, in = 4, cells = 5, out = 5;
  bool sequence = true, time_major = false;
  bool cifg = false, peephole = false, projection = false, projection_bias = false, layer_norm = false;
  float cell_clip = 0, proj_clip = 0;
  KilnFusedActivation activation = kKilnActTanh;
  KilnLSTMKernelType kernel_type = kKilnLSTMFullKernel;
};

struct LstmWeights {
  Vec w[4], r[4], peep[4], bias[4], ln[4], proj, proj_bias;  // gates: input, forget, cell, output
};

LstmWeights MakeLstmWeights(const LstmConfig& c, unsigned seed) {
  std::mt19937 rng(seed);
  LstmWeights w;
  for (int g = 0; g < 4; ++g) {
    const bool absent = c.cifg && g == 0;
    if (!absent) {
      w.w[g] = Random(rng, static_cast<size_t>(c.cells * c.in), 0.5f);
      w.r[g] = Random(rng, static_cast<size_t>(c.cells * c.out), 0.5f);
      w.bias[g] = Random(rng, static_cast<size_t>(c.cells), 1.0f);
      if (c.layer_norm) w.ln[g] = Random(rng, static_cast<size_t>(c.cells), 1.0f);
    }
    if (c.peephole && !absent && g != 2) w.peep[g] = Random(rng, static_cast<size_t>(c.cells), 0.5f);
  }
  if (c.projection) w.proj = Random(rng, static_cast<size_t>(c.out * c.cells), 0.5f);
  if (c.projection_bias) w.proj_bias = Random(rng, static_cast<size_t>(c.out), 0.5f);
  return w;
}

// The LSTM equations, one batch row and one step at a time, in double.
void ReferenceLstm(const LstmConfig& c, const LstmWeights& w, const Vec& x, Vec* h_state, Vec* c_state, Vec* y) {
  y->assign(static_cast<size_t>(c.batch * c.time * c.out), 0.0f);
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  for (int t = 0; t < c.time; ++t) {
    for (int b = 0; b < c.batch; ++b) {
      const int row = c.time_major ? t * c.batch + b : b * c.time + t;
      std::vector<double> pre[4];
      for (int g = 0; g < 4; ++g) {
        if (c.cifg && g == 0) continue;
        pre[g].assign(static_cast<size_t>(c.cells), 0.0);
        for (int k = 0; k < c.cells; ++k) {
          double v = c.layer_norm ? 0.0 : w.bias[g][k];
          for (int i = 0; i < c.in; ++i) v += double(w.w[g][k * c.in + i]) * x[row * c.in + i];
          for (int j = 0; j < c.out; ++j) v += double(w.r[g][k * c.out + j]) * (*h_state)[b * c.out + j];
          pre[g][k] = v;
        }
      }
      auto normalize = [&](int g) {
        if (!c.layer_norm) return;
        double mean = 0, var = 0;
        for (double v : pre[g]) mean += v;
        mean /= c.cells;
        for (double v : pre[g]) var += (v - mean) * (v - mean);
        var /= c.cells;
        for (int k = 0; k < c.cells; ++k)
          pre[g][k] = (pre[g][k] - mean) / std::sqrt(var + 1e-8) * w.ln[g][k] + w.bias[g][k];
      };
      std::vector<double> gi(c.cells), gf(c.cells), gc(c.cells), go(c.cells), cell(c.cells), hidden(c.cells);
      if (!c.cifg) {
        for (int k = 0; k < c.cells; ++k) {
          if (c.peephole) pre[0][k] += double(w.peep[0][k]) * (*c_state)[b * c.cells + k];
        }
        normalize(0);
      }
      for (int k = 0; k < c.cells; ++k) {
        if (c.peephole) pre[1][k] += double(w.peep[1][k]) * (*c_state)[b * c.cells + k];
      }
      normalize(1);
      normalize(2);
      for (int k = 0; k < c.cells; ++k) {
        gf[k] = sigmoid(pre[1][k]);
        gi[k] = c.cifg ? 1.0 - gf[k] : sigmoid(pre[0][k]);
        gc[k] = ApplyAct(c.activation, static_cast<float>(pre[2][k]));
        double v = gf[k] * (*c_state)[b * c.cells + k] + gi[k] * gc[k];
        if (c.cell_clip > 0) v = std::clamp(v, -double(c.cell_clip), double(c.cell_clip));
        cell[k] = v;
        (*c_state)[b * c.cells + k] = static_cast<float>(v);
      }
      for (int k = 0; k < c.cells; ++k) {
        if (c.peephole) pre[3][k] += double(w.peep[3][k]) * cell[k];
      }
      normalize(3);
      for (int k = 0; k < c.cells; ++k) {
        go[k] = sigmoid(pre[3][k]);
        hidden[k] = go[k] * ApplyAct(c.activation, static_cast<float>(cell[k]));
      }
      for (int j = 0; j < c.out; ++j) {
        double v;
        if (c.projection) {
          v = c.projection_bias ? w.proj_bias[j] : 0.0;
          for (int k = 0; k < c.cells; ++k) v += double(w.proj[j * c.cells + k]) * hidden[k];
          if (c.proj_clip > 0) v = std::clamp(v, -double(c.proj_clip), double(c.proj_clip));
        } else {
          v = hidden[j];
        }
        (*y)[row * c.out + j] = static_cast<float>(v);
      }
      for (int j = 0; j < c.out; ++j) (*h_state)[b * c.out + j] = (*y)[row * c.out + j];
    }
  }
}

// The LSTM model: input x, the weights constants, the two states variables (or plain inputs); the output state
// `state_elements_delta` wider per batch row than it should be.
void BuildLstm(ModelWriter& wr, const LstmConfig& c, const LstmWeights& w, bool states_variable = true,
               int state_elements_delta = 0) {
  const std::vector<int> in_shape =
      c.sequence ? (c.time_major ? std::vector<int>{c.time, c.batch, c.in} : std::vector<int>{c.batch, c.time, c.in})
                 : std::vector<int>{c.batch, c.in};
  std::vector<int> out_shape = in_shape;
  out_shape.back() = c.out;
  const int x = wr.AddTensor(kKilnFloat32, in_shape, "x");
  std::vector<int> inputs = {x};
  const char* gates[] = {"input", "forget", "cell", "output"};
  auto constant = [&](const Vec& v, std::vector<int> shape, const std::string& name) {
    return v.empty() ? -1 : wr.AddConstTensor(kKilnFloat32, shape, name, v);
  };
  for (int g = 0; g < 4; ++g) inputs.push_back(constant(w.w[g], {c.cells, c.in}, std::string("w_") + gates[g]));
  for (int g = 0; g < 4; ++g) inputs.push_back(constant(w.r[g], {c.cells, c.out}, std::string("r_") + gates[g]));
  for (int g : {0, 1, 3}) inputs.push_back(constant(w.peep[g], {c.cells}, std::string("peephole_") + gates[g]));
  for (int g = 0; g < 4; ++g) inputs.push_back(constant(w.bias[g], {c.cells}, std::string("bias_") + gates[g]));
  inputs.push_back(constant(w.proj, {c.out, c.cells}, "projection"));
  inputs.push_back(constant(w.proj_bias, {c.out}, "projection_bias"));
  const int h = wr.AddTensor(kKilnFloat32, {c.batch, c.out + state_elements_delta}, "output_state");
  const int cs = wr.AddTensor(kKilnFloat32, {c.batch, c.cells}, "cell_state");
  if (states_variable) {
    wr.SetVariable(h);
    wr.SetVariable(cs);
  }
  inputs.push_back(h);
  inputs.push_back(cs);
  if (c.layer_norm) {
    for (int g = 0; g < 4; ++g) inputs.push_back(constant(w.ln[g], {c.cells}, std::string("ln_") + gates[g]));
  }
  const int y = wr.AddTensor(kKilnFloat32, out_shape, "y");
  if (c.sequence) {
    KilnUnidirectionalSequenceLSTMParams p{};
    p.activation = c.activation;
    p.cell_clip = c.cell_clip;
    p.proj_clip = c.proj_clip;
    p.time_major = c.time_major;
    wr.AddOp(kKilnBuiltinUnidirectionalSequenceLstm, inputs, {y}, p);
  } else {
    KilnLSTMParams p{};
    p.activation = c.activation;
    p.cell_clip = c.cell_clip;
    p.proj_clip = c.proj_clip;
    p.kernel_type = c.kernel_type;
    wr.AddOp(kKilnBuiltinLstm, inputs, {y}, p);
  }
  wr.SetInputs(states_variable ? std::vector<int>{x} : std::vector<int>{x, h, cs});
  wr.SetOutputs({y});
}

// Runs the config twice (state carried), resets, runs again; each against the reference.
void CheckLstm(const LstmConfig& c, unsigned seed) {
  SCOPED_TRACE("batch " + std::to_string(c.batch) + " time " + std::to_string(c.time) + " in " + std::to_string(c.in) +
               " cells " + std::to_string(c.cells) + " out " + std::to_string(c.out) +
               (c.time_major ? " time-major" : "") + (c.cifg ? " cifg" : "") + (c.peephole ? " peephole" : "") +
               (c.projection ? " projection" : "") + (c.layer_norm ? " layer-norm" : ""));
  const LstmWeights w = MakeLstmWeights(c, seed);
  ModelWriter wr;
  BuildLstm(wr, c, w);
  Runner r(wr);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  std::mt19937 rng(seed + 100);
  const size_t steps = static_cast<size_t>(c.batch * (c.sequence ? c.time : 1));
  Vec h(static_cast<size_t>(c.batch * c.out), 0.0f), cs(static_cast<size_t>(c.batch * c.cells), 0.0f), want;
  LstmConfig rc = c;
  if (!c.sequence) rc.time = 1;
  const Vec x1 = Random(rng, steps * c.in, 1.0f), x2 = Random(rng, steps * c.in, 1.0f);
  r.SetInput(0, x1.data(), x1.size() * 4);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  ReferenceLstm(rc, w, x1, &h, &cs, &want);
  ExpectNear(r.Output(), want);
  const Vec first = r.Output();
  r.SetInput(0, x2.data(), x2.size() * 4);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  ReferenceLstm(rc, w, x2, &h, &cs, &want);  // continues from the state the first Invoke left
  ExpectNear(r.Output(), want);
  ASSERT_EQ(KilnInterpreterResetVariableTensors(r.interpreter()), kKilnOk);
  r.SetInput(0, x1.data(), x1.size() * 4);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), first);  // from zero state again
}

TEST(SequenceLstmWrapperTest, MatchesReference) {
  unsigned seed = 1;
  for (bool time_major : {false, true}) {
    for (int batch : {1, 3}) {
      LstmConfig c;
      c.batch = batch;
      c.time_major = time_major;
      CheckLstm(c, seed++);
      c.time = 1;
      c.in = 1;
      c.cells = c.out = 1;
      CheckLstm(c, seed++);
      c.time = 7;
      c.in = 9;
      c.cells = c.out = 12;
      CheckLstm(c, seed++);
    }
  }
}

TEST(SequenceLstmWrapperTest, OptionalParts) {
  unsigned seed = 50;
  for (bool cifg : {false, true}) {
    for (bool peephole : {false, true}) {
      for (bool projection : {false, true}) {
        for (bool layer_norm : {false, true}) {
          LstmConfig c;
          c.cifg = cifg;
          c.peephole = peephole;
          c.projection = projection;
          c.projection_bias = projection && peephole;
          c.layer_norm = layer_norm;
          c.out = projection ? 3 : c.cells;
          c.time_major = seed % 2 == 0;
          CheckLstm(c, seed++);
        }
      }
    }
  }
}

TEST(SequenceLstmWrapperTest, ClippingAndActivations) {
  unsigned seed = 80;
  for (KilnFusedActivation a : {kKilnActTanh, kKilnActRelu, kKilnActRelu6, kKilnActReluN1To1, kKilnActNone}) {
    LstmConfig c;
    c.activation = a;
    c.cell_clip = 0.3f;
    c.projection = true;
    c.out = 4;
    c.proj_clip = 0.2f;
    CheckLstm(c, seed++);
  }
}

TEST(LstmWrapperTest, FullKernelMatchesReference) {
  unsigned seed = 100;
  for (int batch : {1, 4}) {
    LstmConfig c;
    c.sequence = false;
    c.batch = batch;
    CheckLstm(c, seed++);
    c.cifg = c.peephole = c.projection = c.projection_bias = c.layer_norm = true;
    c.out = 2;
    c.cell_clip = 0.5f;
    CheckLstm(c, seed++);
  }
}

TEST(SequenceLstmWrapperTest, EmptyInputs) {
  for (int which = 0; which < 2; ++which) {
    LstmConfig c;
    if (which == 0) c.batch = 0;
    if (which == 1) c.time = 0;
    const LstmWeights w = MakeLstmWeights(c, 5);
    ModelWriter wr;
    BuildLstm(wr, c, w);
    Runner r(wr);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_TRUE(r.Output().empty());
  }
}

TEST(SequenceLstmWrapperTest, Errors) {
  LstmConfig c;
  {
    ModelWriter wr;  // the states as plain inputs, not variables
    BuildLstm(wr, c, MakeLstmWeights(c, 1), false);
    Runner r(wr);
    ExpectErrorMentions(r, {"UNIDIRECTIONAL_SEQUENCE_LSTM: output_state 'output_state' must be a variable tensor"});
  }
  {
    ModelWriter wr;
    BuildLstm(wr, c, MakeLstmWeights(c, 1), true, 1);
    Runner r(wr);
    ExpectErrorMentions(r,
                        {"UNIDIRECTIONAL_SEQUENCE_LSTM: output_state 'output_state' has 12 elements", "expected 10"});
  }
  {
    LstmWeights w = MakeLstmWeights(c, 1);
    w.r[0].clear();  // input-to-input given without recurrent-to-input
    ModelWriter wr;
    BuildLstm(wr, c, w);
    Runner r(wr);
    ExpectErrorMentions(r, {"UNIDIRECTIONAL_SEQUENCE_LSTM: input_to_input_weights and recurrent_to_input_weights"});
  }
  {
    LstmConfig p = c;  // peephole forget without output
    p.peephole = true;
    ModelWriter wr;
    LstmWeights wp = MakeLstmWeights(p, 1);
    wp.peep[3].clear();
    BuildLstm(wr, p, wp);
    Runner r(wr);
    ExpectErrorMentions(r, {"UNIDIRECTIONAL_SEQUENCE_LSTM: the peephole weights"});
  }
  {
    LstmConfig n = c;
    n.out = 3;  // no projection: the output size must equal the cells
    ModelWriter wr;
    BuildLstm(wr, n, MakeLstmWeights(n, 1));
    Runner r(wr);
    ExpectErrorMentions(r, {"UNIDIRECTIONAL_SEQUENCE_LSTM: without projection_weights the output size (3)"});
  }
  {
    // A weight of the wrong shape: recurrent_to_forget [5, 4] where [5, 5] is expected.
    LstmWeights w = MakeLstmWeights(c, 1);
    ModelWriter wr;
    const int x = wr.AddTensor(kKilnFloat32, {2, 3, 4}, "x");
    std::vector<int> inputs = {x};
    for (int g = 0; g < 4; ++g)
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {5, 4}, "w" + std::to_string(g), w.w[g]));
    for (int g = 0; g < 4; ++g) {
      inputs.push_back(g == 1 ? wr.AddConstTensor(kKilnFloat32, {5, 4}, "r_forget", w.w[g])
                              : wr.AddConstTensor(kKilnFloat32, {5, 5}, "r" + std::to_string(g), w.r[g]));
    }
    for (int i = 0; i < 3; ++i) inputs.push_back(-1);
    for (int g = 0; g < 4; ++g)
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {5}, "b" + std::to_string(g), w.bias[g]));
    inputs.push_back(-1);
    inputs.push_back(-1);
    const int h = wr.AddTensor(kKilnFloat32, {2, 5}, "h");
    const int cs = wr.AddTensor(kKilnFloat32, {2, 5}, "c");
    wr.SetVariable(h);
    wr.SetVariable(cs);
    inputs.push_back(h);
    inputs.push_back(cs);
    const int y = wr.AddTensor(kKilnFloat32, {2, 3, 5}, "y");
    KilnUnidirectionalSequenceLSTMParams p{};
    p.activation = kKilnActTanh;
    wr.AddOp(kKilnBuiltinUnidirectionalSequenceLstm, inputs, {y}, p);
    wr.SetInputs({x});
    wr.SetOutputs({y});
    Runner r(wr);
    ExpectErrorMentions(r, {"UNIDIRECTIONAL_SEQUENCE_LSTM: recurrent_to_forget_weights 'r_forget' has shape [5, 4]; "
                            "expected [5, 5]"});
  }
  {
    LstmConfig s = c;
    s.cell_clip = -1;
    ModelWriter wr;
    BuildLstm(wr, s, MakeLstmWeights(s, 1));
    Runner r(wr);
    ExpectErrorMentions(r, {"UNIDIRECTIONAL_SEQUENCE_LSTM: cell_clip -1"});
  }
  {
    LstmConfig s = c;
    s.activation = kKilnActSignBit;
    ModelWriter wr;
    BuildLstm(wr, s, MakeLstmWeights(s, 1));
    Runner r(wr);
    ExpectErrorMentions(r, {"UNIDIRECTIONAL_SEQUENCE_LSTM: fused activation 5 is not supported"});
  }
  {
    LstmConfig b = c;  // the basic kernel takes five inputs and four outputs
    b.sequence = false;
    b.kernel_type = kKilnLSTMBasicKernel;
    ModelWriter wr;
    BuildLstm(wr, b, MakeLstmWeights(b, 1));
    Runner r(wr);
    ExpectErrorMentions(r, {"LSTM: expects 5 inputs, got 20"});
  }
}

// LSTM's basic kernel: gates input, new input, forget, output from weights . [x, h] + bias; the new activation and
// state come out and are copied back into prev_activation and prev_state (graph inputs here), so that the next
// Invoke continues from them.
TEST(LstmWrapperTest, BasicKernel) {
  const int batch = 2, in = 3, out = 4, depth = in + out;
  std::mt19937 rng(41);
  const Vec w = Random(rng, 4 * out * depth, 0.5f), b = Random(rng, 4 * out, 0.5f);
  ModelWriter wr;
  const int x = wr.AddTensor(kKilnFloat32, {batch, in}, "x");
  const int h = wr.AddTensor(kKilnFloat32, {batch, out}, "prev_activation");
  const int wt = wr.AddConstTensor(kKilnFloat32, {4 * out, depth}, "weights", w);
  const int bt = wr.AddConstTensor(kKilnFloat32, {4 * out}, "bias", b);
  const int c = wr.AddTensor(kKilnFloat32, {batch, out}, "prev_state");
  const int y = wr.AddTensor(kKilnFloat32, {batch, out}, "activation");
  const int st = wr.AddTensor(kKilnFloat32, {batch, out}, "state");
  const int cat = wr.AddTensor(kKilnFloat32, {batch, depth}, "concat_temp");
  const int act = wr.AddTensor(kKilnFloat32, {batch, 4 * out}, "activ_temp");
  KilnLSTMParams p{};
  p.activation = kKilnActTanh;
  p.kernel_type = kKilnLSTMBasicKernel;
  wr.AddOp(kKilnBuiltinLstm, {x, h, wt, bt, c}, {y, st, cat, act}, p);
  wr.SetInputs({x, h, c});
  wr.SetOutputs({y, st, cat, act});
  Runner r(wr);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  Vec hs = Random(rng, batch * out, 1.0f), cs = Random(rng, batch * out, 1.0f);
  r.SetInput(1, hs.data(), hs.size() * 4);
  r.SetInput(2, cs.data(), cs.size() * 4);
  for (int invoke = 0; invoke < 2; ++invoke) {
    const Vec xs = Random(rng, batch * in, 1.0f);
    r.SetInput(0, xs.data(), xs.size() * 4);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    Vec want_h(batch * out), want_c(batch * out), want_cat, want_act;
    for (int bt2 = 0; bt2 < batch; ++bt2) {
      Vec concat(xs.begin() + bt2 * in, xs.begin() + (bt2 + 1) * in);
      concat.insert(concat.end(), hs.begin() + bt2 * out, hs.begin() + (bt2 + 1) * out);
      want_cat.insert(want_cat.end(), concat.begin(), concat.end());
      std::vector<double> a(4 * out);
      for (int k = 0; k < 4 * out; ++k) {
        a[k] = b[k];
        for (int i = 0; i < depth; ++i) a[k] += double(w[k * depth + i]) * concat[i];
        want_act.push_back(static_cast<float>(a[k]));
      }
      for (int k = 0; k < out; ++k) {
        auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
        const double state = sig(a[k]) * std::tanh(a[out + k]) + sig(a[2 * out + k]) * cs[bt2 * out + k];
        want_c[bt2 * out + k] = static_cast<float>(state);
        want_h[bt2 * out + k] = static_cast<float>(sig(a[3 * out + k]) * std::tanh(state));
      }
    }
    ExpectNear(r.Output(0), want_h);
    ExpectNear(r.Output(1), want_c);
    ExpectNear(r.Output(2), want_cat);
    ExpectNear(r.Output(3), want_act);
    hs = want_h;  // carried into the next Invoke through prev_activation and prev_state
    cs = want_c;
  }
}

// Hybrid: int8 input weights (3 * 0.1) dequantized in Prepare and run in float; int16 weights refused.
TEST(SequenceLstmWrapperTest, HybridWeights) {
  for (KilnType type : {kKilnInt8, kKilnInt16}) {
    LstmConfig c;
    LstmWeights w = MakeLstmWeights(c, 1);
    ModelWriter wr;
    const int x = wr.AddTensor(kKilnFloat32, {2, 3, 4}, "x");
    std::vector<int> inputs = {x};
    for (int g = 0; g < 4; ++g) {
      const int t = type == kKilnInt8
                        ? wr.AddConstTensor(kKilnInt8, {5, 4}, "wq" + std::to_string(g), std::vector<int8_t>(20, 3))
                        : wr.AddConstTensor(kKilnInt16, {5, 4}, "wq" + std::to_string(g), std::vector<int16_t>(20, 3));
      wr.SetQuantization(t, {0.1f}, {0});
      inputs.push_back(t);
      w.w[g].assign(20, 0.3f);
    }
    for (int g = 0; g < 4; ++g)
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {5, 5}, "r" + std::to_string(g), w.r[g]));
    for (int i = 0; i < 3; ++i) inputs.push_back(-1);
    for (int g = 0; g < 4; ++g)
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {5}, "b" + std::to_string(g), w.bias[g]));
    inputs.push_back(-1);
    inputs.push_back(-1);
    const int h = wr.AddTensor(kKilnFloat32, {2, 5}, "h");
    const int cs = wr.AddTensor(kKilnFloat32, {2, 5}, "c");
    wr.SetVariable(h);
    wr.SetVariable(cs);
    inputs.push_back(h);
    inputs.push_back(cs);
    const int y = wr.AddTensor(kKilnFloat32, {2, 3, 5}, "y");
    KilnUnidirectionalSequenceLSTMParams p{};
    p.activation = kKilnActTanh;
    wr.AddOp(kKilnBuiltinUnidirectionalSequenceLstm, inputs, {y}, p);
    wr.SetInputs({x});
    wr.SetOutputs({y});
    Runner r(wr);
    if (type == kKilnInt16) {
      ExpectErrorMentions(r, {"UNIDIRECTIONAL_SEQUENCE_LSTM: input_to_input_weights 'wq0' is int16; float32 or "
                              "constant int8 (hybrid) weights are supported"});
      continue;
    }
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    std::mt19937 rng(9);
    const Vec input = Random(rng, 24, 1.0f);
    r.SetInput(0, input.data(), input.size() * 4);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    Vec hs(10, 0.0f), state(10, 0.0f), want;
    ReferenceLstm(c, w, input, &hs, &state, &want);
    ExpectNear(r.Output(), want);
  }
}

// ------------------------------------------------------------------------------------------------------------
// SVDF

struct SvdfCase {
  int batch, in, units, rank, memory;
  bool bias;
  KilnFusedActivation activation;
};

void BuildSvdf(ModelWriter& wr, const SvdfCase& s, const Vec& wf, const Vec& wt, const Vec& b, bool variable = true,
               int state_delta = 0) {
  const int filters = s.units * s.rank;
  const int x = wr.AddTensor(kKilnFloat32, {s.batch, s.in}, "x");
  const int f = wr.AddConstTensor(kKilnFloat32, {filters, s.in}, "weights_feature", wf);
  const int t = wr.AddConstTensor(kKilnFloat32, {filters, s.memory}, "weights_time", wt);
  const int bias = s.bias ? wr.AddConstTensor(kKilnFloat32, {s.units}, "bias", b) : -1;
  const int state = wr.AddTensor(kKilnFloat32, {s.batch, s.memory * filters + state_delta}, "state");
  if (variable) wr.SetVariable(state);
  const int y = wr.AddTensor(kKilnFloat32, {s.batch, s.units}, "y");
  KilnSVDFParams p{};
  p.rank = s.rank;
  p.activation = s.activation;
  wr.AddOp(kKilnBuiltinSvdf, {x, f, t, bias, state}, {y}, p);
  wr.SetInputs(variable ? std::vector<int>{x} : std::vector<int>{x, state});
  wr.SetOutputs({y});
}

// One SVDF step on memory[b][f][m] (oldest first): push the feature value, weigh the memory, sum the rank.
void ReferenceSvdf(const SvdfCase& s, const Vec& wf, const Vec& wt, const Vec& b, const Vec& x,
                   std::vector<std::vector<std::vector<double>>>* memory, Vec* y) {
  const int filters = s.units * s.rank;
  y->assign(static_cast<size_t>(s.batch * s.units), 0.0f);
  for (int bt = 0; bt < s.batch; ++bt) {
    std::vector<double> filter_out(filters);
    for (int f = 0; f < filters; ++f) {
      auto& mem = (*memory)[bt][f];
      double feature = 0;
      for (int i = 0; i < s.in; ++i) feature += double(wf[f * s.in + i]) * x[bt * s.in + i];
      mem.erase(mem.begin());
      mem.push_back(feature);
      double v = 0;
      for (int m = 0; m < s.memory; ++m) v += mem[m] * wt[f * s.memory + m];
      filter_out[f] = v;
    }
    for (int u = 0; u < s.units; ++u) {
      double v = s.bias ? b[u] : 0.0;
      for (int k = 0; k < s.rank; ++k) v += filter_out[u * s.rank + k];
      (*y)[bt * s.units + u] = ApplyAct(s.activation, static_cast<float>(v));
    }
  }
}

TEST(SvdfWrapperTest, MatchesReferenceAcrossInvokes) {
  unsigned seed = 7;
  for (const SvdfCase& s : {SvdfCase{1, 3, 4, 1, 5, true, kKilnActNone}, SvdfCase{2, 4, 3, 2, 4, true, kKilnActRelu},
                            SvdfCase{3, 6, 2, 3, 10, false, kKilnActNone}, SvdfCase{2, 5, 4, 1, 1, true, kKilnActTanh},
                            SvdfCase{4, 1, 1, 4, 3, false, kKilnActRelu6}}) {
    SCOPED_TRACE("batch " + std::to_string(s.batch) + " rank " + std::to_string(s.rank) + " memory " +
                 std::to_string(s.memory));
    std::mt19937 rng(seed++);
    const int filters = s.units * s.rank;
    const Vec wf = Random(rng, filters * s.in, 0.5f), wt = Random(rng, filters * s.memory, 0.5f),
              b = Random(rng, s.units, 0.5f);
    ModelWriter wr;
    BuildSvdf(wr, s, wf, wt, b);
    Runner r(wr);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    auto zero = [&] {
      return std::vector<std::vector<std::vector<double>>>(
          s.batch, std::vector<std::vector<double>>(filters, std::vector<double>(s.memory, 0.0)));
    };
    auto memory = zero();
    std::vector<Vec> inputs;
    std::vector<Vec> first_outputs;
    for (int step = 0; step < s.memory + 2; ++step) {  // past the memory, so the oldest values drop out
      inputs.push_back(Random(rng, s.batch * s.in, 1.0f));
      r.SetInput(0, inputs.back().data(), inputs.back().size() * 4);
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      Vec want;
      ReferenceSvdf(s, wf, wt, b, inputs.back(), &memory, &want);
      ExpectNear(r.Output(), want);
      first_outputs.push_back(r.Output());
    }
    ASSERT_EQ(KilnInterpreterResetVariableTensors(r.interpreter()), kKilnOk);
    for (size_t step = 0; step < 2; ++step) {
      r.SetInput(0, inputs[step].data(), inputs[step].size() * 4);
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      EXPECT_EQ(r.Output(), first_outputs[step]);
    }
  }
}

TEST(SvdfWrapperTest, EmptyBatch) {
  SvdfCase s{0, 3, 2, 1, 4, true, kKilnActNone};
  ModelWriter wr;
  BuildSvdf(wr, s, Vec(6, 0.5f), Vec(8, 0.5f), Vec(2, 0.1f));
  Runner r(wr);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_TRUE(r.Output().empty());
}

TEST(SvdfWrapperTest, Errors) {
  SvdfCase s{2, 3, 4, 1, 5, true, kKilnActNone};
  const Vec wf(12, 0.1f), wt(20, 0.1f), b(4, 0.1f);
  {
    ModelWriter wr;
    BuildSvdf(wr, s, wf, wt, b, false);
    Runner r(wr);
    ExpectErrorMentions(r, {"SVDF: state 'state' must be a variable tensor"});
  }
  {
    ModelWriter wr;
    BuildSvdf(wr, s, wf, wt, b, true, 1);
    Runner r(wr);
    ExpectErrorMentions(r, {"SVDF: state 'state' has 42 elements", "expected 40"});
  }
  {
    ModelWriter wr;  // rank 3: the 4 filters written below are not divisible by it
    const int x = wr.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int f = wr.AddConstTensor(kKilnFloat32, {4, 3}, "weights_feature", wf);
    const int t = wr.AddConstTensor(kKilnFloat32, {4, 5}, "weights_time", wt);
    const int state = wr.AddTensor(kKilnFloat32, {2, 20}, "state");
    wr.SetVariable(state);
    const int y = wr.AddTensor(kKilnFloat32, {2, 1}, "y");
    KilnSVDFParams p{};
    p.rank = 3;
    wr.AddOp(kKilnBuiltinSvdf, {x, f, t, -1, state}, {y}, p);
    wr.SetInputs({x});
    wr.SetOutputs({y});
    Runner r(wr);
    ExpectErrorMentions(r, {"SVDF: rank 3 must be at least 1 and divide the 4 filters of weights_feature "
                            "'weights_feature'"});
  }
  {
    ModelWriter wr;  // rank 0: refused, never divided by
    const int x = wr.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int f = wr.AddConstTensor(kKilnFloat32, {4, 3}, "weights_feature", wf);
    const int t = wr.AddConstTensor(kKilnFloat32, {4, 5}, "weights_time", wt);
    const int state = wr.AddTensor(kKilnFloat32, {2, 20}, "state");
    wr.SetVariable(state);
    const int y = wr.AddTensor(kKilnFloat32, {2, 4}, "y");
    KilnSVDFParams p{};
    p.rank = 0;
    wr.AddOp(kKilnBuiltinSvdf, {x, f, t, -1, state}, {y}, p);
    wr.SetInputs({x});
    wr.SetOutputs({y});
    Runner r(wr);
    ExpectErrorMentions(r, {"SVDF: rank 0 must be at least 1"});
  }
  {
    ModelWriter wr;  // weights_time with the wrong number of filters
    const int x = wr.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int f = wr.AddConstTensor(kKilnFloat32, {4, 3}, "weights_feature", wf);
    const int t = wr.AddConstTensor(kKilnFloat32, {2, 10}, "weights_time", wt);
    const int state = wr.AddTensor(kKilnFloat32, {2, 40}, "state");
    wr.SetVariable(state);
    const int y = wr.AddTensor(kKilnFloat32, {2, 4}, "y");
    KilnSVDFParams p{};
    p.rank = 1;
    wr.AddOp(kKilnBuiltinSvdf, {x, f, t, -1, state}, {y}, p);
    wr.SetInputs({x});
    wr.SetOutputs({y});
    Runner r(wr);
    ExpectErrorMentions(r, {"SVDF: weights_time 'weights_time' has shape [2, 10]; expected [4, 10]"});
  }
}

// The integer SVDF: int8 input/weights_feature/output, int16 weights_time and state, int32 bias.
struct SvdfInt8Model {
  int batch = 2, in = 5, units = 3, rank = 2, memory = 4;
  float input_scale = 0.03f, feature_scale = 0.01f, time_scale = 0.0005f, state_scale = 0.002f, output_scale = 0.05f;
  int input_zp = -4, output_zp = 6;
  KilnFusedActivation activation = kKilnActRelu;
  KilnType state_type = kKilnInt16;
  std::vector<int8_t> wf;
  std::vector<int16_t> wt;
  std::vector<int32_t> bias;
};

void BuildSvdfInt8(ModelWriter& wr, const SvdfInt8Model& s) {
  const int filters = s.units * s.rank;
  const int x = wr.AddTensor(kKilnInt8, {s.batch, s.in}, "x");
  wr.SetQuantization(x, {s.input_scale}, {s.input_zp});
  const int f = wr.AddConstTensor(kKilnInt8, {filters, s.in}, "weights_feature", s.wf);
  wr.SetQuantization(f, {s.feature_scale}, {0});
  const int t = wr.AddConstTensor(kKilnInt16, {filters, s.memory}, "weights_time", s.wt);
  wr.SetQuantization(t, {s.time_scale}, {0});
  const int b = s.bias.empty() ? -1 : wr.AddConstTensor(kKilnInt32, {s.units}, "bias", s.bias);
  const int state = wr.AddTensor(s.state_type, {s.batch, s.memory * filters}, "state");
  wr.SetQuantization(state, {s.state_scale}, {0});
  wr.SetVariable(state);
  const int y = wr.AddTensor(kKilnInt8, {s.batch, s.units}, "y");
  wr.SetQuantization(y, {s.output_scale}, {s.output_zp});
  KilnSVDFParams p{};
  p.rank = s.rank;
  p.activation = s.activation;
  wr.AddOp(kKilnBuiltinSvdf, {x, f, t, b, state}, {y}, p);
  wr.SetInputs({x});
  wr.SetOutputs({y});
}

TEST(SvdfWrapperTest, Int8MatchesReferenceAcrossInvokes) {
  for (bool with_bias : {true, false}) {
    std::mt19937 rng(with_bias ? 3 : 4);
    SvdfInt8Model s;
    const int filters = s.units * s.rank;
    std::uniform_int_distribution<int> i8(-128, 127), i16(-3000, 3000), i32(-20000, 20000);
    for (int i = 0; i < filters * s.in; ++i) s.wf.push_back(static_cast<int8_t>(i8(rng)));
    for (int i = 0; i < filters * s.memory; ++i) s.wt.push_back(static_cast<int16_t>(i16(rng)));
    if (with_bias) {
      for (int i = 0; i < s.units; ++i) s.bias.push_back(i32(rng));
    }
    ModelWriter wr;
    BuildSvdfInt8(wr, s);
    Runner r(wr);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const auto m1 = reference::QuantizeMultiplier(double(s.input_scale) * s.feature_scale / s.state_scale);
    const auto m2 = reference::QuantizeMultiplier(double(s.state_scale) * s.time_scale / s.output_scale);
    // memory[b][f]: the filter's int16 history, oldest first.
    std::vector<std::vector<std::vector<int32_t>>> memory(
        s.batch, std::vector<std::vector<int32_t>>(filters, std::vector<int32_t>(s.memory, 0)));
    for (int step = 0; step < s.memory + 2; ++step) {
      std::vector<int8_t> x(s.batch * s.in);
      for (int8_t& v : x) v = static_cast<int8_t>(i8(rng));
      r.SetInput(0, x.data(), x.size());
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      std::vector<int8_t> want(s.batch * s.units);
      for (int b = 0; b < s.batch; ++b) {
        std::vector<int64_t> per_filter(filters);
        for (int f = 0; f < filters; ++f) {
          int64_t acc = 0;
          for (int i = 0; i < s.in; ++i) acc += int64_t{s.wf[f * s.in + i]} * (x[b * s.in + i] - s.input_zp);
          const int32_t v =
              reference::MultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), m1, reference::Rounding::kDouble);
          auto& mem = memory[b][f];
          mem.erase(mem.begin());
          mem.push_back(std::clamp(v, -32768, 32767));
          int64_t t = 0;
          for (int k = 0; k < s.memory; ++k) t += int64_t{mem[k]} * s.wt[f * s.memory + k];
          per_filter[f] = t;
        }
        for (int u = 0; u < s.units; ++u) {
          int64_t acc = with_bias ? s.bias[u] : 0;
          for (int k = 0; k < s.rank; ++k) acc += per_filter[u * s.rank + k];
          const int32_t v =
              reference::MultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), m2, reference::Rounding::kDouble);
          want[b * s.units + u] = static_cast<int8_t>(std::clamp(v + s.output_zp, -128, 127));
        }
      }
      EXPECT_EQ(r.OutputAs<int8_t>(), want) << "step " << step;
    }
    // The int16 state resets to zero (its zero point is 0; only int8 variables reset to a zero point).
    ASSERT_EQ(KilnInterpreterResetVariableTensors(r.interpreter()), kKilnOk);
  }
}

TEST(SvdfWrapperTest, Int8Errors) {
  SvdfInt8Model s;
  const int filters = s.units * s.rank;
  s.wf.assign(filters * s.in, 1);
  s.wt.assign(filters * s.memory, 1);
  {
    SvdfInt8Model n = s;
    n.activation = kKilnActNone;
    ModelWriter wr;
    BuildSvdfInt8(wr, n);
    Runner r(wr);
    ExpectErrorMentions(r, {"SVDF: the integer SVDF takes only the RELU activation (as LiteRT), got 0"});
  }
  {
    SvdfInt8Model n = s;
    n.state_type = kKilnInt8;
    ModelWriter wr;
    BuildSvdfInt8(wr, n);
    Runner r(wr);
    ExpectErrorMentions(r, {"SVDF: state 'state' is int8; the integer SVDF takes int16"});
  }
}

// ------------------------------------------------------------------------------------------------------------
// RNN, UNIDIRECTIONAL_SEQUENCE_RNN

struct RnnCase {
  int batch, time, in, units;  // time 0: RNN (one step, rank-2 input)
  bool time_major;
  KilnFusedActivation activation;
};

void BuildRnn(ModelWriter& wr, const RnnCase& c, const Vec& w, const Vec& rw, const Vec& b, bool with_bias = true) {
  const std::vector<int> shape = c.time == 0    ? std::vector<int>{c.batch, c.in}
                                 : c.time_major ? std::vector<int>{c.time, c.batch, c.in}
                                                : std::vector<int>{c.batch, c.time, c.in};
  std::vector<int> out_shape = shape;
  out_shape.back() = c.units;
  const int x = wr.AddTensor(kKilnFloat32, shape, "x");
  const int wt = wr.AddConstTensor(kKilnFloat32, {c.units, c.in}, "weights", w);
  const int rt = wr.AddConstTensor(kKilnFloat32, {c.units, c.units}, "recurrent_weights", rw);
  const int bt = with_bias ? wr.AddConstTensor(kKilnFloat32, {c.units}, "bias", b) : -1;
  const int h = wr.AddTensor(kKilnFloat32, {c.batch, c.units}, "hidden_state");
  wr.SetVariable(h);
  const int y = wr.AddTensor(kKilnFloat32, out_shape, "y");
  if (c.time == 0) {
    KilnRNNParams p{};
    p.activation = c.activation;
    wr.AddOp(kKilnBuiltinRnn, {x, wt, rt, bt, h}, {y}, p);
  } else {
    KilnSequenceRNNParams p{};
    p.activation = c.activation;
    p.time_major = c.time_major;
    wr.AddOp(kKilnBuiltinUnidirectionalSequenceRnn, {x, wt, rt, bt, h}, {y}, p);
  }
  wr.SetInputs({x});
  wr.SetOutputs({y});
}

TEST(RnnWrapperTest, MatchesReferenceAcrossInvokes) {
  unsigned seed = 30;
  for (const RnnCase& c : {RnnCase{2, 0, 3, 4, false, kKilnActTanh}, RnnCase{1, 0, 5, 3, false, kKilnActRelu},
                           RnnCase{3, 0, 2, 6, false, kKilnActNone}, RnnCase{2, 5, 3, 4, false, kKilnActTanh},
                           RnnCase{3, 4, 4, 2, true, kKilnActRelu6}, RnnCase{1, 1, 1, 1, true, kKilnActNone},
                           RnnCase{2, 3, 7, 5, true, kKilnActReluN1To1}}) {
    SCOPED_TRACE("batch " + std::to_string(c.batch) + " time " + std::to_string(c.time));
    std::mt19937 rng(seed++);
    const Vec w = Random(rng, c.units * c.in, 0.5f), rw = Random(rng, c.units * c.units, 0.5f),
              b = Random(rng, c.units, 0.5f);
    ModelWriter wr;
    BuildRnn(wr, c, w, rw, b);
    Runner r(wr);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    const int time = std::max(1, c.time);
    std::vector<double> h(c.batch * c.units, 0.0);
    Vec first;
    for (int invoke = 0; invoke < 2; ++invoke) {
      const Vec x = Random(rng, c.batch * time * c.in, 1.0f);
      r.SetInput(0, x.data(), x.size() * 4);
      ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
      Vec want(c.batch * time * c.units);
      for (int t = 0; t < time; ++t) {
        for (int bt = 0; bt < c.batch; ++bt) {
          const int row = c.time_major ? t * c.batch + bt : bt * time + t;
          std::vector<double> next(c.units);
          for (int u = 0; u < c.units; ++u) {
            double v = b[u];
            for (int i = 0; i < c.in; ++i) v += double(w[u * c.in + i]) * x[row * c.in + i];
            for (int j = 0; j < c.units; ++j) v += double(rw[u * c.units + j]) * h[bt * c.units + j];
            next[u] = ApplyAct(c.activation, static_cast<float>(v));
            want[row * c.units + u] = static_cast<float>(next[u]);
          }
          for (int u = 0; u < c.units; ++u) h[bt * c.units + u] = next[u];
        }
      }
      ExpectNear(r.Output(), want);
      if (invoke == 0) {
        first = r.Output();
        ASSERT_EQ(KilnInterpreterResetVariableTensors(r.interpreter()), kKilnOk);
        r.SetInput(0, x.data(), x.size() * 4);
        ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
        EXPECT_EQ(r.Output(), first);
      }
    }
  }
}

TEST(RnnWrapperTest, EmptyAndErrors) {
  for (const RnnCase& c : {RnnCase{0, 0, 3, 4, false, kKilnActTanh}, RnnCase{0, 2, 3, 4, false, kKilnActTanh}}) {
    ModelWriter wr;  // an empty batch
    BuildRnn(wr, c, Vec(c.units * 3), Vec(c.units * c.units), Vec(c.units));
    Runner r(wr);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_TRUE(r.Output().empty());
  }
  {
    ModelWriter wr;
    BuildRnn(wr, RnnCase{2, 0, 3, 4, false, kKilnActTanh}, Vec(12), Vec(16), Vec(4), false);
    Runner r(wr);
    ExpectErrorMentions(r, {"RNN: bias (input 3) is missing"});
  }
  {
    ModelWriter wr;  // recurrent weights of the wrong shape
    const int x = wr.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int wt = wr.AddConstTensor(kKilnFloat32, {4, 3}, "weights", Vec(12));
    const int rt = wr.AddConstTensor(kKilnFloat32, {4, 3}, "recurrent_weights", Vec(12));
    const int bt = wr.AddConstTensor(kKilnFloat32, {4}, "bias", Vec(4));
    const int h = wr.AddTensor(kKilnFloat32, {2, 4}, "hidden_state");
    wr.SetVariable(h);
    const int y = wr.AddTensor(kKilnFloat32, {2, 4}, "y");
    KilnRNNParams p{};
    p.activation = kKilnActTanh;
    wr.AddOp(kKilnBuiltinRnn, {x, wt, rt, bt, h}, {y}, p);
    wr.SetInputs({x});
    wr.SetOutputs({y});
    Runner r(wr);
    ExpectErrorMentions(r, {"RNN: recurrent_weights 'recurrent_weights' has shape [4, 3]; expected [4, 4]"});
  }
  {
    ModelWriter wr;  // sequence RNN with a rank-2 input
    const int x = wr.AddTensor(kKilnFloat32, {2, 3}, "x");
    const int wt = wr.AddConstTensor(kKilnFloat32, {4, 3}, "weights", Vec(12));
    const int rt = wr.AddConstTensor(kKilnFloat32, {4, 4}, "recurrent_weights", Vec(16));
    const int bt = wr.AddConstTensor(kKilnFloat32, {4}, "bias", Vec(4));
    const int h = wr.AddTensor(kKilnFloat32, {2, 4}, "hidden_state");
    wr.SetVariable(h);
    const int y = wr.AddTensor(kKilnFloat32, {2, 4}, "y");
    KilnSequenceRNNParams p{};
    p.activation = kKilnActTanh;
    wr.AddOp(kKilnBuiltinUnidirectionalSequenceRnn, {x, wt, rt, bt, h}, {y}, p);
    wr.SetInputs({x});
    wr.SetOutputs({y});
    Runner r(wr);
    ExpectErrorMentions(r, {"UNIDIRECTIONAL_SEQUENCE_RNN: input 'x' has rank 2 (shape [2, 3]); expected rank 3"});
  }
}

// Hybrid RNN and SVDF: int8 weights, dequantized (per tensor, or per channel along dimension 0) and run in float.
TEST(RnnWrapperTest, HybridWeightsMatchDequantized) {
  std::mt19937 rng(77);
  std::uniform_int_distribution<int> i8(-127, 127);
  const int batch = 2, in = 3, units = 4;
  std::vector<int8_t> wq(units * in), rq(units * units);
  for (int8_t& v : wq) v = static_cast<int8_t>(i8(rng));
  for (int8_t& v : rq) v = static_cast<int8_t>(i8(rng));
  const std::vector<float> w_scales = {0.01f, 0.02f, 0.005f, 0.03f};  // per channel (row)
  const float r_scale = 0.004f;
  const Vec b = Random(rng, units, 0.5f);
  ModelWriter wr;
  const int x = wr.AddTensor(kKilnFloat32, {batch, in}, "x");
  const int wt = wr.AddConstTensor(kKilnInt8, {units, in}, "weights", wq);
  wr.SetQuantization(wt, w_scales, {0, 0, 0, 0}, 0);
  const int rt = wr.AddConstTensor(kKilnInt8, {units, units}, "recurrent_weights", rq);
  wr.SetQuantization(rt, {r_scale}, {0});
  const int bt = wr.AddConstTensor(kKilnFloat32, {units}, "bias", b);
  const int h = wr.AddTensor(kKilnFloat32, {batch, units}, "hidden_state");
  wr.SetVariable(h);
  const int y = wr.AddTensor(kKilnFloat32, {batch, units}, "y");
  KilnRNNParams p{};
  p.activation = kKilnActTanh;
  wr.AddOp(kKilnBuiltinRnn, {x, wt, rt, bt, h}, {y}, p);
  wr.SetInputs({x});
  wr.SetOutputs({y});
  Runner r(wr);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  std::vector<double> hidden(batch * units, 0.0);
  for (int step = 0; step < 3; ++step) {
    const Vec input = Random(rng, batch * in, 1.0f);
    r.SetInput(0, input.data(), input.size() * 4);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    Vec want(batch * units);
    std::vector<double> next(batch * units);
    for (int bt2 = 0; bt2 < batch; ++bt2) {
      for (int u = 0; u < units; ++u) {
        double v = b[u];
        for (int i = 0; i < in; ++i) v += double(wq[u * in + i]) * w_scales[u] * input[bt2 * in + i];
        for (int j = 0; j < units; ++j) v += double(rq[u * units + j]) * r_scale * hidden[bt2 * units + j];
        next[bt2 * units + u] = std::tanh(v);
        want[bt2 * units + u] = static_cast<float>(next[bt2 * units + u]);
      }
    }
    hidden = next;
    ExpectNear(r.Output(), want);
  }
}

TEST(SvdfWrapperTest, HybridWeightsMatchDequantized) {
  const SvdfCase s{2, 3, 2, 2, 3, true, kKilnActNone};
  const int filters = s.units * s.rank;
  std::vector<int8_t> fq(filters * s.in), tq(filters * s.memory);
  for (size_t i = 0; i < fq.size(); ++i) fq[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  for (size_t i = 0; i < tq.size(); ++i) tq[i] = static_cast<int8_t>(static_cast<int>(i * 53 % 255) - 127);
  Vec wf(fq.size()), wt(tq.size());
  for (size_t i = 0; i < fq.size(); ++i) wf[i] = fq[i] * 0.01f;
  for (size_t i = 0; i < tq.size(); ++i) wt[i] = tq[i] * 0.02f;
  const Vec b = {0.25f, -0.5f};
  ModelWriter wr;
  const int x = wr.AddTensor(kKilnFloat32, {s.batch, s.in}, "x");
  const int f = wr.AddConstTensor(kKilnInt8, {filters, s.in}, "weights_feature", fq);
  wr.SetQuantization(f, {0.01f}, {0});
  const int t = wr.AddConstTensor(kKilnInt8, {filters, s.memory}, "weights_time", tq);
  wr.SetQuantization(t, {0.02f}, {0});
  const int bias = wr.AddConstTensor(kKilnFloat32, {s.units}, "bias", b);
  const int state = wr.AddTensor(kKilnFloat32, {s.batch, s.memory * filters}, "state");
  wr.SetVariable(state);
  const int y = wr.AddTensor(kKilnFloat32, {s.batch, s.units}, "y");
  KilnSVDFParams p{};
  p.rank = s.rank;
  wr.AddOp(kKilnBuiltinSvdf, {x, f, t, bias, state}, {y}, p);
  wr.SetInputs({x});
  wr.SetOutputs({y});
  Runner r(wr);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  std::vector<std::vector<std::vector<double>>> memory(
      s.batch, std::vector<std::vector<double>>(filters, std::vector<double>(s.memory, 0.0)));
  std::mt19937 rng(5);
  for (int step = 0; step < 5; ++step) {
    const Vec input = Random(rng, s.batch * s.in, 1.0f);
    r.SetInput(0, input.data(), input.size() * 4);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    Vec want;
    ReferenceSvdf(s, wf, wt, b, input, &memory, &want);
    ExpectNear(r.Output(), want);
  }
}

// ------------------------------------------------------------------------------------------------------------
// BIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_RNN

// x [time, batch, n] (time-major) or [batch, time, n] with the time axis reversed.
Vec ReverseTime(const Vec& x, int batch, int time, int n, bool time_major) {
  Vec y(x.size());
  for (int t = 0; t < time; ++t) {
    for (int b = 0; b < batch; ++b) {
      const int from = time_major ? t * batch + b : b * time + t;
      const int to = time_major ? (time - 1 - t) * batch + b : b * time + (time - 1 - t);
      std::copy(x.begin() + from * n, x.begin() + (from + 1) * n, y.begin() + to * n);
    }
  }
  return y;
}

// Row-wise concatenation of [rows, a] and [rows, b].
Vec Concat(const Vec& x, int a, const Vec& y, int b) {
  const size_t rows = a > 0 ? x.size() / a : y.size() / b;
  Vec z;
  for (size_t r = 0; r < rows; ++r) {
    z.insert(z.end(), x.begin() + r * a, x.begin() + (r + 1) * a);
    z.insert(z.end(), y.begin() + r * b, y.begin() + (r + 1) * b);
  }
  return z;
}

TEST(BidiLstmWrapperTest, MatchesTwoDirectionsOfReference) {
  unsigned seed = 200;
  for (bool merge : {false, true}) {
    for (bool time_major : {true, false}) {
      for (bool peephole_projection : {false, true}) {
        LstmConfig fc;
        fc.batch = 3;
        fc.time = 4;
        fc.time_major = time_major;
        fc.peephole = fc.projection = fc.projection_bias = peephole_projection;
        fc.out = peephole_projection ? 3 : fc.cells;
        LstmConfig bc = fc;
        bc.cifg = peephole_projection;
        bc.projection_bias = false;
        bc.cells = peephole_projection ? 6 : fc.cells;  // the directions may differ in Kiln
        bc.out = peephole_projection ? 2 : bc.cells;
        SCOPED_TRACE(std::string(merge ? "merged" : "two outputs") + (time_major ? " time-major" : " batch-major") +
                     (peephole_projection ? " peephole+projection" : ""));
        const LstmWeights fw = MakeLstmWeights(fc, seed++), bw = MakeLstmWeights(bc, seed++);
        ModelWriter wr;
        const std::vector<int> shape =
            time_major ? std::vector<int>{fc.time, fc.batch, fc.in} : std::vector<int>{fc.batch, fc.time, fc.in};
        const int x = wr.AddTensor(kKilnFloat32, shape, "x");
        std::vector<int> inputs = {x};
        const char* gates[] = {"input", "forget", "cell", "output"};
        for (const auto* d : {&fw, &bw}) {
          const LstmConfig& c = d == &fw ? fc : bc;
          const std::string p = d == &fw ? "fw_" : "bw_";
          auto constant = [&](const Vec& v, std::vector<int> dims, const std::string& name) {
            return v.empty() ? -1 : wr.AddConstTensor(kKilnFloat32, dims, p + name, v);
          };
          for (int g = 0; g < 4; ++g)
            inputs.push_back(constant(d->w[g], {c.cells, c.in}, std::string("w_") + gates[g]));
          for (int g = 0; g < 4; ++g)
            inputs.push_back(constant(d->r[g], {c.cells, c.out}, std::string("r_") + gates[g]));
          for (int g : {0, 1, 3}) inputs.push_back(constant(d->peep[g], {c.cells}, std::string("peep_") + gates[g]));
          for (int g = 0; g < 4; ++g) inputs.push_back(constant(d->bias[g], {c.cells}, std::string("b_") + gates[g]));
          inputs.push_back(constant(d->proj, {c.out, c.cells}, "projection"));
          inputs.push_back(constant(d->proj_bias, {c.out}, "projection_bias"));
        }
        for (const auto& [c, name] : {std::pair{fc, "fw"}, std::pair{bc, "bw"}}) {
          const int h = wr.AddTensor(kKilnFloat32, {c.batch, c.out}, std::string(name) + "_output_state");
          const int cs = wr.AddTensor(kKilnFloat32, {c.batch, c.cells}, std::string(name) + "_cell_state");
          wr.SetVariable(h);
          wr.SetVariable(cs);
          inputs.push_back(h);
          inputs.push_back(cs);
        }
        for (int i = 0; i < 9; ++i) inputs.push_back(-1);
        std::vector<int> out_shape = shape;
        std::vector<int> outputs;
        if (merge) {
          out_shape.back() = fc.out + bc.out;
          outputs.push_back(wr.AddTensor(kKilnFloat32, out_shape, "y"));
        } else {
          out_shape.back() = fc.out;
          outputs.push_back(wr.AddTensor(kKilnFloat32, out_shape, "y_fw"));
          out_shape.back() = bc.out;
          outputs.push_back(wr.AddTensor(kKilnFloat32, out_shape, "y_bw"));
        }
        KilnBidirectionalSequenceLSTMParams params{};
        params.activation = kKilnActTanh;
        params.merge_outputs = merge;
        params.time_major = time_major;
        wr.AddOp(kKilnBuiltinBidirectionalSequenceLstm, inputs, outputs, params);
        wr.SetInputs({x});
        wr.SetOutputs(outputs);
        Runner r(wr);
        ASSERT_EQ(r.status(), kKilnOk) << r.errors();
        std::mt19937 rng(seed);
        Vec fh(fc.batch * fc.out, 0), fcs(fc.batch * fc.cells, 0), bh(bc.batch * bc.out, 0),
            bcs(bc.batch * bc.cells, 0);
        for (int invoke = 0; invoke < 2; ++invoke) {  // the states carry over to the second Invoke
          const Vec input = Random(rng, fc.batch * fc.time * fc.in, 1.0f);
          r.SetInput(0, input.data(), input.size() * 4);
          ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
          Vec fy, by;
          ReferenceLstm(fc, fw, input, &fh, &fcs, &fy);
          ReferenceLstm(bc, bw, ReverseTime(input, fc.batch, fc.time, fc.in, time_major), &bh, &bcs, &by);
          by = ReverseTime(by, bc.batch, bc.time, bc.out, time_major);
          if (merge) {
            ExpectNear(r.Output(0), Concat(fy, fc.out, by, bc.out));
          } else {
            ExpectNear(r.Output(0), fy);
            ExpectNear(r.Output(1), by);
          }
        }
      }
    }
  }
}

TEST(BidiRnnWrapperTest, MatchesTwoDirectionsWithAux) {
  unsigned seed = 300;
  // aux: 0 none, 1 stacked (aux weights), 2 the backward input (time-major only; batch-major LiteRT reads the input)
  for (int aux : {0, 1, 2}) {
    for (bool merge : {false, true}) {
      for (bool time_major : {false, true}) {
        SCOPED_TRACE("aux " + std::to_string(aux) + (merge ? " merged" : "") + (time_major ? " time-major" : ""));
        const int batch = 2, time = 3, in = 4, fu = 3, bu = 5, aux_in = aux == 1 ? 2 : in;
        std::mt19937 rng(seed++);
        const Vec fw = Random(rng, fu * in, 0.5f), fr = Random(rng, fu * fu, 0.5f), fb = Random(rng, fu, 0.5f);
        const Vec bw = Random(rng, bu * in, 0.5f), br = Random(rng, bu * bu, 0.5f), bb = Random(rng, bu, 0.5f);
        const Vec faw = Random(rng, fu * aux_in, 0.5f), baw = Random(rng, bu * aux_in, 0.5f);
        if (aux == 1 && time_major) continue;  // a time-major aux of another width is refused (see Errors)
        ModelWriter wr;
        const std::vector<int> shape =
            time_major ? std::vector<int>{time, batch, in} : std::vector<int>{batch, time, in};
        std::vector<int> aux_shape = shape;
        aux_shape.back() = aux_in;
        const int x = wr.AddTensor(kKilnFloat32, shape, "x");
        const int ax = aux > 0 ? wr.AddTensor(kKilnFloat32, aux_shape, "aux") : -1;
        std::vector<int> inputs = {x};
        for (const auto& [w, rw, b, u, name] : {std::tuple{fw, fr, fb, fu, "fw"}, std::tuple{bw, br, bb, bu, "bw"}}) {
          inputs.push_back(wr.AddConstTensor(kKilnFloat32, {u, in}, std::string(name) + "_w", w));
          inputs.push_back(wr.AddConstTensor(kKilnFloat32, {u, u}, std::string(name) + "_r", rw));
          inputs.push_back(wr.AddConstTensor(kKilnFloat32, {u}, std::string(name) + "_b", b));
          const int h = wr.AddTensor(kKilnFloat32, {batch, u}, std::string(name) + "_h");
          wr.SetVariable(h);
          inputs.push_back(h);
        }
        inputs.push_back(ax);
        inputs.push_back(aux == 1 ? wr.AddConstTensor(kKilnFloat32, {fu, aux_in}, "fw_aux_w", faw) : -1);
        inputs.push_back(aux == 1 ? wr.AddConstTensor(kKilnFloat32, {bu, aux_in}, "bw_aux_w", baw) : -1);
        std::vector<int> out_shape = shape, outputs;
        out_shape.back() = merge ? fu + bu : fu;
        outputs.push_back(wr.AddTensor(kKilnFloat32, out_shape, "y"));
        if (!merge) {
          out_shape.back() = bu;
          outputs.push_back(wr.AddTensor(kKilnFloat32, out_shape, "y_bw"));
        }
        KilnBidirectionalSequenceRNNParams params{};
        params.activation = kKilnActTanh;
        params.merge_outputs = merge;
        params.time_major = time_major;
        wr.AddOp(kKilnBuiltinBidirectionalSequenceRnn, inputs, outputs, params);
        wr.SetInputs(aux > 0 ? std::vector<int>{x, ax} : std::vector<int>{x});
        wr.SetOutputs(outputs);
        Runner r(wr);
        ASSERT_EQ(r.status(), kKilnOk) << r.errors();
        const Vec input = Random(rng, batch * time * in, 1.0f), aux_input = Random(rng, batch * time * aux_in, 1.0f);
        r.SetInput(0, input.data(), input.size() * 4);
        if (aux > 0) r.SetInput(1, aux_input.data(), aux_input.size() * 4);
        ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
        // One direction: h = tanh(W x + A aux + R h + b), `forward` or from the last step.
        auto run = [&](const Vec& xs, const Vec& w, const Vec& rw, const Vec& b, int u, const Vec* aw, bool forward) {
          Vec y(batch * time * u);
          std::vector<double> h(batch * u, 0.0);
          for (int step = 0; step < time; ++step) {
            const int t = forward ? step : time - 1 - step;
            for (int bt = 0; bt < batch; ++bt) {
              const int row = time_major ? t * batch + bt : bt * time + t;
              std::vector<double> next(u);
              for (int k = 0; k < u; ++k) {
                double v = b[k];
                for (int i = 0; i < in; ++i) v += double(w[k * in + i]) * xs[row * in + i];
                if (aw != nullptr) {
                  for (int i = 0; i < aux_in; ++i) v += double((*aw)[k * aux_in + i]) * aux_input[row * aux_in + i];
                }
                for (int j = 0; j < u; ++j) v += double(rw[k * u + j]) * h[bt * u + j];
                next[k] = std::tanh(v);
                y[row * u + k] = static_cast<float>(next[k]);
              }
              for (int k = 0; k < u; ++k) h[bt * u + k] = next[k];
            }
          }
          return y;
        };
        const Vec fy = run(input, fw, fr, fb, fu, aux == 1 ? &faw : nullptr, true);
        const Vec by =
            run(aux == 2 && time_major ? aux_input : input, bw, br, bb, bu, aux == 1 ? &baw : nullptr, false);
        if (merge) {
          ExpectNear(r.Output(0), Concat(fy, fu, by, bu));
        } else {
          ExpectNear(r.Output(0), fy);
          ExpectNear(r.Output(1), by);
        }
      }
    }
  }
}

TEST(BidiRnnWrapperTest, Errors) {
  {
    // Found by the interpreter fuzzer: a rank-0 input with a stacked time-major aux input fails Prepare (the aux
    // width is compared only after the ranks are checked).
    ModelWriter wr;
    const int x = wr.AddTensor(kKilnFloat32, {}, "x");
    const int aux = wr.AddTensor(kKilnFloat32, {}, "aux");
    std::vector<int> inputs = {x};
    for (const char* name : {"fw", "bw"}) {
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {3, 4}, std::string(name) + "_w", Vec(12, 0.1f)));
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {3, 3}, std::string(name) + "_r", Vec(9, 0.1f)));
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {3}, std::string(name) + "_b", Vec(3, 0.1f)));
      const int h = wr.AddTensor(kKilnFloat32, {2, 3}, std::string(name) + "_h");
      wr.SetVariable(h);
      inputs.push_back(h);
    }
    inputs.push_back(aux);
    inputs.push_back(wr.AddConstTensor(kKilnFloat32, {3, 2}, "fw_aux_w", Vec(6, 0.1f)));
    inputs.push_back(wr.AddConstTensor(kKilnFloat32, {3, 2}, "bw_aux_w", Vec(6, 0.1f)));
    const int y = wr.AddTensor(kKilnFloat32, {}, "y");
    KilnBidirectionalSequenceRNNParams params{};
    params.activation = kKilnActTanh;
    params.merge_outputs = true;
    params.time_major = true;
    wr.AddOp(kKilnBuiltinBidirectionalSequenceRnn, inputs, {y}, params);
    wr.SetInputs({x, aux});
    wr.SetOutputs({y});
    Runner r(wr);
    ExpectErrorMentions(r, {"BIDIRECTIONAL_SEQUENCE_RNN (forward): input 'x' has rank 0"});
  }
  {
    ModelWriter wr;  // merge_outputs false with one output
    const int x = wr.AddTensor(kKilnFloat32, {2, 3, 4}, "x");
    std::vector<int> inputs = {x};
    for (const char* name : {"fw", "bw"}) {
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {3, 4}, std::string(name) + "_w", Vec(12, 0.1f)));
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {3, 3}, std::string(name) + "_r", Vec(9, 0.1f)));
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {3}, std::string(name) + "_b", Vec(3, 0.1f)));
      const int h = wr.AddTensor(kKilnFloat32, {2, 3}, std::string(name) + "_h");
      wr.SetVariable(h);
      inputs.push_back(h);
    }
    inputs.insert(inputs.end(), {-1, -1, -1});
    const int y = wr.AddTensor(kKilnFloat32, {2, 3, 3}, "y");
    KilnBidirectionalSequenceRNNParams params{};
    params.activation = kKilnActTanh;
    wr.AddOp(kKilnBuiltinBidirectionalSequenceRnn, inputs, {y}, params);
    wr.SetInputs({x});
    wr.SetOutputs({y});
    Runner r(wr);
    ExpectErrorMentions(r, {"BIDIRECTIONAL_SEQUENCE_RNN: expects 2 outputs (merge_outputs false), got 1"});
  }
  {
    ModelWriter wr;  // a backward hidden state of the wrong size
    const int x = wr.AddTensor(kKilnFloat32, {2, 3, 4}, "x");
    std::vector<int> inputs = {x};
    for (const char* name : {"fw", "bw"}) {
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {3, 4}, std::string(name) + "_w", Vec(12, 0.1f)));
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {3, 3}, std::string(name) + "_r", Vec(9, 0.1f)));
      inputs.push_back(wr.AddConstTensor(kKilnFloat32, {3}, std::string(name) + "_b", Vec(3, 0.1f)));
      const int h = wr.AddTensor(kKilnFloat32, {2, name[0] == 'b' ? 4 : 3}, std::string(name) + "_h");
      wr.SetVariable(h);
      inputs.push_back(h);
    }
    inputs.insert(inputs.end(), {-1, -1, -1});
    const int y = wr.AddTensor(kKilnFloat32, {2, 3, 6}, "y");
    KilnBidirectionalSequenceRNNParams params{};
    params.activation = kKilnActTanh;
    params.merge_outputs = true;
    wr.AddOp(kKilnBuiltinBidirectionalSequenceRnn, inputs, {y}, params);
    wr.SetInputs({x});
    wr.SetOutputs({y});
    Runner r(wr);
    ExpectErrorMentions(r, {"BIDIRECTIONAL_SEQUENCE_RNN (backward): hidden_state 'bw_h' has 8 elements"});
  }
}

// ------------------------------------------------------------------------------------------------------------
// Variable tensors

// A builtin op that reads and writes a variable (ADD: v = x + v) accumulates across Invokes, runs on the reference
// kernel (never inside a host engine run), and starts again from zero after a reset.
TEST(VariableTensorTest, AccumulatesAcrossInvokesOffTheHostEngine) {
  ModelWriter wr;
  const int x = wr.AddTensor(kKilnFloat32, {3}, "x");
  const int v = wr.AddTensor(kKilnFloat32, {3}, "v");
  wr.SetVariable(v);
  const int y = wr.AddTensor(kKilnFloat32, {3}, "y");
  wr.AddOp(kKilnBuiltinAdd, {x, v}, {v}, KilnAddParams{});
  wr.AddOp(kKilnBuiltinRelu, {v}, {y});
  wr.SetInputs({x});
  wr.SetOutputs({y});
  Runner r(wr);
  ASSERT_EQ(r.status(), kKilnOk) << r.errors();
  EXPECT_EQ(r.interpreter()->impl->host_placement(0), "reference kernel (writes a variable tensor)");
  const Vec one = {1.0f, 2.0f, -4.0f};
  for (int i = 1; i <= 3; ++i) {
    r.SetInput(0, one.data(), one.size() * 4);
    ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
    EXPECT_EQ(r.Output(), (Vec{1.0f * i, 2.0f * i, 0.0f}));
  }
  ASSERT_EQ(KilnInterpreterResetVariableTensors(r.interpreter()), kKilnOk);
  r.SetInput(0, one.data(), one.size() * 4);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), (Vec{1.0f, 2.0f, 0.0f}));
  // AllocateTensors starts the state afresh too, as LiteRT's.
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  ASSERT_EQ(KilnInterpreterAllocateTensors(r.interpreter()), kKilnOk);
  r.SetInput(0, one.data(), one.size() * 4);
  ASSERT_EQ(r.Invoke(), kKilnOk) << r.errors();
  EXPECT_EQ(r.Output(), (Vec{1.0f, 2.0f, 0.0f}));
}

TEST(VariableTensorTest, Int8ResetsToZeroPointAndBufferRefused) {
  {
    // An int8 variable (read by nothing but kept in the model) is set to its zero point at AllocateTensors and
    // by KilnInterpreterResetVariableTensors.
    ModelWriter wr;
    const int x = wr.AddTensor(kKilnFloat32, {2}, "x");
    const int y = wr.AddTensor(kKilnFloat32, {2}, "y");
    const int v = wr.AddTensor(kKilnInt8, {3}, "v");
    wr.SetQuantization(v, {0.5f}, {-7});
    wr.SetVariable(v);
    wr.AddOp(kKilnBuiltinRelu, {x}, {y});
    wr.SetInputs({x});
    wr.SetOutputs({y});
    Runner r(wr);
    ASSERT_EQ(r.status(), kKilnOk) << r.errors();
    KilnTensor* t = r.interpreter()->impl->tensor(v);
    ASSERT_NE(t, nullptr);
    auto* bytes = static_cast<int8_t*>(t->data);
    EXPECT_EQ(bytes[0], -7);
    EXPECT_EQ(bytes[2], -7);
    bytes[1] = 5;
    ASSERT_EQ(KilnInterpreterResetVariableTensors(r.interpreter()), kKilnOk);
    EXPECT_EQ(bytes[1], -7);
    EXPECT_EQ(KilnInterpreterResetVariableTensors(nullptr), kKilnInvalidArgument);
  }
  {
    ModelWriter wr;
    const int x = wr.AddTensor(kKilnFloat32, {2}, "x");
    const int y = wr.AddTensor(kKilnFloat32, {2}, "y");
    const int v = wr.AddConstTensor(kKilnFloat32, {2}, "v", Vec{1, 2});
    wr.SetVariable(v);
    wr.AddOp(kKilnBuiltinAdd, {x, v}, {y}, KilnAddParams{});
    wr.SetInputs({x});
    wr.SetOutputs({y});
    const std::vector<uint8_t> bytes = wr.Finish();
    ASSERT_FALSE(bytes.empty()) << wr.error();
    KilnModel* model = KilnModelCreate(bytes.data(), bytes.size());
    ASSERT_NE(model, nullptr);
    std::string errors;
    KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
    KilnInterpreterOptionsSetErrorReporter(options, &CollectErrors, &errors);
    KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
    KilnInterpreterOptionsDelete(options);
    EXPECT_EQ(interpreter, nullptr);
    EXPECT_NE(errors.find("('v') is a variable tensor with a buffer, which is not supported"), std::string::npos)
        << errors;
    KilnInterpreterDelete(interpreter);
    KilnModelDelete(model);
  }
}

}  // namespace
}  // namespace kiln::ops
