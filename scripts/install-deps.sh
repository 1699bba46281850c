#!/bin/sh
# install-deps.sh [--test] [--s3] [--bench]: install the Debian packages keep needs
# (as root, or through sudo). Idempotent.
#   (none)   to build and run: compiler, libcurl, OpenSSL, libyaml, expat
#   --test   also what `make check` uses: bats, clang + libFuzzer (fuzz smoke),
#            valgrind, systemd-analyze, man, openssl (TLS test endpoint),
#            tmux (a real terminal for the Ctrl-C tests), shellcheck, jq (the
#            --json tests parse with it), prometheus (promtool: the metrics
#            files and the alert rules are checked with it; its service is
#            installed too, but keep's tests never start it), GNU parallel
#            (bats --jobs: the test files run side by side), stress-ng (the
#            CPU hog of the loaded runs, docs/testing.md)
#   --s3     also the Ceph RGW packages used as the real S3 server of the tests
#   --bench  also gnuplot (bench/plot-soak draws a soak's per-minute CSV)
set -eu
pkgs="build-essential pkg-config libcurl4-openssl-dev libssl-dev libyaml-dev libexpat1-dev libjansson-dev \
curl ca-certificates procps util-linux"
for arg in "$@"; do
	case $arg in
	--test) pkgs="$pkgs bats bats-support bats-assert systemd man-db clang libclang-rt-dev valgrind openssl tmux shellcheck jq prometheus parallel stress-ng" ;;
	--s3) pkgs="$pkgs radosgw ceph-mon ceph-osd" ;;
	--bench) pkgs="$pkgs gnuplot-nox" ;;
	*) echo "usage: install-deps.sh [--test] [--s3] [--bench]" >&2; exit 100 ;;
	esac
done
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
