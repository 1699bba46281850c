#!/bin/sh
# install-deps.sh [--s3]: install the Debian packages keep needs to build and
# test (as root, or through sudo). --s3 also installs the Ceph RGW packages
# used as the real S3 server of the tests. Idempotent.
set -eu
pkgs="build-essential pkg-config libcurl4-openssl-dev libssl-dev libyaml-dev libexpat1-dev \
bats bats-support bats-assert curl ca-certificates procps util-linux systemd man-db \
clang libclang-rt-dev valgrind openssl"
if [ "${1:-}" = "--s3" ]; then
	pkgs="$pkgs radosgw ceph-mon ceph-osd"
fi
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing" >&2
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -q >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing >&2
