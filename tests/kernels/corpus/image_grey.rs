// Greyscale as RenderScript image apps wrote it: luma from the Rec. 709 weights, alpha kept.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.image.grey)
#pragma rs_fp_relaxed

const float3 kWeights = {0.2126f, 0.7152f, 0.0722f};

uchar4 RS_KERNEL grey(uchar4 in) {
  const float4 f = rsUnpackColor8888(in);
  const float y = dot(f.rgb, kWeights);
  return rsPackColorTo8888(y, y, y, f.a);
}
