// A 4x4 color matrix plus an offset on normalized RGBA (sepia, channel swaps, ...), set from the API.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.image.colormatrix)
#pragma rs_fp_relaxed

rs_matrix4x4 gMatrix;
float4 gAdd = {0.0f, 0.0f, 0.0f, 0.0f};

uchar4 RS_KERNEL color_matrix(uchar4 in) {
  return rsPackColorTo8888(rsMatrixMultiply(&gMatrix, rsUnpackColor8888(in)) + gAdd);
}
