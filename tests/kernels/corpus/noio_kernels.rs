// RS_KERNEL kernels with neither input nor output (RenderScript API 23): launched over the range their launch
// options give, they write through rs_allocation globals.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.noio)

rs_allocation gSquares; /* uint, 1D */
rs_allocation gGrid;    /* int, 2D */

void RS_KERNEL squares(uint32_t x) { rsSetElementAt_uint(gSquares, x * x + 1u, x); }

void RS_KERNEL grid(uint32_t x, uint32_t y) { rsSetElementAt_int(gGrid, (int)(x * 1000u + y), x, y); }
