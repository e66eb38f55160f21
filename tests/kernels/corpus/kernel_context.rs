// rs_kernel_context with rsGetDimX/Y/Z: a kernel that reports the launch's extents, and one that uses them to
// mirror the image horizontally through an allocation.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.context)

rs_allocation gSource; /* float, the same shape as the launch */

uint4 RS_KERNEL launch_dims(uchar in, rs_kernel_context context, uint32_t x) {
  return (uint4){rsGetDimX(context), rsGetDimY(context), rsGetDimZ(context), x};
}

/* What a launch without levels of detail, cube faces or array dimensions reports: 0 (and no faces). */
uint4 RS_KERNEL absent_dims(uchar in, rs_kernel_context context) {
  const uint v = in;
  return (uint4){v + rsGetLod(context) + rsGetDimLod(context),
                 v + (uint)rsGetFace(context) + (rsGetDimHasFaces(context) ? 1u : 0u),
                 v + rsGetArray0(context) + rsGetArray1(context) + rsGetArray2(context) + rsGetArray3(context),
                 v + rsGetDimArray0(context) + rsGetDimArray1(context) + rsGetDimArray2(context) +
                     rsGetDimArray3(context)};
}

float RS_KERNEL mirror_x(rs_kernel_context context, uint32_t x, uint32_t y) {
  return rsGetElementAt_float(gSource, rsGetDimX(context) - 1u - x, y);
}
