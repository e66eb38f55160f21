/* Runs MediaPipe's selfie segmentation model (mp_selfie_segmentation.tflite), whose last custom op,
 * Convolution2DTransposeBias, is served by the kilnc kernel conv_transpose_bias (conv_transpose_bias.rs).
 *
 *   kiln_selfie_demo MODEL.tflite conv_transpose_bias.kmod [--device cpu|gpu] [--driver PATH] [--runs N]
 *
 * It shows the model failing without the op, then runs it with the op on the chosen device and prints the
 * mask's statistics, where the custom op ran and the time per run. Exits 77 (a skip for CTest) when the model
 * file is absent, unless KILN_REQUIRE_SHARED_DATA is set. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conv_transpose_bias_op.h"
#include "kiln/c_api.h"
#include "kiln/compute.h"
#include "kiln/device.h"

static void Reporter(void* user_data, const char* format, va_list args) {
  (void)user_data;
  fprintf(stdout, "  error reporter: ");
  vfprintf(stdout, format, args);
  fputc('\n', stdout);
}

static double NowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A fixed RGB image in [0, 1]: a bright disc (a head) over a darker gradient, so the run is repeatable. */
static void FillImage(float* pixels, int height, int width) {
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const float dx = (x - width * 0.5f) / width, dy = (y - height * 0.4f) / height;
      const int disc = dx * dx + dy * dy < 0.04f;
      float* p = pixels + ((size_t)y * width + x) * 3;
      p[0] = disc ? 0.85f : 0.2f + 0.3f * x / width;
      p[1] = disc ? 0.65f : 0.3f;
      p[2] = disc ? 0.55f : 0.5f - 0.3f * y / height;
    }
  }
}

static int SharedDataRequired(void) {
  const char* v = getenv("KILN_REQUIRE_SHARED_DATA");
  return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODEL.tflite KMOD [--device cpu|gpu] [--driver PATH] [--runs N]\n", argv[0]);
    return 2;
  }
  const char* model_path = argv[1];
  const char* kmod_path = argv[2];
  KilnDevicePolicy policy = kKilnDeviceCpuOnly;
  const char* driver = NULL;
  int runs = 5;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--device") == 0) {
      policy = strcmp(argv[i + 1], "gpu") == 0 ? kKilnDevicePreferGpu : kKilnDeviceCpuOnly;
    } else if (strcmp(argv[i], "--driver") == 0) {
      driver = argv[i + 1];
    } else if (strcmp(argv[i], "--runs") == 0) {
      runs = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
    }
  }
  FILE* probe = fopen(model_path, "rb");
  if (probe == NULL) {
    printf("model not found: %s (expected ../shared/models beside the checkout)\n", model_path);
    return SharedDataRequired() ? 1 : 77;
  }
  fclose(probe);

  KilnModel* model = KilnModelCreateFromFile(model_path);
  KilnModule* module = KilnModuleCreateFromFile(kmod_path);
  if (model == NULL || module == NULL) return 1;

  printf("1. Without Convolution2DTransposeBias registered:\n");
  KilnInterpreterOptions* options = KilnInterpreterOptionsCreate();
  KilnInterpreterOptionsSetErrorReporter(options, Reporter, NULL);
  KilnInterpreter* interpreter = KilnInterpreterCreate(model, options);
  const KilnStatus without = interpreter ? KilnInterpreterAllocateTensors(interpreter) : kKilnError;
  printf("  status: %s\n", without == kKilnUnresolvedOps ? "kKilnUnresolvedOps" : "unexpected");
  KilnInterpreterDelete(interpreter);

  printf("2. With the op served by kernel conv_transpose_bias (%s), device policy %s:\n", kmod_path,
         KilnDevicePolicyName(policy));
  KilnOperator* op = ConvTransposeBiasOperatorCreate(module);
  if (op == NULL) return 1;
  KilnInterpreterOptionsAddOperator(options, op);
  KilnInterpreterOptionsSetDevicePolicy(options, policy);
  if (driver != NULL) KilnInterpreterOptionsSetDriverPath(options, driver);
  interpreter = KilnInterpreterCreate(model, options);
  KilnInterpreterOptionsDelete(options);
  int ok = interpreter != NULL && KilnInterpreterAllocateTensors(interpreter) == kKilnOk;

  KilnTensor* input = ok ? KilnInterpreterGetInputTensor(interpreter, 0) : NULL;
  const KilnTensor* output = ok ? KilnInterpreterGetOutputTensor(interpreter, 0) : NULL;
  const size_t in_count = input ? KilnTensorByteSize(input) / sizeof(float) : 0;
  const size_t out_count = output ? KilnTensorByteSize(output) / sizeof(float) : 0;
  float* image = (float*)malloc(in_count * sizeof(float) + 1);
  float* mask = (float*)malloc(out_count * sizeof(float) + 1);
  ok = ok && image != NULL && mask != NULL && KilnTensorNumDims(input) == 4 && KilnTensorDim(input, 3) == 3;
  if (ok) {
    FillImage(image, KilnTensorDim(input, 1), KilnTensorDim(input, 2));
    ok = KilnTensorCopyFromBuffer(input, image, in_count * sizeof(float)) == kKilnOk &&
         KilnInterpreterInvoke(interpreter) == kKilnOk; /* the first run compiles and places kernels */
  }
  double total_ms = 0;
  for (int r = 0; ok && r < runs; ++r) {
    /* Again before every Invoke: the interpreter may reuse an input's memory once its last reader has run. */
    ok = KilnTensorCopyFromBuffer(input, image, in_count * sizeof(float)) == kKilnOk;
    const double start = NowMs();
    ok = ok && KilnInterpreterInvoke(interpreter) == kKilnOk;
    total_ms += NowMs() - start;
  }
  ok = ok && KilnTensorCopyToBuffer(output, mask, out_count * sizeof(float)) == kKilnOk;
  if (ok) {
    float lo = mask[0], hi = mask[0];
    double sum = 0;
    size_t above = 0;
    for (size_t i = 0; i < out_count; ++i) {
      lo = mask[i] < lo ? mask[i] : lo;
      hi = mask[i] > hi ? mask[i] : hi;
      sum += mask[i];
      above += mask[i] > 0.5f;
    }
    printf("  mask [%d, %d, %d, %d]: min %.4f max %.4f mean %.4f, %.1f%% above 0.5\n",
           KilnTensorDim(output, 0), KilnTensorDim(output, 1), KilnTensorDim(output, 2),
           KilnTensorDim(output, 3), lo, hi, sum / out_count, 100.0 * above / out_count);
    for (int i = 0; i < KilnInterpreterGetDecisionCount(interpreter); ++i) {
      KilnDecisionKind kind;
      const char* message = NULL;
      if (KilnInterpreterGetDecision(interpreter, i, &kind, NULL, &message) == kKilnOk &&
          kind == kKilnDecisionNode && strstr(message, "Convolution2DTransposeBias") != NULL) {
        printf("  %s\n", message);
      }
    }
    printf("  %.2f ms per run (average of %d)\n", total_ms / runs, runs);
    ok = lo >= 0.0f && hi <= 1.0f;
  }
  free(image);
  free(mask);
  KilnInterpreterDelete(interpreter);
  KilnOperatorDelete(op);
  KilnModuleDelete(module);
  KilnModelDelete(model);
  return without == kKilnUnresolvedOps && ok ? 0 : 1;
}
