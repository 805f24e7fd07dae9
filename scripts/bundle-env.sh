# Sourced by the scripts that run on the GPU machine: unpacks the device
# bundle and sets root (the checkout), out ($OUT or ./gpu-results, created),
# work (a temporary directory) and bin (the bundle's tools). HUMMING_BUNDLE
# names another bundle under .bundle (make-bundle.sh --name).
# Usage: source scripts/bundle-env.sh (from a script beside it)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$root/gpu-results}"
mkdir -p "$out"
work="$(mktemp -d)"
xz -dc "$root/.bundle/${HUMMING_BUNDLE:-humming-bundle}.tar.xz" | tar -C "$work" -xf -
bin="$work/humming/bin"
