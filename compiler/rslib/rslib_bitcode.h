// The kernel math library (compiler/rslib) as LLVM bitcode, embedded at build time.
//
// kilnc links this module into every kernel module it builds (only the functions a kernel uses), so kernels
// get Kiln's own, vectorizable implementations of the RenderScript math functions declared in
// compiler/prelude/rs_math.rsh instead of calls to libm. The bitcode targets x86_64-unknown-linux-gnu with
// baseline x86-64 function attributes ("target-cpu"="x86-64"): the math functions are always_inline, so they
// take on the host CPU of the kernel function they are inlined into; a driver that keeps a library function
// out of line (rsMatrixInverse, rsRand, ...) should set its target attributes to the host's, like the
// kernel's.
#ifndef KILN_COMPILER_RSLIB_RSLIB_BITCODE_H_
#define KILN_COMPILER_RSLIB_RSLIB_BITCODE_H_

#include <cstddef>

namespace kiln {

// The bytes of kiln_rslib.bc (a bitcode file, starting with 'BC' 0xC0 0xDE), aligned to 16 bytes.
extern const unsigned char kRslibBitcode[];
extern const size_t kRslibBitcodeSize;

}  // namespace kiln

#endif  // KILN_COMPILER_RSLIB_RSLIB_BITCODE_H_
