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
