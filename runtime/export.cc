// libkiln.so is kiln_core linked whole; this file only gives the shared library a translation unit of its own.
// The exported surface is exactly the KILN_CAPI_EXPORT functions of include/kiln/.
