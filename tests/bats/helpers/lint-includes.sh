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

# layer FILE : the layer of a path relative to ROOT
layer() {
	case $1 in
	lib/base/*.[ch]) echo base ;;
	lib/codec/*.[ch]) echo codec ;;
	lib/core/*.[ch]) echo core ;;
	lib/platform/*.[ch]) echo platform ;;
	lib/store/*.[ch]) echo store ;;
	lib/local/*.[ch]) echo local ;;
	lib/driver/*.[ch]) echo driver ;;
	lib/*) echo unknown ;;
	sim/*) echo sim ;;
	*) echo outside ;;
	esac
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
while IFS= read -r f; do
	lf=$(layer "$f")
	if [ "$lf" = unknown ]; then
		echo "$f: not in a layer's folder of lib/ (docs/design.md \"Layers\")"
		bad=1
	fi
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		case $line in
		*'#'*include*'"'*'"'*) ;;
		*) continue ;;
		esac
		inc=${line#*\"}
		inc=${inc%%\"*}
		t=$(realpath -m --relative-to=. "$(dirname "$f")/$inc")
		if [ ! -e "$t" ]; then
			echo "$f:$n: includes \"$inc\", which is not a file of the tree"
			bad=1
			continue
		fi
		lt=$(layer "$t")
		if ! uses "$lf" "$lt"; then
			echo "$f:$n: includes $t: the $lf layer may not use the $lt layer (docs/design.md \"Layers\")"
			bad=1
		fi
		[ "${f%.*}" = "${t%.*}" ] || echo "${f%.*} ${t%.*}" >>"$edges"
	done <"$f"
done < <(find lib sim -name '*.[ch]' 2>/dev/null | LC_ALL=C sort)

# a circle among modules: tsort names the modules of each loop on stderr
loops=$(sort -u "$edges" | tsort 2>&1 >/dev/null | sed -n 's/^tsort: //p')
if [ -n "$loops" ]; then
	echo "modules that include each other (a circle):"
	printf '%s\n' "$loops"
	bad=1
fi
exit $bad
