// rsDebug (to the context's error reporter) and rsSendToClient / rsSendToClientBlocking (to the context's
// message handler), from invokables and from a kernel.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.messages)

typedef struct Progress {
  int done;
  float fraction;
} Progress;

void report(int done, int total) {
  rsDebug("corpus progress", done);
  rsDebug("corpus fraction", (float)done / (float)total);
  rsDebug("corpus pair", (int2){done, total});
  Progress p = {done, (float)done / (float)total};
  rsSendToClient(7, &p, sizeof(p));
  rsSendToClientBlocking(8);
}

void RS_KERNEL flag_negative(int in, uint32_t x) {
  if (in < 0) {
    rsSendToClient(100 + (int)x);
  }
}
