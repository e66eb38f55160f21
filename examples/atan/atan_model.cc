// Builds the demo model examples/atan/atan.tflite: y = atan(x + offset), a builtin ADD then the custom op Atan.

#include "atan_model.h"

#include "runtime/model/model_writer.h"

namespace kiln::examples {

std::vector<uint8_t> AtanModel(float add_offset, float op_offset) {
  ModelWriter w;
  w.SetDescription("y = atan(x + offset): a builtin ADD of the trained offset, then the custom op Atan");
  const int x = w.AddTensor(kKilnFloat32, {1}, "x");
  w.SetShapeSignature(x, {-1});
  const int offset = w.AddConstTensor<float>(kKilnFloat32, {1}, "offset", {add_offset});
  const int shifted = w.AddTensor(kKilnFloat32, {1}, "x_plus_offset");
  w.SetShapeSignature(shifted, {-1});
  const int y = w.AddTensor(kKilnFloat32, {1}, "y");
  w.SetShapeSignature(y, {-1});
  w.AddOp(kKilnBuiltinAdd, {x, offset}, {shifted}, KilnAddParams{kKilnActNone, false});
  w.AddCustomOp("Atan", {shifted}, {y}, FlexMap().Float("offset", op_offset).Finish());
  w.SetInputs({x});
  w.SetOutputs({y});
  return w.Finish();
}

}  // namespace kiln::examples
