#!/usr/bin/env bash
# The demo: a scripted agent turn through spear-shell. Usage: run.sh BINDIR
# BINDIR holds spear-shell, spear-shell-schema and spear-demo-notes; this script builds nothing:
#   CGO_ENABLED=0 go build -trimpath -o bin/ ./cmd/... ./testdata/demo/spear-demo-notes && bash testdata/demo/run.sh bin
set -euo pipefail

bin=${1:?usage: run.sh BINDIR}
bin=$(cd "$bin" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for b in spear-shell spear-mcp spear-demo-notes; do
	if [ ! -x "$bin/$b" ]; then
		echo "run.sh: $bin/$b is missing; build it with: CGO_ENABLED=0 go build -trimpath -o $bin/ ./cmd/... ./testdata/demo/spear-demo-notes" >&2
		exit 1
	fi
done

# A home with two projects (roots absolute) and a turn manifest, in a temporary directory.
root=$(mktemp -d "${TMPDIR:-/tmp}/spear-demo.XXXXXX")
# SPEAR_DEMO_AUDIT=FILE keeps the turn's audit trail there (spear-shell --report reads it).
trap '[ -z "${SPEAR_DEMO_AUDIT:-}" ] || cp "$root/audit.jsonl" "$SPEAR_DEMO_AUDIT"; rm -rf "$root"' EXIT
mkdir -p "$root/home" "$root/webapp/src" "$root/firmware"
chmod 755 "$root" "$root/home"
for f in projects.json capabilities.json; do
	sed -e "s|@ROOT@|$root|g" -e "s|@BIN@|$bin|g" "$here/home/$f" >"$root/home/$f"
done
# A turn id of this run's own: a turn's ended mark and pinned workspace outlive it in the state
# parent (SPEC 12), so a run reusing an earlier run's id would find that turn ended and its
# workspace (another temporary directory) pinned.
sed -e "s|@ROOT@|$root|g" -e "s|@TURN@|demo-${root##*.}|g" "$here/turn.json" >"$root/turn.json"
chmod 644 "$root/home/"*.json "$root/turn.json"
echo "# webapp" >"$root/webapp/README.md"

export SPEAR_HOME="$root/home" SPEAR_TURN_MANIFEST="$root/turn.json"
unset SPEAR_CAPABILITIES_FILE SPEAR_AUDIT_FILE
cd "$root/webapp"

say() { if [ -t 1 ]; then printf '\n\033[1m== %s\033[0m\n' "$*"; else printf '\n== %s\n' "$*"; fi; }

say "spear-shell --context (what the harness puts in the model's context)"
"$bin/spear-shell" --context 2>&1

say "a scripted turn on stdin: list, search, describe, a READ, a refused WRITE, a WRITE under confirm with no approver, ls, an unavailable provider"
"$bin/spear-shell" 2>&1 <<'TURN' || true
spear-capability list
echo "-> exit $?"
spear-capability search find a note by a word
echo "-> exit $?"
spear-capability describe notes/search_notes
echo "-> exit $?"
spear-capability invoke notes/search_notes '{"query": "spear"}'
echo "-> exit $?"
spear-capability invoke notes/create_note '{"title": "todo", "body": "write the demo"}'
echo "-> exit $?"
spear-capability invoke journal/append_entry '{"entry": "shipped the demo"}'
echo "-> exit $?"
ls
echo "-> exit $?"
spear-capability invoke weather/forecast '{"city": "Oslo"}'
echo "-> exit $?"
TURN

say "the MCP face: spear-mcp serves the same turn to a terminal that speaks MCP (initialize, then spear_search)"
{ printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spear_search","arguments":{"query":"note"}}}'
	sleep 2; } | "$bin/spear-mcp" 2>&1 | grep '"id":2' || true

say "the audit trail ($root/audit.jsonl): events recorded"
grep -o '"event":"[a-z_]*"' "$root/audit.jsonl" | sed 's/"event":"\(.*\)"/\1/' | sort | uniq -c
