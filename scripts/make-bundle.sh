#!/usr/bin/env bash
# Builds the device bundle: the statically linked tools and libhumming.so (no
# LLVM/MLIR needed where they run), stripped and packed with xz (the GPU
# machine has no zstd),
# into .bundle/humming-bundle.tar.xz. Carry `.bundle` to the GPU machine and
# run scripts/run-gpu-suite.sh there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HUMMING_BUILD_DIR:-$root/build}"
HUMMING_STATIC_LLVM=ON "$root/scripts/humming" build
ninja -C "$build" humming-gpu-test humming-opt humming-inspect humming-translate humming >/dev/null
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/humming/bin"
for tool in humming-gpu-test humming-opt humming-inspect humming-translate; do
  if ldd "$build/bin/$tool" | grep -Eq 'libLLVM|libMLIR'; then
    echo "make-bundle: $tool links LLVM/MLIR dynamically; configure with HUMMING_STATIC_LLVM=ON" >&2
    exit 1
  fi
  strip -o "$stage/humming/bin/$tool" "$build/bin/$tool"
done
# The C API library the Python package loads (LLVM/MLIR linked in).
mkdir -p "$stage/humming/lib"
strip -o "$stage/humming/lib/libhumming.so" "$build/lib/libhumming.so"
git -C "$root" rev-parse HEAD > "$stage/humming/COMMIT" 2>/dev/null || echo unknown > "$stage/humming/COMMIT"
mkdir -p "$root/.bundle"
tar -C "$stage" -cf - humming | xz -T0 -6 > "$root/.bundle/humming-bundle.tar.xz"
ls -la "$root/.bundle/humming-bundle.tar.xz"
