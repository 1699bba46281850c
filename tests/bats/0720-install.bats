#!/usr/bin/env bats
# make install PREFIX=/usr DESTDIR=...: what lands where, and a program
# built against the installed libkeep with pkg-config.
# The install builds the release flavour (build/rel) if it is not current.

load helpers/common

ROOT="$BATS_TEST_DIRNAME/../.."

setup_file() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || return 0 # (skip in setup_file needs bats 1.9)
	export DEST="$BATS_FILE_TMPDIR/root"
	rm -rf "$DEST"
	make -C "$ROOT" -s install PREFIX=/usr DESTDIR="$DEST" >"$BATS_FILE_TMPDIR/make.log" 2>&1 ||
		{ tail -30 "$BATS_FILE_TMPDIR/make.log" >&3; return 1; }
}

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent: run with the fs suite"
}

@test "install: every command and keep-agent in bin/" {
	for c in "$ROOT"/cmd/*.c; do
		n=${c##*/}
		[ -x "$DEST/usr/bin/${n%.c}" ] || { echo "missing bin/${n%.c}"; false; }
	done
	[ -x "$DEST/usr/bin/keep-agent" ]
	run -0 "$DEST/usr/bin/lease-write" -h
	assert_output --partial "usage: lease-write"
}

@test "install: man pages (section 1 for every command, keep.yaml(5))" {
	for c in "$ROOT"/cmd/*.c keep-agent.c; do
		n=${c##*/}
		[ -f "$DEST/usr/share/man/man1/${n%.c}.1" ] || { echo "missing man1/${n%.c}.1"; false; }
	done
	[ -f "$DEST/usr/share/man/man5/keep.yaml.5" ]
}

@test "install: libkeep static and shared, headers, keep.pc" {
	[ -f "$DEST/usr/lib/libkeep.a" ]
	[ -f "$DEST/usr/lib/libkeep.so.0" ]
	[ "$(readlink "$DEST/usr/lib/libkeep.so")" = libkeep.so.0 ]
	run -0 objdump -p "$DEST/usr/lib/libkeep.so.0"
	assert_output --regexp 'SONAME +libkeep\.so\.0'
	# the public API (docs/design.md "Public API"), and nothing else
	for h in "$ROOT"/lib/base/*.h "$ROOT"/lib/codec/*.h "$ROOT"/lib/core/*.h \
		"$ROOT"/lib/store/store.h "$ROOT"/lib/driver/commit.h "$ROOT"/lib/local/holds.h; do
		rel=${h#"$ROOT"/lib/}
		[ -f "$DEST/usr/include/keep/$rel" ] || { echo "missing include/keep/$rel"; false; }
	done
	for h in store/s3_internal.h store/awscreds.h driver/ownrun.h local/config.h platform/clock.h; do
		[ ! -e "$DEST/usr/include/keep/$h" ] || { echo "internal $h installed"; false; }
	done
	# each installed header compiles on its own (its includes are installed too)
	for h in $(cd "$DEST/usr/include" && find keep -name '*.h'); do
		printf '#include <%s>\n' "$h" >"$BATS_TEST_TMPDIR/one.c"
		cc -std=c11 -D_GNU_SOURCE -Wall -Werror -fsyntax-only -I"$DEST/usr/include" "$BATS_TEST_TMPDIR/one.c" ||
			{ echo "$h does not compile alone"; false; }
	done
	[ -f "$DEST/usr/lib/pkgconfig/keep.pc" ]
}

@test "install: bash completion, systemd units with PREFIX paths, service user, alert rules, docs and runbooks" {
	[ -f "$DEST/usr/share/bash-completion/completions/keep" ]
	[ -L "$DEST/usr/share/bash-completion/completions/lease-write" ]
	for u in "$ROOT"/etc/systemd/*.service "$ROOT"/etc/systemd/*.timer; do
		[ -e "$u" ] || continue
		f="$DEST/usr/lib/systemd/system/${u##*/}"
		[ -f "$f" ] || { echo "missing ${u##*/}"; false; }
		run grep -n /usr/local/ "$f"
		[ "$status" -eq 1 ] || { echo "$output"; false; }
	done
	grep -q '^ExecStart=/usr/bin/keep-agent ' "$DEST/usr/lib/systemd/system/keep-agent@.service"
	[ -f "$DEST/usr/share/doc/keep/exit-codes.md" ]
	[ -f "$DEST/usr/share/doc/keep/keep.yaml" ]
	# the service user the units name, and the alert rules
	grep -q '^u keep ' "$DEST/usr/lib/sysusers.d/keep.conf"
	run -0 promtool check rules "$DEST/usr/share/keep/prometheus/keep-rules.yml"
	for r in "$ROOT"/docs/runbooks/*.md; do
		[ -f "$DEST/usr/share/doc/keep/runbooks/${r##*/}" ] || { echo "missing ${r##*/}"; false; }
	done
}

# A program using the installed headers and libkeep, compiled with the flags
# pkg-config gives for the installed keep.pc (its prefix moved into DEST).
@test "install: a C program builds with pkg-config --cflags --libs keep and runs (shared and static)" {
	command -v pkg-config >/dev/null || skip "pkg-config not installed"
	pc="$BATS_TEST_TMPDIR/pc"
	mkdir -p "$pc"
	sed "s|^prefix=.*|prefix=$DEST/usr|; s|^libdir=.*|libdir=$DEST/usr/lib|; s|^includedir=.*|includedir=$DEST/usr/include|" \
		"$DEST/usr/lib/pkgconfig/keep.pc" >"$pc/keep.pc"
	cat >"$BATS_TEST_TMPDIR/t.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <keep/base/buf.h>
#include <keep/codec/nodeobj.h>
#include <keep/core/timing.h>

int main(void)
{
	struct keep_buf b;

	keep_buf_init(&b, 1024);
	if (keep_buf_addf(&b, "node %s", "n1") != 0 || strcmp(b.data, "node n1") != 0)
		return 1;
	keep_buf_release(&b);
	puts("libkeep ok");
	return 0;
}
EOF
	run -0 env PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs keep
	flags=$output
	[[ "$flags" == *"-I$DEST/usr/include"* ]]
	run -0 cc -std=c11 -Wall -Werror "$BATS_TEST_TMPDIR/t.c" -o "$BATS_TEST_TMPDIR/t" $flags
	run -0 env LD_LIBRARY_PATH="$DEST/usr/lib" "$BATS_TEST_TMPDIR/t"
	[ "$output" = "libkeep ok" ]
	run -0 env LD_LIBRARY_PATH="$DEST/usr/lib" ldd "$BATS_TEST_TMPDIR/t"
	assert_output --partial "libkeep.so.0 => $DEST/usr/lib/libkeep.so.0"
	# static libkeep, its dependencies shared: keep.pc's Requires.private and
	# Libs.private (`pkg-config --static` would also want every static
	# dependency of libcurl, which Debian's -dev packages do not all ship)
	reqs=$(sed -n 's/^Requires.private: *//p' "$pc/keep.pc")
	privs=$(sed -n 's/^Libs.private: *//p' "$pc/keep.pc")
	run -0 cc -std=c11 -Wall -Werror "$BATS_TEST_TMPDIR/t.c" -o "$BATS_TEST_TMPDIR/ts" \
		$(env PKG_CONFIG_PATH="$pc" pkg-config --cflags keep) "$DEST/usr/lib/libkeep.a" \
		$(pkg-config --libs $reqs) $privs
	run -0 "$BATS_TEST_TMPDIR/ts"
	[ "$output" = "libkeep ok" ]
}

# lib/core links alone: a program calling the machines and the codecs builds
# with keep-core.pc (libkeep-core.a and libm only), needing no libcurl,
# OpenSSL, expat or libyaml (docs/design.md "Layers").
@test "install: libkeep-core.a links alone (keep-core.pc): the machines and the codecs, libc and libm only" {
	command -v pkg-config >/dev/null || skip "pkg-config not installed"
	pc="$BATS_TEST_TMPDIR/pc"
	mkdir -p "$pc"
	[ -f "$DEST/usr/lib/libkeep-core.a" ]
	sed "s|^prefix=.*|prefix=$DEST/usr|; s|^libdir=.*|libdir=$DEST/usr/lib|; s|^includedir=.*|includedir=$DEST/usr/include|" \
		"$DEST/usr/lib/pkgconfig/keep-core.pc" >"$pc/keep-core.pc"
	cat >"$BATS_TEST_TMPDIR/c.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <keep/core/acquire.h>
#include <keep/core/commit.h>
#include <keep/core/lease.h>
#include <keep/core/resolver.h>
#include <keep/codec/ownerrec.h>

int main(void)
{
	struct keep_timing t;
	struct keep_acquire a;
	struct keep_resolver r;
	struct keep_resolver_cfg c;
	struct keep_oact act;
	struct keep_owner_rec rec;
	const char *body = "wasmkeep-owner 1\nnobody\ngeneration 3\n";

	keep_timing_defaults(&t);
	keep_acquire_init(&a, "n1", "t/c/a", &t, 1000);
	keep_acquire_next(&a, 0, 0, &act);
	memset(&c, 0, sizeof(c));
	c.mode = KEEP_RES_PASS;
	c.t = t;
	keep_resolver_init(&r, &c);
	keep_resolver_next(&r, 0, 0, &act);
	keep_resolver_release(&r);
	if (keep_owner_rec_decode(body, strlen(body), &rec, NULL, 0) != 0 || rec.generation != 3)
		return 1;
	{
		/* the fenced commit: its machine, codec and SHA-256 are core too */
		struct keep_commit cm;
		struct keep_commit_cfg cc = {.key = "t/c/a", .generation = 1, .object = "app/x",
					     .data = "d", .len = 1, .timeout_ms = 1000};
		struct keep_cact ca;

		if (keep_commit_init(&cm, &cc) != 0)
			return 1;
		keep_commit_next(&cm, 0, &ca);
		if (ca.kind != KEEP_CACT_GRANT)
			return 1;
		keep_commit_release(&cm);
	}
	printf("%s %s\n", keep_outcome_name(KEEP_STORE_OK), keep_grant_name(KEEP_GRANT_RELEASING));
	return 0;
}
EOF
	run -0 env PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs keep-core
	[[ "$output" == *"-lkeep-core"* ]]
	run -0 cc -std=c11 -Wall -Werror "$BATS_TEST_TMPDIR/c.c" -o "$BATS_TEST_TMPDIR/c" \
		$(env PKG_CONFIG_PATH="$pc" pkg-config --cflags keep-core) "$DEST/usr/lib/libkeep-core.a" -lm
	run -0 "$BATS_TEST_TMPDIR/c"
	[ "$output" = "ok releasing" ]
	run -0 ldd "$BATS_TEST_TMPDIR/c"
	refute_output --regexp 'libcurl|libssl|libcrypto|libexpat|libyaml'
	# and the two commands that never touch the store do not link it either
	for c in owner-check lease-status; do
		run -0 ldd "$DEST/usr/bin/$c"
		refute_output --regexp 'libcurl|libssl|libcrypto|libexpat'
	done
}
