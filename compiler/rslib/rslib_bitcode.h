// The kernel math library (compiler/rslib) as LLVM bitcode, embedded at build time.
//
// kilnc links this module into every kernel module it builds (only the functions a kernel uses), so kernels
// get Kiln's own, vectorizable implementations of the RenderScript math functions declared in
// compiler/prelude/rs_math.rsh instead of calls to libm. The bitcode targets x86_64-unknown-linux-gnu; its
// functions carry no target-cpu, so the driver's host-CPU settings apply after linking.
#ifndef KILN_COMPILER_RSLIB_RSLIB_BITCODE_H_
#define KILN_COMPILER_RSLIB_RSLIB_BITCODE_H_

#include <cstddef>

namespace kiln {

// The bytes of kiln_rslib.bc (a bitcode file, starting with 'BC' 0xC0 0xDE), aligned to 16 bytes.
extern const unsigned char kRslibBitcode[];
extern const size_t kRslibBitcodeSize;

}  // namespace kiln

#endif  // KILN_COMPILER_RSLIB_RSLIB_BITCODE_H_
