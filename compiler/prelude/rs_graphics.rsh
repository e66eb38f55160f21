/* rs_graphics.rsh: RenderScript's graphics header, kept so that scripts which include it compile unchanged.
 *
 * RenderScript's graphics API (meshes, program stores, fonts, rsgDraw*) exists only for 32-bit graphics scripts
 * and was never part of the compute API that Kiln implements; on 64-bit targets the header declares nothing a
 * compute script can use. So it declares nothing here either: a script that only includes it compiles as before,
 * and a call to an rsg* function is reported as an unknown runtime function. */
#ifndef KILN_RS_GRAPHICS_RSH
#define KILN_RS_GRAPHICS_RSH
#endif
