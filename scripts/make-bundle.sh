#!/usr/bin/env bash
# Builds the device bundle: the statically linked tools and libhumming.so (no
# LLVM/MLIR needed where they run), stripped and packed with xz (the GPU
# machine has no zstd),
# into .bundle/humming-bundle.tar.xz. Carry `.bundle` to the GPU machine and
# run scripts/run-gpu-suite.sh there.
#   make-bundle.sh [--name=<name>] [--tools=<tool>,...] [--lib]
# --name writes .bundle/<name>.tar.xz instead; --tools packs only those
# tools (no libhumming.so unless --lib): for A/B runs of two compilers in one
# device call (humming-gpu-test alone is ~12 MB packed, the main bundle ~53
# MB, and a device call carries 64 MiB with the tree; the scripts pick a
# bundle with HUMMING_BUNDLE=<name>).
set -euo pipefail
name=humming-bundle tools="humming-gpu-test humming-opt humming-inspect humming-translate" lib=1 withlib=0
for a in "$@"; do
  case "$a" in
    --name=*) name="${a#--name=}" ;;
    --tools=*) tools="${a#--tools=}"; tools="${tools//,/ }"; lib=0 ;;
    --lib) withlib=1 ;;
    *) echo "make-bundle: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
[ "$withlib" = 1 ] && lib=1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HUMMING_BUILD_DIR:-$root/build}"
HUMMING_STATIC_LLVM=ON "$root/scripts/humming" build
ninja -C "$build" humming-gpu-test humming-opt humming-inspect humming-translate humming >/dev/null
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/humming/bin"
for tool in $tools; do
  if ldd "$build/bin/$tool" | grep -Eq 'libLLVM|libMLIR'; then
    echo "make-bundle: $tool links LLVM/MLIR dynamically; configure with HUMMING_STATIC_LLVM=ON" >&2
    exit 1
  fi
  strip -o "$stage/humming/bin/$tool" "$build/bin/$tool"
done
# The C API library the Python package loads (LLVM/MLIR linked in).
if [ "$lib" = 1 ]; then
  mkdir -p "$stage/humming/lib"
  strip -o "$stage/humming/lib/libhumming.so" "$build/lib/libhumming.so"
fi
git -C "$root" rev-parse HEAD > "$stage/humming/COMMIT" 2>/dev/null || echo unknown > "$stage/humming/COMMIT"
mkdir -p "$root/.bundle"
tar -C "$stage" -cf - humming | xz -T0 -6 > "$root/.bundle/$name.tar.xz"
ls -la "$root/.bundle/$name.tar.xz"
