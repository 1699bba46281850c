#!/usr/bin/env bats
# The systemd units in etc/systemd/ pass `systemd-analyze verify`, and the
# agent's unit has what docs/operations.md promises (tests/bats/0711: the
# notify messages it sends).
#
# verify needs every ExecStart binary to exist and every man: link of
# Documentation= to resolve, so the units are checked as copies in a temp
# directory with /usr/local/bin/ pointed at the build under test and MANPATH
# at man/. Templates are verified through an instance (NAME@n1.service).
# Skipped where systemd-analyze is absent (scripts/install-deps.sh installs
# systemd for CI).

load helpers/common

ROOT="$BATS_TEST_DIRNAME/../.."

setup() {
	[ "${KEEP_TEST_STORE:-fs}" = fs ] || skip "store-independent: run with the fs suite"
	command -v systemd-analyze >/dev/null || skip "systemd-analyze not installed"
	U="$BATS_TEST_TMPDIR/units"
	M="$BATS_TEST_TMPDIR/man"
	mkdir -p "$U" "$M/man1" "$M/man5"
	for f in "$ROOT"/etc/systemd/*.service "$ROOT"/etc/systemd/*.timer; do
		[ -e "$f" ] || continue
		sed "s|/usr/local/bin/|$KEEP_BINDIR/|g" "$f" >"$U/${f##*/}"
	done
	cp "$ROOT"/man/*.1 "$M/man1/"
	cp "$ROOT"/man/*.5 "$M/man5/"
}

# unit_names : what to verify, one a line (templates as instance n1)
unit_names() {
	local f n
	for f in "$U"/*; do
		n=${f##*/}
		case $n in
		*@.service | *@.timer) echo "${n%@.*}@n1.${n##*.}" ;;
		*) echo "$n" ;;
		esac
	done
}

@test "systemd: every unit in etc/systemd passes systemd-analyze verify, without a warning" {
	[ -n "$(ls "$U")" ]
	cd "$U"
	for n in $(unit_names); do
		run --separate-stderr env MANPATH="$M" SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=yes "$n"
		[ "$status" -eq 0 ] && [ -z "$stderr" ] || { echo "$n: exit $status: $stderr"; false; }
	done
}

@test "systemd: verify does catch a broken unit (the check is live)" {
	cd "$U"
	sed 's|^ExecStart=.*|ExecStart=/nonexistent/keep-agent --node-id %i|' keep-agent@.service >broken@.service
	run --separate-stderr env MANPATH="$M" systemd-analyze verify broken@n1.service
	[ "$status" -ne 0 ] || [ -n "$stderr" ]
	rm -f broken@.service
}

@test "systemd: keep-agent@.service: config per instance, notify, its own user, restart on failure, hardening, state dir" {
	f="$ROOT/etc/systemd/keep-agent@.service"
	for want in 'Environment=KEEP_CONFIG=/etc/keep/%i.yaml' 'ExecStart=/usr/local/bin/keep-agent --node-id %i' \
		'Type=notify' 'NotifyAccess=all' 'User=keep' 'Group=keep' 'StateDirectory=keep' \
		'Restart=on-failure' 'RestartPreventExitStatus=100' 'KillSignal=SIGTERM' \
		'NoNewPrivileges=yes' 'ProtectSystem=strict' 'PrivateTmp=yes' 'ReadWritePaths=/var/lib/keep'; do
		grep -qxF -- "$want" "$f" || { echo "missing: $want"; false; }
	done
	grep -qE '^RestartSec=[0-9]+s?$' "$f"
	grep -qE '^TimeoutStopSec=[0-9]+s?$' "$f"
	grep -qE '^TimeoutStartSec=[0-9]+(s|min)$' "$f"
	# the user the units run as is created by the sysusers file installed with them
	grep -qx 'User=keep' "$ROOT/etc/systemd/keep-forget.service"
	grep -q '^u keep - ' "$ROOT/etc/sysusers.d/keep.conf"
}
