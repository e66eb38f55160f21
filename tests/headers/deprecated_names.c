/* The public names renamed since Kiln 0.1 still compile under their old spellings and mean the same values
 * (kiln/device.h keeps them as deprecated aliases). A mismatch fails the build: the array size turns negative. */
#include "kiln/device.h"

#define KILN_SAME(old_name, new_name) typedef char kiln_same_##new_name[(old_name) == (new_name) ? 1 : -1]

KILN_SAME(KILN_DEVICE_AUTO, kKilnDeviceAuto);
KILN_SAME(KILN_DEVICE_CPU_ONLY, kKilnDeviceCpuOnly);
KILN_SAME(KILN_DEVICE_PREFER_GPU, kKilnDevicePreferGpu);
KILN_SAME(KILN_DEVICE_GPU_ONLY, kKilnDeviceGpuOnly);
KILN_SAME(KILN_DECISION_POLICY, kKilnDecisionPolicy);
KILN_SAME(KILN_DECISION_DRIVER, kKilnDecisionDriver);
KILN_SAME(KILN_DECISION_DEVICE, kKilnDecisionDevice);
KILN_SAME(KILN_DECISION_MODULE, kKilnDecisionModule);
KILN_SAME(KILN_DECISION_KERNEL, kKilnDecisionKernel);
KILN_SAME(KILN_DECISION_NODE, kKilnDecisionNode);
KILN_SAME(KILN_DECISION_PARTITION, kKilnDecisionPartition);
KILN_SAME(KILN_DECISION_FALLBACK, kKilnDecisionFallback);

int kiln_deprecated_names_c;
