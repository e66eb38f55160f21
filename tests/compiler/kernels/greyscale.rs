// Converts RGBA pixels to grey with the BT.601 luma weights.
#pragma version(1)
#pragma rs java_package_name(com.example.image)
#pragma rs_fp_relaxed

const float3 kLumaWeights = {0.299f, 0.587f, 0.114f};

uchar4 RS_KERNEL greyscale(uchar4 in) {
  const float3 rgb = convert_float3(in.rgb);
  const float luma = dot(rgb, kLumaWeights);
  const uchar grey = (uchar)clamp(luma + 0.5f, 0.0f, 255.0f);
  return (uchar4){grey, grey, grey, in.a};
}
