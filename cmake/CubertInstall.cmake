# Install rules (GNU layout), the exported CMake package `cubert`, the pkg-config files and the
# Debian packages (CPack). Included at the end of the top-level CMakeLists.txt; the in-tree
# build does not depend on anything here.
#
#   cmake --install build [--prefix DIR]      # everything below
#   (cd build && cpack -G DEB)                # build/libcubert0_*.deb, libcubert-dev_*, cubert-tools_*
#
# Install components (they are the Debian packages):
#   runtime  libcubert.so.0 (libcubert0)
#   dev      headers, libcubert.so, libcubert.a, the CMake package with the kernel helper,
#            cubert.pc / cubert-static.pc (libcubert-dev)
#   tools    cubert-info, cubert-kernel-check (cubert-tools)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CUBERT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cubert)

# An installed or packaged library has every capability: a build folder configured for the quick
# start (`make run`: the host's CPU variant only, no kernel sanitizer) refuses to install.
if(NOT CUBERT_KERNEL_CPU_VARIANTS STREQUAL "all" OR
   (NOT CUBERT_KERNEL_SANITIZER AND CMAKE_C_COMPILER_ID STREQUAL "GNU"))
  install(CODE "message(FATAL_ERROR \"cubert: this build folder was configured for the quick \
start (CUBERT_KERNEL_CPU_VARIANTS=${CUBERT_KERNEL_CPU_VARIANTS}, CUBERT_KERNEL_SANITIZER=\
${CUBERT_KERNEL_SANITIZER}) and lacks parts of the library; reconfigure it with \
-DCUBERT_KERNEL_CPU_VARIANTS=all -DCUBERT_KERNEL_SANITIZER=ON (make build does) and build \
again before installing\")" ALL_COMPONENTS)
endif()

# libcubert.so.0.1.0, SONAME libcubert.so.0 (the ABI is the major version).
set_target_properties(cubert PROPERTIES VERSION ${PROJECT_VERSION}
                                        SOVERSION ${PROJECT_VERSION_MAJOR})
foreach(t cubert cubert_static)
  target_include_directories(${t} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()

install(TARGETS cubert EXPORT cubertTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(TARGETS cubert_static EXPORT cubertTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
# Every public header (a glob: headers added later are installed too), with the OpenCL prelude
# that user kernels are flattened behind.
# cubert/opencl.h (interop) includes <CL/cl.h>: only where the library has the OpenCL server.
# cubert/mpi.h (the MPI component) includes <mpi.h>: only where the library has it.
set(cubert_header_exclude)
if(NOT CUBERT_WITH_OPENCL)
  list(APPEND cubert_header_exclude PATTERN "opencl.h" EXCLUDE)
endif()
if(NOT CUBERT_WITH_MPI)
  list(APPEND cubert_header_exclude PATTERN "mpi.h" EXCLUDE)
endif()
# With MPI, the installed shared library's target passes MPI on (include directories for
# cubert/mpi.h; libcubert.so needs libmpi anyway); the static one lists it with its other
# dependencies (CMakeLists.txt).
if(CUBERT_WITH_MPI)
  target_link_libraries(cubert INTERFACE $<INSTALL_INTERFACE:MPI::MPI_C>)
endif()
install(DIRECTORY lib/include/cubert DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
  FILES_MATCHING PATTERN "*.h" PATTERN "*.cl" ${cubert_header_exclude})
install(TARGETS cubert-info cubert-kernel-check
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)

# ---- the CMake package --------------------------------------------------------------------
install(EXPORT cubertTargets NAMESPACE cubert:: DESTINATION ${CUBERT_INSTALL_CMAKEDIR}
  COMPONENT dev)
configure_package_config_file(cmake/cubertConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/cubertConfig.cmake
  INSTALL_DESTINATION ${CUBERT_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
# 0.x: the SONAME is the major version, so is the package's compatibility.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cubertConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cubertConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/cubertConfigVersion.cmake
              cmake/CubertKernels.cmake cmake/flatten.cmake cmake/check_kernel.cmake
              cmake/sanitize_rename.cmake tools/cubert_phase.py
              tools/cubert_phase_ranges.py
  DESTINATION ${CUBERT_INSTALL_CMAKEDIR} COMPONENT dev)

# ---- pkg-config ---------------------------------------------------------------------------
# The files locate the prefix from their own folder (${pcfiledir}), so a staged install
# (`cmake --install build --prefix /tmp/x`) and the Debian package both work.
set(CUBERT_PC_PREFIX "\${pcfiledir}")
set(pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
while(NOT pc_dir STREQUAL "" AND NOT pc_dir STREQUAL ".")
  string(APPEND CUBERT_PC_PREFIX "/..")
  get_filename_component(pc_dir ${pc_dir} DIRECTORY)
endwhile()
set(CUBERT_PC_REQUIRES hwloc)
set(CUBERT_PC_CFLAGS "")
if(CUBERT_WITH_OPENCL)
  string(APPEND CUBERT_PC_REQUIRES ", OpenCL")
  set(CUBERT_PC_CFLAGS " -DCL_TARGET_OPENCL_VERSION=120 -DCUBERT_WITH_OPENCL=1")
endif()
if(CUBERT_WITH_LIBDW)
  string(APPEND CUBERT_PC_REQUIRES ", libdw")
endif()
if(CUBERT_WITH_MPI)
  # mpi-c: the C bindings of Debian's default MPI (Open MPI's ompi-c under its generic name).
  string(APPEND CUBERT_PC_REQUIRES ", mpi-c")
endif()
foreach(pc cubert cubert-static)
  configure_file(cmake/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
endforeach()

# ---- Debian packages (CPack) --------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cubert)
set(CPACK_PACKAGE_VENDOR "cubert")
set(CPACK_PACKAGE_CONTACT "cubert maintainers <cubert@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "portable compute runtime: kernels written once for OpenCL devices and the CPU")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL runtime dev tools)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
# dpkg-shlibdeps turns the binaries' DT_NEEDED into Depends (libc6, libhwloc15,
# ocl-icd-libopencl1 | libopencl1, ...); without dpkg-dev the explicit lists below stand in.
find_program(CUBERT_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(CUBERT_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libcubert${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libcubert-dev)
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME cubert-tools)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
# Descriptions (CPack puts CPACK_PACKAGE_DESCRIPTION_SUMMARY on the synopsis line).
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "The shared library, libcubert.so.${PROJECT_VERSION_MAJOR}.")
set(CPACK_DEBIAN_DEV_DESCRIPTION "Development files: headers, libcubert.a, the CMake package \
(find_package(cubert)) with the kernel-language helper cubert_add_kernels, pkg-config files.")
set(CPACK_DEBIAN_TOOLS_DESCRIPTION "Tools: cubert-info lists the devices (--json for scripts); \
cubert-kernel-check builds kernel-language files with an OpenCL compiler.")
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(runtime_deps "libhwloc15")
set(dev_deps "libhwloc-dev, pkg-config")
if(CUBERT_WITH_OPENCL)
  string(APPEND runtime_deps ", ocl-icd-libopencl1 | libopencl1")
  string(APPEND dev_deps ", ocl-icd-opencl-dev | opencl-dev")
  # An OpenCL driver to run on (PoCL runs on any CPU).
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "pocl-opencl-icd | opencl-icd")
  set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "pocl-opencl-icd | opencl-icd")
endif()
if(CUBERT_WITH_LIBDW)
  string(APPEND runtime_deps ", libdw1")
  string(APPEND dev_deps ", libdw-dev")
endif()
if(CUBERT_WITH_MPI)
  string(APPEND runtime_deps ", libopenmpi3 | mpi-default-bin")
  string(APPEND dev_deps ", libopenmpi-dev | mpi-default-dev")
endif()
# The binaries' own dependencies come from dpkg-shlibdeps where it exists (with versions), from
# the list above elsewhere; the -dev package names what building against libcubert.a needs.
if(NOT CUBERT_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "${runtime_deps}")
  set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${runtime_deps}")
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${dev_deps}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# A shlibs file for libcubert0 (packages built against it depend on libcubert0 >= this
# version); CPack adds ldconfig to postinst/postrm of the package holding the library.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
include(CPack)
