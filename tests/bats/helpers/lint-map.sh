#!/bin/sh
# docs/design.md "Where each rule of ADR 0020 lives": every row of its
# tables names exactly one function in the `function` column, a public
# function of lib/core (declared in a lib/core/*.h), and the `driven by`
# column names no lib/core function (the machines are named in words).
# Prints each offending row and exits 1; exits 0 when every row keeps it.
# Usage: lint-map.sh ROOT [DESIGN_MD]
root=${1:?usage: lint-map.sh ROOT [DESIGN_MD]}
doc=${2:-$root/docs/design.md}
decls=$(mktemp) || exit 2
trap 'rm -f "$decls"' EXIT
# every identifier declared as a function in a core header: NAME( at the
# start of a declaration, after its return type
sed -n 's/^[a-z].*[ *]\(keep_[a-z0-9_]*\)(.*/\1/p' "$root"/lib/core/*.h | sort -u >"$decls"
awk -v decls="$decls" '
BEGIN { while ((getline l < decls) > 0) core[l] = 1 }
/^## Where each rule of ADR 0020 lives/ { inmap = 1; next }
/^## / && inmap { inmap = 0 }
!inmap || !/^\| / || /^\| rule \|/ { next }
{
	rows++
	n = split($0, col, "|")
	# col[1] is empty; rule, section, function, driven by: col[2..5]
	if (n != 6) { print "not 4 columns: " $0; bad++; next }
	f = col[4]; nf = 0; name = ""
	while (match(f, /`keep_[a-z0-9_]*`/)) {
		nf++; name = substr(f, RSTART + 1, RLENGTH - 2); f = substr(f, RSTART + RLENGTH)
	}
	if (nf != 1) { print "names " nf " functions, not one: " $0; bad++; next }
	if (!(name in core)) { print "not a public lib/core function: " name; bad++; next }
	d = col[5]
	while (match(d, /keep_[a-z0-9_]*/)) {
		id = substr(d, RSTART, RLENGTH); d = substr(d, RSTART + RLENGTH)
		if (id in core) { print "driven by names a lib/core function (" id "): " $0; bad++ }
	}
}
END {
	if (rows < 40) { print "the map has " rows " rows: not found?"; exit 1 }
	exit bad ? 1 : 0
}' "$doc"
