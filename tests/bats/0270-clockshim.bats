#!/usr/bin/env bats
# The test clock shim (tests/preload/clockshim.c) really moves the clocks of
# the sanitizer build's processes: their own calls, lib/platform/clock.c's, and
# libcurl's and OpenSSL's, through the ASan runtime's interceptors (the
# shim comes first in the lookup order; it reads the real clocks with raw
# system calls, so the vDSO is not in the way). The clock tests
# (0271–0289) rely on it. Local only (no store), so run once per store
# run, cheaply.

# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
load helpers/common
load helpers/clock

setup() { keep_setup; }
teardown() { keep_teardown; }

# clock NAME LINE : NAME=value from a `clocks` line
clock() { printf '%s\n' "$2" | sed -n "s/.*\\b$1=\\([0-9-]*\\).*/\\1/p"; }

# shifted NAME OFFSET PLAIN_NAME [DIV] : a `clocks` run of p (under the
# shim) read NAME, a plain run before and after it read PLAIN_NAME: the
# shimmed value is OFFSET from the plain clock at a moment between the
# two plain runs (DIV: 1000 for seconds)
shifted() {
	local div=${4:-1} p0 s p1 v0 v1 w
	p0=$("$KEEP_TOOLDIR/clocks")
	s=$(shimmed p "$KEEP_TOOLDIR/clocks")
	p1=$("$KEEP_TOOLDIR/clocks")
	v0=$(clock "$3" "$p0")
	v1=$(clock "$3" "$p1")
	w=$(($(clock "$1" "$s") - $2))
	if [ "$w" -lt $((v0 - 2 / div)) ] || [ "$w" -gt $((v1 + 2 / div + 1)) ]; then
		echo "$1: $(clock "$1" "$s") - ($2) = $w, not within [$v0, $v1] of $3" >&2
		return 1
	fi
}

@test "clockshim: each clock of a sanitizer-built program moves by its offset, and follows a change of the file" {
	shim_set p monotonic_ms=-7000 boottime_ms=3000 realtime_ms=20000
	shifted monotonic_ms -7000 monotonic_ms
	shifted boottime_ms 3000 boottime_ms
	shifted realtime_ms 20000 realtime_ms
	shifted gettimeofday_ms 20000 realtime_ms
	shifted time_s 20 time_s 1000
	# lib/platform/clock.c (linked into the program) reads the same shifted clocks
	shifted keep_boot_ms 3000 boottime_ms
	shifted keep_wall_ms 20000 realtime_ms
	# a new offset is seen at the next read
	shim_set p realtime_ms=-20000
	shifted realtime_ms -20000 realtime_ms
	shifted monotonic_ms 0 monotonic_ms
	refute_sanitizer_reports
}

@test "clockshim: clock_nanosleep with TIMER_ABSTIME on a shifted clock sleeps the real time asked" {
	shim_set p monotonic_ms=-5000 boottime_ms=4000 realtime_ms=-20000
	for c in monotonic boottime realtime; do
		run -0 shimmed p "$KEEP_TOOLDIR/clocks" sleep "$c" 300
		ms=${output#slept_ms=}
		[ "$ms" -ge 295 ] && [ "$ms" -lt 1500 ] || { echo "$c: slept $ms ms" >&2; false; }
	done
}

@test "clockshim: pthread_cond_timedwait on a CLOCK_MONOTONIC condition variable waits the real time asked under a shifted clock" {
	# a suspend's negative monotonic offset would put the deadline in the
	# past on the kernel's clock (a wait that returns at once, and a
	# caller that spins); a positive one, later than asked
	for off in -5000 0 4000; do
		shim_set p monotonic_ms="$off" realtime_ms=-20000
		run -0 shimmed p "$KEEP_TOOLDIR/clocks" condwait 300
		ms=$(clock waited_ms "$output")
		[ "$ms" -ge 295 ] && [ "$ms" -lt 1500 ] || { echo "monotonic_ms=$off: waited $ms ms ($output)" >&2; false; }
	done
}

@test "clockshim: the program's, libcurl's and OpenSSL's clock calls bind to the shim, not to ASan's interceptor or libc" {
	shim_set p realtime_ms=1000
	run -0 --separate-stderr env LD_DEBUG=bindings \
		ASAN_OPTIONS="${ASAN_OPTIONS}:verify_asan_link_order=0" \
		KEEP_CLOCKSHIM_FILE="$BATS_TEST_TMPDIR/p.clock" LD_PRELOAD="$SHIM" \
		"$KEEP_TOOLDIR/clocks"
	b=$stderr
	for lib in clocks libcurl.so libcrypto.so; do
		printf '%s\n' "$b" | grep -E "binding file [^ ]*${lib}[^ ]* .* to [^ ]*clockshim\.so .*symbol .clock_gettime'" >/dev/null ||
			{ echo "$lib: clock_gettime not bound to the shim" >&2; printf '%s\n' "$b" | grep "clock_gettime'" >&2; false; }
	done
	# nobody but the sanitizer runtime itself reaches libc's clock_gettime
	run -1 grep -E "binding file [^ ]*(clocks|libcurl|libcrypto)[^ ]* .* to [^ ]*libc\.so[^ ]* .*symbol .clock_gettime'" <<<"$b"
}
