#!/usr/bin/env bash
# lint-includes.sh ROOT — the layers of lib/, one folder each (docs/design.md "Layers"),
# held by the #include "..." lines of ROOT/lib and ROOT/sim: a file may include only
# headers of its own layer or of a layer it uses, and no two modules
# (NAME.c with NAME.h) include each other, directly or through others.
# Prints one line per fault and exits 1; silent and 0 when the tree keeps
# the layers. Run by tests/bats/0001-lint.bats (with planted faults too).
#
# The layers, bottom up, one folder each (the one place they are written
# as code; the table of docs/design.md "Layers" says the same in words):
#   base      lib/base/     the vocabulary: errors, exit codes, buffers, parsers
#   codec     lib/codec/    the objects' and the state file's bytes
#   core      lib/core/     the protocol's machines (sans I/O: docs/design.md)
#   platform  lib/platform/ the real clocks, diagnostics, the line format, the version
#   store     lib/store/    the store interface and its backends
#   local     lib/local/    the node's own files: config, state directory,
#                           holds, run locks, the metrics textfile
#   driver    lib/driver/   machines run against the store and local files,
#                           and what every command shares
# and sim/ (the simulator) may use only the core, the codecs and the base:
# the protocol it proves is lib/core's (docs/testing.md). A file directly
# in lib/ or in another folder has no layer and is refused.
set -u
ROOT=${1:?usage: lint-includes.sh ROOT}
cd "$ROOT" || exit 2

# layer FILE : the layer of a path relative to ROOT, into L (no fork: the
# check runs for every #include of the tree)
layer() {
	case $1 in
	lib/base/*.[ch]) L=base ;;
	lib/codec/*.[ch]) L=codec ;;
	lib/core/*.[ch]) L=core ;;
	lib/platform/*.[ch]) L=platform ;;
	lib/store/*.[ch]) L=store ;;
	lib/local/*.[ch]) L=local ;;
	lib/driver/*.[ch]) L=driver ;;
	lib/*) L=unknown ;;
	sim/*) L=sim ;;
	*) L=outside ;;
	esac
}
# norm PATH : PATH with its . and .. parts resolved, into REPLY (no fork)
norm() {
	local IFS=/ part
	local -a out=()
	set -f
	for part in $1; do
		case $part in
		'' | .) ;;
		..) [ ${#out[@]} -eq 0 ] || unset "out[$((${#out[@]} - 1))]" ;;
		*) out+=("$part") ;;
		esac
	done
	set +f
	REPLY="${out[*]}"
}
# uses A B : layer A may include headers of layer B
uses() {
	case "$1:$2" in
	base:base) return 0 ;;
	codec:codec | codec:base) return 0 ;;
	core:core | core:codec | core:base) return 0 ;;
	platform:platform | platform:codec | platform:base) return 0 ;;
	store:store | store:platform | store:core | store:codec | store:base) return 0 ;;
	local:local | local:store | local:platform | local:core | local:codec | local:base) return 0 ;;
	driver:*) [ "$2" != outside ] && [ "$2" != unknown ] && [ "$2" != sim ] ;;
	sim:sim | sim:core | sim:codec | sim:base) return 0 ;;
	*) return 1 ;;
	esac
}

bad=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
files=()
while IFS= read -r f; do
	files+=("$f")
	layer "$f"
	if [ "$L" = unknown ]; then
		echo "$f: not in a layer's folder of lib/ (docs/design.md \"Layers\")"
		bad=1
	fi
done < <(find lib sim -name '*.[ch]' 2>/dev/null | LC_ALL=C sort)

# every line naming an include, as FILE:N:LINE (one grep for the tree)
while IFS= read -r hit; do
	f=${hit%%:*}
	rest=${hit#*:}
	n=${rest%%:*}
	line=${rest#*:}
	case $line in
	*'#'*include*'"'*'"'*) ;;
	*) continue ;;
	esac
	inc=${line#*\"}
	inc=${inc%%\"*}
	norm "${f%/*}/$inc"
	t=$REPLY
	if [ ! -e "$t" ]; then
		echo "$f:$n: includes \"$inc\", which is not a file of the tree"
		bad=1
		continue
	fi
	layer "$f"
	lf=$L
	layer "$t"
	lt=$L
	if ! uses "$lf" "$lt"; then
		echo "$f:$n: includes $t: the $lf layer may not use the $lt layer (docs/design.md \"Layers\")"
		bad=1
	fi
	[ "${f%.*}" = "${t%.*}" ] || echo "${f%.*} ${t%.*}" >>"$edges"
done < <([ ${#files[@]} -eq 0 ] || grep -n include "${files[@]}")

# a circle among modules: tsort names the modules of each loop on stderr
loops=$(sort -u "$edges" | tsort 2>&1 >/dev/null | sed -n 's/^tsort: //p')
if [ -n "$loops" ]; then
	echo "modules that include each other (a circle):"
	printf '%s\n' "$loops"
	bad=1
fi
exit $bad
