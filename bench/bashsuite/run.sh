#!/bin/sh
# Runs bash's own test suite through `bash -s` and through a spear-shell session, and through
# `bash -c "$(cat UNIT)"` and `spear-shell -c "$(cat UNIT)"`, and counts the test units
# (tests/*.tests and tests/*.sub of bash's source) on which both sides agree: the same stdout and
# the same exit status (stderr differs by design: bash says `bash: line N:` where a
# session says `spear-shell: line N:`, docs/shell.md). The source is fetched with apt-get from
# the deb-src twin of this system's own Debian sources, into a directory outside the repository;
# nothing of it is committed.
#
#   bench/bashsuite/run.sh [SPEAR_SHELL]    (default: bin/spear-shell)
#
# Environment: BASHSUITE_DIR (default /tmp/spear-bashsuite) keeps the source between runs;
# BASHSUITE_TIMEOUT (seconds per run, default 10); BASHSUITE_ONLY (a shell pattern of unit
# names); BASHSUITE_MODE: s (a session: the unit on stdin), c (the unit as the -c string, stdin
# /dev/null) or both (the default; a count for each). Nested shells the tests start (THIS_SH) are bash on both sides: what is compared is
# the top-level session. Exit status: 0 when every unit agrees, 1 when some differ, 2 when the
# source cannot be had (offline, no apt-get, no Debian sources).
set -u
spear=${1:-bin/spear-shell}
case $spear in /*) ;; *) spear=$(pwd)/$spear ;; esac
dir=${BASHSUITE_DIR:-/tmp/spear-bashsuite}
limit=${BASHSUITE_TIMEOUT:-10}
only=${BASHSUITE_ONLY:-*}
modes=${BASHSUITE_MODE:-both}
[ "$modes" = both ] && modes="s c"
for mode in $modes; do
	case $mode in s | c) ;; *) echo "bashsuite: BASHSUITE_MODE: s, c or both" >&2; exit 2 ;; esac
done
[ -x "$spear" ] || { echo "bashsuite: $spear: not an executable (make build first)" >&2; exit 2; }

fetch() {
	command -v apt-get >/dev/null || { echo "bashsuite: apt-get not found" >&2; return 1; }
	src=
	for f in /etc/apt/sources.list.d/*.sources; do
		grep -q '^Types: deb$' "$f" 2>/dev/null && src="$src $f"
	done
	[ -n "$src" ] || { echo "bashsuite: no deb822 Debian sources under /etc/apt/sources.list.d" >&2; return 1; }
	mkdir -p "$dir/apt/etc" "$dir/apt/lists/partial" || return 1
	for f in $src; do
		sed 's/^Types: deb$/Types: deb-src/' "$f" > "$dir/apt/etc/$(basename "$f")"
	done
	opts="-q -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$dir/apt/etc -o Dir::State::Lists=$dir/apt/lists"
	# shellcheck disable=SC2086
	apt-get $opts update >"$dir/apt/log" 2>&1 &&
		(cd "$dir" && apt-get $opts source --download-only bash >>"$dir/apt/log" 2>&1) || {
		echo "bashsuite: apt-get could not fetch bash's source (offline?); see $dir/apt/log" >&2
		return 1
	}
	(cd "$dir" && tar xzf bash_*.orig.tar.gz) || return 1
}

tests=$(ls -d "$dir"/bash-*/tests 2>/dev/null | head -n 1)
if [ -z "$tests" ]; then
	fetch || exit 2
	tests=$(ls -d "$dir"/bash-*/tests | head -n 1)
fi
out=$dir/out
rm -rf "$out" && mkdir -p "$out"

run() { # SIDE UNIT MODE ARGV...: stdout and status of one run in the tests directory; mode s
	# gives the unit on stdin, mode c as the last argument (the -c string), with stdin /dev/null
	side=$1 unit=$2 mode=$3
	shift 3
	(cd "$tests" && if [ "$mode" = c ]; then set -- "$@" "$(cat "$unit")"; exec </dev/null; else exec <"$unit"; fi &&
		THIS_SH=/bin/bash BASH_TSTOUT=$out/$side.tstout SPEAR_ISOLATION=none \
		timeout -k 2 "$limit" "$@" >"$out/$mode.$side.$unit.out" 2>/dev/null
	echo "status $?" >>"$out/$mode.$side.$unit.out")
}

failed=0
for mode in $modes; do
	agree=0 total=0
	for path in "$tests"/*.tests "$tests"/*.sub; do
		unit=$(basename "$path")
		case $unit in $only) ;; *) continue ;; esac
		total=$((total + 1))
		run bash "$unit" "$mode" /bin/bash "-$mode"
		run spear "$unit" "$mode" "$spear" "-$mode"
		if cmp -s "$out/$mode.bash.$unit.out" "$out/$mode.spear.$unit.out"; then
			agree=$((agree + 1))
		else
			echo "differs ($mode): $unit"
		fi
	done
	if [ "$mode" = s ]; then
		echo "bashsuite: $agree of $total units agree (bash -s and a spear-shell session; outputs in $out)"
	else
		echo "bashsuite: $agree of $total units agree (bash -c and spear-shell -c; outputs in $out)"
	fi
	[ "$agree" -eq "$total" ] || failed=1
done
exit $failed
