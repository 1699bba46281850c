# tests/bats/0001-lint.bats: half-assertions (awk -f lint-and.awk FILE...)
#
# Under bats' `set -e`, every command of an `A && B` list but the last is
# exempt: `[ "$n" -gt 5 ] && [ "$n" -lt 35 ]` in a test body passes when n
# is 3, and so does `grep -q x f && [ ... ]` when grep finds nothing. A
# statement whose last part is an assertion ([ ], [[ ]], (( )), test, grep,
# assert_*, refute_*) after an `&&` is refused:
#   - anywhere inside an @test body;
#   - inside a function, unless it is the function's last statement (there
#     the list's status is the function's status, which is what a
#     predicate such as `bg_running` or a wait_for condition returns).
# Not refused: a list with `||` (`[ A ] && [ B ] || { echo ...; false; }`
# handles the failure), a condition (if, elif, while, until), and a list
# whose last part is an action (`[ x ] && break`, `[ x ] && want=111`).
# Write two lines (`[ A ]`, then `[ B ]`), or `if A; then B; fi` for an
# assertion that applies only when A holds.
# unquote(S): S with the text of its quoted strings blanked (an && or a ]
# inside quotes is data)
function unquote(s,   out, i, ch, q) {
	out = ""
	q = ""
	for (i = 1; i <= length(s); i++) {
		ch = substr(s, i, 1)
		if (q == "") {
			if (ch == "\\") { out = out substr(s, i, 2); i++; continue }
			if (ch == "'" || ch == "\"") { q = ch; out = out ch "x"; continue }
			out = out ch
		} else if (q == "\"" && ch == "\\") {
			i++
		} else if (ch == q) {
			out = out ch
			q = ""
		}
	}
	return out
}
function flush(   last, s, parts, n, tail) {
	if (stmt == "") return
	s = unquote(stmt)
	stmt = ""
	if (s !~ /&&/ || s ~ /\|\|/) return
	if (s ~ /^[[:space:]]*(if|elif|while|until)[[:space:]]/) return
	if (s ~ /(then|do)[[:space:]]*$/) return
	n = split(s, parts, /&&/)
	tail = parts[n]
	sub(/^[[:space:]]+/, "", tail)
	sub(/[[:space:]]*;?[[:space:]]*\}?[[:space:]]*$/, "", tail)
	if (tail !~ /^(\[\[? .*\]\]?|\(\(.*\)\)|test[[:space:]].*|grep[[:space:]].*|(assert|refute)_[a-z_]+.*)$/) return
	if (!intest) {
		# a one-line function `f() { [ A ] && [ B ]; }`, or the last
		# statement before the function's closing brace
		if (sline ~ /\}[[:space:]]*$/ && sline ~ /\(\)[[:space:]]*\{/) return
		pend_line = sfnr; pend_text = sline; pending = 1
		return
	}
	report(sfnr, sline)
}
function report(l, t) {
	sub(/^[[:space:]]+/, "", t)
	print FILENAME ":" l ": half-assertion (only the last part of an && list can fail the test): " t
	bad++
}
FNR == 1 { intest = 0; infn = 0; stmt = ""; pending = 0; heredoc = "" }
{
	line = $0
	if (heredoc != "") {
		t = line
		sub(/^\t+/, "", t)
		if (t == heredoc) heredoc = ""
		next
	}
	# a statement pending the "last in its function" check: the next
	# non-blank, non-comment line must close the function
	if (pending && line !~ /^[[:space:]]*(#.*)?$/) {
		if (line !~ /^[[:space:]]*\}/) report(pend_line, pend_text)
		pending = 0
	}
	if (line ~ /^@test /) { intest = 1; infn = 0 }
	else if (line ~ /^[A-Za-z_][A-Za-z_0-9]*\(\)/) { intest = 0; infn = 1 }
	else if (line ~ /^\}/) { intest = 0; infn = 0 }
	# a here-document (not a here-string, <<<): skip its body
	if (line ~ /(^|[^<])<<-?[[:space:]]*['"]?[A-Za-z_]+['"]?/) {
		h = line
		sub(/.*[^<]<<-?[[:space:]]*['"]?/, "", h)
		sub(/[^A-Za-z_].*/, "", h)
		heredoc = h
	}
	if (!intest && !infn) next
	if (line ~ /^[[:space:]]*#/) next
	# drop a trailing comment (a # after a blank, outside ${#...})
	c = line
	sub(/[[:space:]]#[^'"}]*$/, "", c)
	if (stmt == "") { sfnr = FNR; sline = line; stmt = c }
	else { stmt = stmt " " c; sline = sline " " line }
	if (c ~ /(&&|\\)[[:space:]]*$/) { sub(/\\[[:space:]]*$/, "", stmt); next }
	flush()
	# a one-line function ends where it starts
	if (infn && line ~ /^[A-Za-z_][A-Za-z_0-9]*\(\).*\}[[:space:]]*$/) infn = 0
}
END { exit bad > 0 }
