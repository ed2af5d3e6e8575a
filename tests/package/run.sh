#!/bin/bash
# The package round trip (CI stage `make test-package`): stages an install of a built tree,
# builds tests/package against it through find_package (CMAKE_PREFIX_PATH) and through
# pkg-config (PKG_CONFIG_PATH), each with the shared and the static library, checks the MPI
# component (when built: found, and an MPI program runs under mpiexec -n 2; when not: requiring
# it fails with a clear message), and runs every build
# on the CPU server and the first OpenCL device (PoCL here).
#   tests/package/run.sh [BUILD_DIR]   (default build; it must be built)
# PACKAGE_DEVICES overrides the devices (default "cpu opencl", "cpu" without the OpenCL server).
# PACKAGE_DEB=1 (CI; needs root and apt) also builds the Debian packages (cpack), installs them
# with apt-get install ./...deb, builds and runs tests/package against /usr through find_package
# and pkg-config, and purges the packages again.
set -euo pipefail
# (grep without -q after a pipe: under pipefail, grep -q leaving at the first match can kill the
# writer with SIGPIPE and fail the pipeline.)
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
jobs=${JOBS:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/cubert-package.XXXXXX")
trap '[ -n "${PACKAGE_KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "package test: FAILED: $*" >&2; exit 1; }
step() { echo "== package test: $*"; }

stage=$work/stage
step "cmake --install $build --prefix <stage>"
cmake --install "$build" --prefix "$stage" >"$work/install.log" || { cat "$work/install.log"; fail "install"; }
pc=$(dirname "$(find "$stage" -name cubert.pc | head -1)")
[ -f "$pc/cubert.pc" ] || fail "no cubert.pc under the staged install"
for f in include/cubert/cube.h include/cubert/cube_cpu.h include/cubert/cube_opencl.h \
  include/cubert/cube_prelude.cl include/cubert/cubert.h \
  bin/cubert-info bin/cubert-kernel-check; do
  [ -e "$stage/$f" ] || fail "the install lacks $f"
done
soname=$(readelf -d "$pc/../libcubert.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libcubert.so.0 ] || fail "SONAME is '$soname', expected libcubert.so.0"
[ -f "$pc/../libcubert.a" ] || fail "the install lacks libcubert.a"

if [ -z "${PACKAGE_DEVICES:-}" ]; then
  PACKAGE_DEVICES=cpu
  grep -q CUBERT_WITH_OPENCL "$pc/cubert.pc" && PACKAGE_DEVICES="cpu opencl"
fi

step "find_package(cubert) build (CMAKE_PREFIX_PATH=<stage>)"
cmake -S "$root/tests/package" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$stage" \
  -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "configure"; }
cmake --build "$work/cmake" -j "$jobs" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "build"; }
ldd "$work/cmake/pkg_app" | grep "$stage/.*libcubert.so.0" >/dev/null ||
  fail "pkg_app does not load the staged libcubert.so.0: $(ldd "$work/cmake/pkg_app" | grep cubert)"

step "the README's first program, verbatim (tests/package/readme_first.sh)"
bash "$root/tests/package/readme_first.sh" "$stage" "$work/readme" "$PACKAGE_DEVICES"

if [ -f "$stage/include/cubert/mpi.h" ]; then
  step "find_package(cubert REQUIRED COMPONENTS MPI): built, so found; pkg_mpi under mpiexec -n 2"
  cmake -S "$root/tests/package" -B "$work/mpi" -DCMAKE_PREFIX_PATH="$stage" -DPKG_REQUIRE=MPI \
    -DCMAKE_BUILD_TYPE=Release >"$work/mpi.log" 2>&1 || { cat "$work/mpi.log"; fail "MPI configure"; }
  cmake --build "$work/mpi" -j "$jobs" --target pkg_mpi >>"$work/mpi.log" 2>&1 ||
    { cat "$work/mpi.log"; fail "MPI build"; }
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 \
    mpiexec -n 2 --oversubscribe --bind-to none --mca btl self,vader "$work/mpi/pkg_mpi" cpu ||
    fail "pkg_mpi under mpiexec"
else
  step "find_package(cubert REQUIRED COMPONENTS MPI) must fail: MPI is not built"
  if cmake -S "$root/tests/package" -B "$work/mpi" -DCMAKE_PREFIX_PATH="$stage" -DPKG_REQUIRE=MPI \
    >"$work/mpi.log" 2>&1; then
    fail "find_package with the MPI component succeeded"
  fi
  grep -q "component MPI: not built" "$work/mpi.log" || { cat "$work/mpi.log"; fail "no clear message for MPI"; }
fi

step "pkg-config build (PKG_CONFIG_PATH=<stage>/.../pkgconfig, tests/package/Makefile)"
PKG_CONFIG_PATH="$pc" make -s -C "$root/tests/package" OUT="$work/pc" >"$work/pc.log" 2>&1 ||
  { cat "$work/pc.log"; fail "pkg-config build"; }

for app in cmake/pkg_app cmake/pkg_app_static pc/pkg_app pc/pkg_app_static; do
  for device in $PACKAGE_DEVICES; do
    step "$app $device"
    "$work/$app" "$device" || fail "$app on $device"
  done
done
if [ "${PACKAGE_DEB:-}" = 1 ]; then
  step "Debian packages: cpack -G DEB, apt-get install ./libcubert0 ./libcubert-dev ./cubert-tools"
  (cd "$build" && cpack -G DEB >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
  debs=("$build"/libcubert0_*.deb "$build"/libcubert-dev_*.deb "$build"/cubert-tools_*.deb)
  for d in "${debs[@]}"; do [ -f "$d" ] || fail "cpack made no $d"; done
  remove_debs() { apt-get purge -y -q cubert-tools libcubert-dev libcubert0 >/dev/null 2>&1 || true; }
  trap 'remove_debs; [ -n "${PACKAGE_KEEP:-}" ] || rm -rf "$work"' EXIT
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${debs[@]}" \
    >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get install of the packages"; }
  cubert-info --json | python3 -c 'import json, sys; json.load(sys.stdin)' ||
    fail "the packaged cubert-info --json is not one JSON document"
  cmake -S "$root/tests/package" -B "$work/deb" -DCMAKE_BUILD_TYPE=Release >"$work/deb.log" 2>&1 ||
    { cat "$work/deb.log"; fail "configure against the packages"; }
  cmake --build "$work/deb" -j "$jobs" --target pkg_app >>"$work/deb.log" 2>&1 ||
    { cat "$work/deb.log"; fail "build against the packages"; }
  ldd "$work/deb/pkg_app" | grep -E " (/usr)?/lib/.*libcubert.so.0" >/dev/null ||
    fail "pkg_app does not load the packaged libcubert.so.0: $(ldd "$work/deb/pkg_app" | grep cubert)"
  make -s -C "$root/tests/package" OUT="$work/deb-pc" "$work/deb-pc/pkg_app" >"$work/deb-pc.log" 2>&1 ||
    { cat "$work/deb-pc.log"; fail "pkg-config build against the packages"; }
  for app in deb/pkg_app deb-pc/pkg_app; do
    for device in $PACKAGE_DEVICES; do
      step "$app $device (installed packages)"
      "$work/$app" "$device" || fail "$app on $device"
    done
  done
  remove_debs
  [ -z "$(dpkg-query -W -f='${Status}' libcubert0 2>/dev/null)" ] ||
    fail "libcubert0 is still known to dpkg after apt-get purge"
  [ ! -e /usr/lib/libcubert.so.0 ] || fail "/usr/lib/libcubert.so.0 is left after apt-get purge"
  step "Debian packages installed, used and removed"
fi
echo "package test: all builds verified on: $PACKAGE_DEVICES"
