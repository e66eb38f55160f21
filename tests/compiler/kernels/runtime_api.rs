// Touches every runtime function of the prelude once, so that each compiles, links and reaches the driver's
// services as declared in kiln/kernel_abi.h.
#pragma version(1)
#pragma rs java_package_name(com.example.api)

rs_allocation gImage;
rs_allocation gYuv;
rs_allocation gScratch;
rs_element gElement;
rs_type gType;
rs_script gOther;
int32_t gAtomic;
uint32_t gAtomicU;
int64_t gStarted;

typedef struct Sample {
  float value;
  int count;
} Sample;

float4 RS_KERNEL yuvToRgb(uint32_t x, uint32_t y) {
  const float luma = (float)rsGetElementAtYuv_uchar_Y(gYuv, x, y);
  const float u = (float)rsGetElementAtYuv_uchar_U(gYuv, x, y) - 128.0f;
  const float v = (float)rsGetElementAtYuv_uchar_V(gYuv, x, y) - 128.0f;
  return (float4){luma + 1.402f * v, luma - 0.344f * u - 0.714f * v, luma + 1.772f * u, 255.0f};
}

void RS_KERNEL copyAll(uchar4 in, uint32_t x, uint32_t y) {
  rsSetElementAt_uchar4(gImage, in, x, y);
  rsSetElementAt_float(gScratch, rsGetElementAt_float(gScratch, x) + 1.0f, x);
  const Sample* s = (const Sample*)rsGetElementAt(gScratch, x);
  if (s->count < 0) rsDebug("negative", s->value);
  rsAtomicAdd(&gAtomic, 2);
  rsAtomicMax(&gAtomicU, x);
  rsAtomicCas(&gAtomic, 0, 1);
}

half2 RS_KERNEL halves(half2 in, bool flag) { return flag ? in : -in; }

void inspect() {
  gElement = rsAllocationGetElement(gImage);
  const rs_data_type type = rsElementGetDataType(gElement);
  const uint32_t lanes = rsElementGetVectorSize(gElement);
  const uint32_t bytes = rsElementGetBytesSize(gElement);
  rsDebug("type, lanes, bytes", (int)type);
  rsDebug("lanes", lanes);
  rsDebug("bytes", (uint2){bytes, rsAllocationGetDimZ(gImage)});
  rsDebug("dims", rsAllocationGetDimX(gImage), (float)rsAllocationGetDimY(gImage));
  rsDebug("object?", rsIsObject(gImage) ? 1 : 0);
  rsDebug("pointer", (const void*)&gAtomic);
  rsDebug("double", 2.5);
  rsDebug("long", (long)gStarted);
  rsDebug("uchar4", (uchar4){1, 2, 3, 4});
  rs_matrix4x4 m;
  rsMatrixLoadIdentity(&m);
  rsDebug("matrix", &m);
}

float4 RS_KERNEL vectors(uint32_t x) {
  rsAllocationVStoreX_float2(gScratch, (float2){1.0f, 2.0f}, x);
  return rsAllocationVLoadX_float4(gScratch, x);
}

void copyRanges(uint32_t count) {
  rsAllocationCopy1DRange(gScratch, 0, 0, count, gScratch, 1, 0);
  rsAllocationCopy2DRange(gImage, 0, 0, 0, 0, 2, 2, gImage, 1, 1, 0, 0);
}

void allocate(uint32_t width, uint32_t height) {
  gType = rsCreateType(rsCreateVectorElement(RS_TYPE_UNSIGNED_8, 4), width, height);
  gImage = rsCreateAllocation(gType);
  gScratch = rsCreateAllocation_float(width);
  if (!rsIsObject(gScratch)) rsClearObject(&gImage);
}

void run() {
  rs_script_call_t options = {0};
  options.xStart = 1;
  options.xEnd = rsAllocationGetDimX(gImage) - 1;
  rsForEach(copyAll, gImage);
  rsForEachWithOptions(copyAll, &options, gImage);
}

void report() {
  gStarted = rsUptimeMillis() + rsUptimeNanos() / 1000000;
  rs_time_t now = rsTime(NULL);
  rs_tm local;
  rsLocaltime(&local, &now);
  int payload[2] = {local.tm_hour, local.tm_min};
  rsSendToClient(1);
  rsSendToClient(2, payload, sizeof(payload));
  rsSendToClientBlocking(3);
  rsSendToClientBlocking(4, payload, sizeof(payload));
}
