#!/usr/bin/env bash
# Script behind the install_debian_packages test: builds the Debian packages of this build (cpack -G DEB), installs
# them with dpkg into a scratch root (its own dpkg database: the machine's /usr is not touched), and uses them
# as a user would: `kiln inspect --devices` finds the Vulkan driver of kiln-vulkan-driver beside libkiln,
# kilnc compiles a kernel that `kiln run` serves on the GPU, and a C program builds against libkiln-dev with
# pkg-config and runs. Every dependency the packages declare must be a package this machine has installed.
#   debian_packages_test.sh BUILD_DIR SOURCE_DIR WORK C_SAMPLE C_COMPILER
set -euo pipefail
build=$1 src=$2 work=$3 sample=$4 cc=$5
rm -rf "$work"
mkdir -p "$work"

echo "== cpack"
(cd "$build" && cpack -G DEB -B "$work/debs" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; exit 1; }
ls "$work"/debs/*.deb

echo "== declared dependencies"
for deb in "$work"/debs/*.deb; do
  echo "$(dpkg-deb -f "$deb" Package): $(dpkg-deb -f "$deb" Depends)"
  dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -e 's/(.*)//' -e 's/ //g' | while read -r dep; do
    [ -z "$dep" ] && continue
    case "$dep" in libkiln) continue ;; esac
    dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q "install ok installed" ||
      { echo "FAILED: $(basename "$deb") depends on '$dep', which is not an installed package here"; exit 1; }
  done
done

echo "== dpkg -i into $work/root"
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status"
# --force-depends: the scratch database does not hold the system libraries (checked above instead).
dpkg --force-not-root --force-depends --force-script-chrootless --instdir="$root" --admindir="$root/var/lib/dpkg" \
  --log=/dev/null -i "$work"/debs/*.deb 2>&1 | grep -v "^dpkg: warning" || true
dpkg --admindir="$root/var/lib/dpkg" -l | grep -E "^ii +(libkiln|libkiln-dev|kiln-vulkan-driver|kiln-tools) "

echo "== kiln inspect --devices"
"$root/usr/bin/kiln" inspect --devices --device gpu

echo "== kilnc and kiln run --device gpu"
"$root/usr/bin/kilnc" "$src/examples/atan/atan_op.rs" -o "$work/atan_op.kmod"
"$root/usr/bin/kiln" run "$src/examples/atan/atan.tflite" --op "Atan=$work/atan_op.kmod:atan_op" \
  --input "$src/examples/atan/atan_x.npy" --device gpu --explain

echo "== a C program against libkiln-dev (pkg-config)"
export PKG_CONFIG_PATH=$root/usr/lib/pkgconfig
flags=$(pkg-config --define-prefix --cflags --libs kiln)
echo "pkg-config: $flags"
"$cc" -std=c99 -Wall -Werror "$sample" $flags -lm -o "$work/app"
"$work/app" "$src/examples/atan/atan.tflite"
