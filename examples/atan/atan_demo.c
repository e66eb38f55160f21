/* Kiln's end-to-end sample: a model computing y = atan(x + offset) with a builtin ADD and a custom `Atan` op.
 *
 * It shows what an application sees: first without `Atan` registered (AllocateTensors fails with
 * kKilnUnresolvedOps, and the error reporter says which op), then with the C operator from atan_op.c.
 *
 *   kiln_atan_demo [MODEL.tflite]      (default: the model embedded in the binary, examples/atan/atan.tflite)
 */
#include <stdarg.h>
#include <stdio.h>

#include "atan_op.h"
#include "kiln/c_api.h"

extern const unsigned char kiln_atan_model[];
extern const size_t kiln_atan_model_size;

static void Reporter(void* user_data, const char* format, va_list args) {
  fprintf(stdout, "  error reporter: ");
  vfprintf(stdout, format, args);
  fputc('\n', stdout);
}

/* Runs the model once; returns the status of AllocateTensors or Invoke. */
static KilnStatus RunOnce(const KilnModel* model, KilnOperator* atan_op) {
  const float x[5] = {-8.0f, 0.5f, 2.0f, 2.2f, 201.0f};
  float y[5];
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Reporter, NULL);
  if (atan_op != NULL) KilnInterpreterOptionsAddOperator(options, atan_op);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  if (interpreter == NULL) return kKilnError;

  const int dims[1] = {5};
  KilnStatus status = KilnInterpreterResizeInputTensor(interpreter, 0, dims, 1);
  if (status == kKilnOk) status = KilnInterpreterAllocateTensors(interpreter);
  if (status == kKilnOk) {
    status = KilnTensorCopyFromBuffer(KilnInterpreterGetInputTensor(interpreter, 0), x, sizeof x);
  }
  if (status == kKilnOk) status = KilnInterpreterInvoke(interpreter);
  if (status == kKilnOk) {
    status = KilnTensorCopyToBuffer(KilnInterpreterGetOutputTensor(interpreter, 0), y, sizeof y);
  }
  if (status == kKilnOk) {
    printf("  x = [%g, %g, %g, %g, %g]\n", x[0], x[1], x[2], x[3], x[4]);
    printf("  y = [%.8g, %.8g, %.8g, %.8g, %.8g]\n", y[0], y[1], y[2], y[3], y[4]);
  }
  KilnInterpreterDelete(interpreter);
  return status;
}

int main(int argc, char** argv) {
  KilnModel* model = argc > 1 ? KilnModelCreateFromFile(argv[1])
                              : KilnModelCreate(kiln_atan_model, kiln_atan_model_size);
  if (model == NULL) return 1;
  printf("Kiln %s: y = atan(x + offset), model %s\n", KilnVersion(), argc > 1 ? argv[1] : "(embedded)");

  printf("1. Without the Atan op registered:\n");
  const KilnStatus unresolved = RunOnce(model, NULL);
  printf("  status: %s\n", unresolved == kKilnUnresolvedOps ? "kKilnUnresolvedOps" : "unexpected");

  printf("2. With Atan registered from C (KilnOperatorCreate(kKilnBuiltinCustom, \"Atan\", 1)):\n");
  const KilnStatus resolved = RunOnce(model, AtanOperator());
  KilnModelDelete(model);
  return unresolved == kKilnUnresolvedOps && resolved == kKilnOk ? 0 : 1;
}
