# Debian packages (CPack's DEB generator), one per install component:
#   libkiln             libkiln.so.0: the runtime, the built-in CPU driver, the builtin ops
#   libkiln-dev         headers, libkiln.so, the CMake package, kiln.pc, the sample driver's sources
#   kiln-vulkan-driver  the Vulkan driver, in <libdir>/kiln/drivers where libkiln finds it
#   kiln-tools          kiln, kilnc and kiln-cts (with the conformance suite's kernel modules)
# Build them from a configured and built tree with `cpack -G DEB` (tests/install: install_debian_packages).
# They install under /usr, and Kiln finds its drivers beside libkiln.so wherever the files end up.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kiln)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "Kiln")
set(CPACK_PACKAGE_CONTACT "Kiln developers <kiln-dev@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Kiln: .tflite models and RenderScript-style kernels on CPUs and GPUs")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL libkiln dev vulkan tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)

set(_kiln_exact "libkiln (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_LIBKILN_PACKAGE_NAME libkiln)
set(CPACK_DEBIAN_LIBKILN_PACKAGE_SHLIBDEPS ON)  # libllvm19, libxnnpack0, ... found by dpkg-shlibdeps
set(CPACK_COMPONENT_LIBKILN_DESCRIPTION "Kiln runtime library: the C API, the CPU driver and the builtin ops")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libkiln-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_kiln_exact}")
set(CPACK_COMPONENT_DEV_DESCRIPTION "Kiln development files: C headers, CMake package, pkg-config file")

set(CPACK_DEBIAN_VULKAN_PACKAGE_NAME kiln-vulkan-driver)
set(CPACK_DEBIAN_VULKAN_PACKAGE_SHLIBDEPS ON)  # libvulkan1
set(CPACK_DEBIAN_VULKAN_PACKAGE_DEPENDS "${_kiln_exact}")
set(CPACK_COMPONENT_VULKAN_DESCRIPTION "Kiln's Vulkan driver: kernels on any Vulkan 1.1 device")

# The tools link libkiln.so.0, which dpkg-shlibdeps cannot see from this package; their other libraries are
# named here.
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME kiln-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${_kiln_exact}, libclang-cpp19, libllvm19")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "Kiln tools: kiln (run, inspect, benchmark), kilnc, kiln-cts")

include(CPack)
