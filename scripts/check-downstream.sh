#!/usr/bin/env bash
# Installs a build of humming into <work>/prefix and builds
# examples/downstream against that installed package in <work>/build (the
# test command runs it through test/Install/downstream.test, so a broken
# export fails CI):
#
#   scripts/check-downstream.sh <build-dir> <work-dir> <MLIR_DIR> <c++ compiler>
#
# Prints the path of the built downstream-opt last.
set -euo pipefail
[ $# -eq 4 ] || { sed -n 2,9p "${BASH_SOURCE[0]}" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$1" work="$2" mlir="$3" cxx="$4"
rm -rf "$work/prefix" "$work/build"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 ||
  { tail -n 20 "$work/install.log" >&2; exit 1; }
linker=()
command -v ld.lld >/dev/null && linker=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -G Ninja -S "$root/examples/downstream" -B "$work/build" -Wno-dev \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" "${linker[@]}" \
  "${launcher[@]}" -DMLIR_DIR="$mlir" \
  -DHumming_DIR="$work/prefix/lib/cmake/humming" >"$work/configure.log" 2>&1 ||
  { tail -n 30 "$work/configure.log" >&2; exit 1; }
ninja -C "$work/build" >"$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log" >&2; exit 1; }
echo "$work/build/downstream-opt"
