#!/usr/bin/env bash
# Regenerates the terminals' settings files kept here with the pinned terminals' own
# `mcp add` (make harness-deps installs them into ~/.cache/spear-harness), in a scratch HOME.
# Not run by CI. The servers' paths are written under /INTEROP, which the transcripts
# (testdata/script/import_*.txtar) replace with testdata/interop.
# What no CLI of these versions writes is added by hand, and said so below:
#   Claude Code disables a server from its /mcp menu only (projects[DIR].disabledMcpServers);
#   Codex has no command to disable a server or filter its tools (enabled, disabled_tools);
#   Gemini 0.61.0's `gemini mcp disable NAME` answers "not found" for a server of the user's
#   settings in a fresh HOME, so its file (mcp-server-enablement.json) is written by hand.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cli=${HARNESS_CACHE:-$HOME/.cache/spear-harness}/node_modules/.bin
scratch=/tmp/spear-import-gen
rm -rf "$scratch"
export PATH=$cli:$PATH
mem=/INTEROP/node_modules/@modelcontextprotocol/server-memory/dist/index.js
every=/INTEROP/node_modules/@modelcontextprotocol/server-everything/dist/index.js

# Claude Code: user-scope servers (stdio with env and args, http with a header, sse, one whose
# argument and env name variables), a local-scope one, one disabled in a project.
export HOME=$scratch/claude-code
mkdir -p "$HOME" && cd "$HOME"
claude mcp add -s user mem -e MEMORY_FILE_PATH=/tmp/spear-import-gen/memory.jsonl -e API_TOKEN=tok-claude-1234567890 -- node $mem
claude mcp add -s user Every_Thing -- node $every stdio
claude mcp add -s user --transport http sentry https://mcp.example.com/mcp --header "Authorization: Bearer secret-header-value"
claude mcp add -s user --transport sse oldsse https://sse.example.com/sse
claude mcp add -s user varref -e GITHUB_TOKEN='${GITHUB_TOKEN}' -- npx -y some-server '${HOME}/x'
claude mcp add -s user off -- node $every stdio
claude mcp add -s local localonly -- node /INTEROP/x.js
# By hand: what Claude Code's /mcp menu writes to disable "off" in this project.
python3 - "$HOME/.claude.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["projects"][next(iter(d["projects"]))]["disabledMcpServers"] = ["off"]
json.dump(d, open(p, "w"), indent=2)
PY
mkdir -p "$here/claude-code" && cp "$HOME/.claude.json" "$here/claude-code/.claude.json"

# Codex: stdio with env and args, a name with a capital, a streamable HTTP server, one whose env
# names a variable, one disabled, one with tool filters.
export HOME=$scratch/codex
mkdir -p "$HOME" && cd "$HOME"
codex mcp add mem --env MEMORY_FILE_PATH=/tmp/spear-import-gen/memory.jsonl --env API_TOKEN=tok-codex-1234567890 -- node $mem
codex mcp add Every_Thing -- node $every stdio
codex mcp add remote --url https://mcp.example.com/mcp --bearer-token-env-var REMOTE_TOKEN
codex mcp add varref --env GITHUB_TOKEN='${GITHUB_TOKEN}' -- npx -y some-server
codex mcp add off -- node $every stdio
# By hand: Codex's own keys for a disabled server and tool filters.
python3 - "$HOME/.codex/config.toml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace('[mcp_servers.off]\n', '[mcp_servers.off]\nenabled = false\n', 1)
s = s.replace('[mcp_servers.Every_Thing]\n', '[mcp_servers.Every_Thing]\nenabled_tools = ["echo", "get-sum", "toggle-simulated-logging"]\ndisabled_tools = ["get-sum"]\n', 1)
open(p, "w").write(s)
PY
mkdir -p "$here/codex/.codex" && cp "$HOME/.codex/config.toml" "$here/codex/.codex/config.toml"

# Gemini CLI: stdio with env, excluded tools, trust and a timeout; one with included tools;
# http with a header; sse; one whose env names a variable; one disabled.
export HOME=$scratch/gemini
mkdir -p "$HOME/work" && cd "$HOME/work"
gemini mcp add -s user -e MEMORY_FILE_PATH=/tmp/spear-import-gen/memory.jsonl -e API_TOKEN=tok-gemini-1234567890 --exclude-tools delete_entities,create_entities --trust --timeout 20000 mem node $mem
gemini mcp add -s user every node $every stdio --include-tools echo get-sum
gemini mcp add -s user -t http -H "Authorization: Bearer secret-header-value" remote https://mcp.example.com/mcp
gemini mcp add -s user -t sse oldsse https://sse.example.com/sse
gemini mcp add -s user -e GITHUB_TOKEN='${GITHUB_TOKEN}' varref npx -y some-server
gemini mcp add -s user off node $every stdio
gemini mcp disable off || true
[ -f "$HOME/.gemini/mcp-server-enablement.json" ] || echo '{"off": {"enabled": false}}' > "$HOME/.gemini/mcp-server-enablement.json"
mkdir -p "$here/gemini/.gemini"
cp "$HOME/.gemini/settings.json" "$HOME/.gemini/mcp-server-enablement.json" "$here/gemini/.gemini/"
echo "regenerated $here/{claude-code,codex,gemini}"
