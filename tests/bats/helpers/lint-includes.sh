#!/usr/bin/env bash
# lint-includes.sh ROOT — the layers of lib/ (docs/design.md "Layers"),
# held by the #include "..." lines of ROOT/lib and ROOT/sim: a file may include only
# headers of its own layer or of a layer it uses, and no two modules
# (NAME.c with NAME.h) include each other, directly or through others.
# Prints one line per fault and exits 1; silent and 0 when the tree keeps
# the layers. Run by tests/bats/0001-lint.bats (with planted faults too).
#
# The layers, bottom up (the one place they are written as code; the
# table of docs/design.md says the same in words):
#   vocabulary  lib/{vocab,err,exitcode,buf,parse}
#   codecs      lib/{nodeobj,ownerrec,fenced,statefile,sha256}
#   core        lib/core/*          (sans I/O: docs/design.md)
#   platform    lib/{clock,log,line} (the real clocks, diagnostics, the line format)
#   store       lib/store/*
#   glue        every other file of lib/
# and sim/ (the simulator) may use only the core, the codecs and the
# vocabulary: the protocol it proves is lib/core's (docs/testing.md).
set -u
ROOT=${1:?usage: lint-includes.sh ROOT}
cd "$ROOT" || exit 2

# layer FILE : the layer of a path relative to ROOT
layer() {
	case $1 in
	lib/core/*) echo core ;;
	lib/store/*) echo store ;;
	lib/*/*) echo unknown ;;
	sim/*) echo sim ;;
	lib/*)
		local m=${1#lib/}
		m=${m%.*}
		case $m in
		vocab | err | exitcode | buf | parse) echo vocabulary ;;
		nodeobj | ownerrec | fenced | statefile | sha256) echo codecs ;;
		clock | log | line) echo platform ;;
		*) echo glue ;;
		esac
		;;
	*) echo outside ;;
	esac
}
# uses A B : layer A may include headers of layer B
uses() {
	case "$1:$2" in
	vocabulary:vocabulary) return 0 ;;
	codecs:codecs | codecs:vocabulary) return 0 ;;
	core:core | core:codecs | core:vocabulary) return 0 ;;
	platform:platform | platform:codecs | platform:vocabulary) return 0 ;;
	store:store | store:platform | store:core | store:codecs | store:vocabulary) return 0 ;;
	glue:*) [ "$2" != outside ] && [ "$2" != unknown ] && [ "$2" != sim ] ;;
	sim:sim | sim:core | sim:codecs | sim:vocabulary) return 0 ;;
	*) return 1 ;;
	esac
}

bad=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
while IFS= read -r f; do
	lf=$(layer "$f")
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
