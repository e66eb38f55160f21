// rs_matrix2x2/3x3/4x4: globals set from the API and applied per element with rsMatrixMultiply, and an
// invokable that builds a transform with rsMatrixLoad*/Rotate/Scale/Translate/Multiply/Transpose/Inverse.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.matrix)

rs_matrix4x4 gM4;
rs_matrix3x3 gM3;
rs_matrix2x2 gM2;
rs_matrix4x4 gBuilt;
rs_matrix4x4 gInverse;
bool gInvertible;
float gProbe;

float4 RS_KERNEL mul4(float4 in) { return rsMatrixMultiply(&gM4, in); }
float3 RS_KERNEL mul3(float3 in) { return rsMatrixMultiply(&gM3, in); }
float2 RS_KERNEL mul2(float2 in) { return rsMatrixMultiply(&gM2, in); }
/* The widening forms (a missing z is 0, a missing w is 1), rsMatrixGet, and a matrix local to the kernel. */
float4 RS_KERNEL mul4_xyz(float3 in) { return rsMatrixMultiply(&gM4, in); }
float4 RS_KERNEL mul4_xy(float2 in) { return rsMatrixMultiply(&gM4, in); }
float3 RS_KERNEL mul3_xy(float2 in) { return rsMatrixMultiply(&gM3, in); }
float RS_KERNEL get4(uint in) { return rsMatrixGet(&gM4, in % 4u, (in / 4u) % 4u) + rsMatrixGet(&gM2, in % 2u, 1); }
float2 RS_KERNEL local2(float2 in) {
  rs_matrix2x2 m;
  m.m[0] = in.y;
  m.m[1] = 2.0f;
  m.m[2] = -1.0f;
  m.m[3] = in.x;
  return rsMatrixMultiply(&m, in);
}

void build(float angle, float scale, float tx) {
  rs_matrix4x4 rotate, product;
  rsMatrixLoadRotate(&rotate, angle, 0.0f, 0.0f, 1.0f);
  rsMatrixLoadIdentity(&gBuilt);
  rsMatrixTranslate(&gBuilt, tx, 0.0f, 0.0f);
  rsMatrixScale(&gBuilt, scale, scale, 1.0f);
  rsMatrixLoadMultiply(&product, &gBuilt, &rotate);
  rsMatrixLoad(&gBuilt, &product);
  rsMatrixLoad(&gInverse, &gBuilt);
  gInvertible = rsMatrixInverse(&gInverse);
  rsMatrixTranspose(&product);
  gProbe = rsMatrixGet(&product, 0, 3); /* the transposed x translation */
  rsMatrixSet(&gM2, 1, 0, gProbe);
}
