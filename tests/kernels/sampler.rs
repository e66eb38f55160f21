// rsSample with rs_sampler (issue #12): a sampler global set from the host (KilnScriptSetGlobal with the
// 24-byte rs_sampler layout, docs/c-api.md), sampling a bound float4 or uchar4 image (compute_test.cc,
// Samplers).
#pragma version(1)
#pragma rs java_package_name(com.kiln.tests)

rs_allocation gImage;
rs_sampler gSampler;

float4 RS_KERNEL sample_2d(float2 uv) { return rsSample(gImage, gSampler, uv); }
float4 RS_KERNEL sample_2d_lod(float2 uv) { return rsSample(gImage, gSampler, uv, 2.0f); }
float4 RS_KERNEL sample_1d(float2 uv) { return rsSample(gImage, gSampler, uv.x); }
uint4 RS_KERNEL sampler_fields(uint32_t x) {
  const uint aniso = rsSamplerGetAnisotropy(gSampler) > 1.5f ? 100u : 0u;
  return (uint4){rsSamplerGetMinification(gSampler), rsSamplerGetMagnification(gSampler),
                 rsSamplerGetWrapS(gSampler), rsSamplerGetWrapT(gSampler) + aniso};
}
