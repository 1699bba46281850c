# tests/bats/0001-lint.bats: bats runs whose status nobody checks (awk -f lint-run.awk FILE...)
# every bats `run` without an exact status (-N or !) must be followed by a
# test of what it left: the next statement is a [ ], [[ ]], (( )), case,
# assert_* or refute_* that reads $status, $output, $lines or $stderr
function checked(l) {
	return l ~ /^[[:space:]]*(\[|\(\(|case[[:space:]]|assert_|refute_)/ &&
		l ~ /\$\{?(status|output|lines|stderr)/ || l ~ /^[[:space:]]*(assert_|refute_)/
}
FNR == 1 { pending = 0; cont = 0 }
{
	if (pending) {
		if ($0 ~ /^[[:space:]]*$/) next
		if (!checked($0)) { print FILENAME ":" pline ": run whose status nobody checks: " ptext; bad++ }
		pending = 0
	}
	if (cont) { cont = ($0 ~ /\\$/); if (!cont) pending = 1; next }
	if ($0 !~ /^[[:space:]]*run[[:space:]]/) next
	n = split($0, t, /[[:space:]]+/)
	exact = 0
	for (i = 1; i <= n; i++) if (t[i] == "run") break
	for (i++; i <= n; i++) {
		if (t[i] == "!" || t[i] ~ /^-[0-9]+$/) { exact = 1; break }
		# an exact status held in a variable: run "-$code", run -"$code"
		if (t[i] ~ /^"?-"?\$\{?[A-Za-z_][A-Za-z_0-9]*\}?"?$/) { exact = 1; break }
		if (t[i] !~ /^-/ && t[i] !~ /^"-/) break
	}
	if (exact) next
	pline = FNR; ptext = $0
	if ($0 ~ /\\$/) cont = 1; else pending = 1
}
END { exit bad > 0 }
