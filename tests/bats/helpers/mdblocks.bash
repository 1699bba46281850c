# keep — the ```sh blocks of a Markdown file, for the tests that run the
# documents' commands as written (tests/bats/0700-runbooks.bats: the
# runbooks; tests/bats/0701-readme.bats: the README). Load after
# helpers/common.
#
# A block's directives are HTML comments above it (a file's test-all:
# apply to each of its blocks):
#   <!-- test: D1; D2 -->   <!-- test-all: D -->
# what each directive means is the test's own.

# extract DIR FILE... : one directory per ```sh block under DIR (block.sh,
# where = FILE:LINE, directives = file-wide then block directives, one a line)
extract() {
	local out=$1
	shift
	awk -v out="$out" '
		function trim(s) { sub(/^[[:space:]]+/, "", s); sub(/[[:space:]]+$/, "", s); return s }
		function directives(s, dst,   n, i, parts) {
			n = split(s, parts, ";")
			for (i = 1; i <= n; i++) {
				parts[i] = trim(parts[i]); sub(/^needs[[:space:]]+/, "", parts[i])
				if (parts[i] != "") dst = dst parts[i] "\n"
			}
			return dst
		}
		FNR == 1 { fileall = ""; pending = ""; inblock = 0 }
		!inblock && /^[[:space:]]*<!--[[:space:]]*test-all:.*-->[[:space:]]*$/ {
			s = $0; sub(/^[[:space:]]*<!--[[:space:]]*test-all:/, "", s); sub(/-->[[:space:]]*$/, "", s)
			fileall = directives(s, fileall); next
		}
		!inblock && /^[[:space:]]*<!--[[:space:]]*test:.*-->[[:space:]]*$/ {
			s = $0; sub(/^[[:space:]]*<!--[[:space:]]*test:/, "", s); sub(/-->[[:space:]]*$/, "", s)
			pending = directives(s, pending); next
		}
		!inblock && /^[[:space:]]*```sh[[:space:]]*$/ {
			inblock = 1; n++
			indent = $0; sub(/```.*/, "", indent)
			dir = sprintf("%s/%03d", out, n)
			system("mkdir -p \"" dir "\"")
			printf "%s:%d\n", FILENAME, FNR > (dir "/where")
			printf "%s%s", fileall, pending > (dir "/directives")
			printf "" > (dir "/block.sh")
			pending = ""; next
		}
		inblock && /^[[:space:]]*```[[:space:]]*$/ {
			inblock = 0; close(dir "/block.sh"); close(dir "/where"); close(dir "/directives"); next
		}
		inblock {
			line = $0
			if (indent != "" && index(line, indent) == 1) line = substr(line, length(indent) + 1)
			print line > (dir "/block.sh")
		}
		!inblock && /^[[:space:]]*```/ { pending = "" }
	' "$@"
}

