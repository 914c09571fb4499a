# Every target is one of CI's lines (.ci/run). Binaries go to bin/.
GO       ?= go
BIN      ?= bin
FUZZTIME ?= 10s

.PHONY: build test deps lint fuzz bench demo tidy-check harness-deps harness-check harness-capture

# The four binaries (spear-shell, spear-shell-schema, spear-mcp, spear-shell-import), side by side.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/ ./cmd/...

# What the tests need and a fresh machine lacks: the npm MCP servers for the interop tests and
# the MCP Inspector for spear-mcp's (exact versions from each lockfile, installed again whenever
# the lockfile is newer than the install), bubblewrap for the isolation tests and Debian's
# chromium for the turn report's page (opened headless).
deps:
	@command -v bwrap >/dev/null || { echo "installing bubblewrap"; \
		if [ "$$(id -u)" = 0 ]; then apt-get install -y -qq bubblewrap >/dev/null || { apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; }; \
		else sudo apt-get install -y -qq bubblewrap >/dev/null; fi; }
	@command -v chromium >/dev/null || { echo "installing chromium"; \
		if [ "$$(id -u)" = 0 ]; then apt-get install -y -qq chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; \
		else sudo apt-get install -y -qq chromium >/dev/null; fi; }
	@[ testdata/interop/node_modules/.package-lock.json -nt testdata/interop/package-lock.json ] || \
		npm ci --prefix testdata/interop --no-audit --no-fund --loglevel=error
	@[ testdata/inspector/node_modules/.package-lock.json -nt testdata/inspector/package-lock.json ] || \
		npm ci --prefix testdata/inspector --no-audit --no-fund --loglevel=error

test: deps
	SPEAR_REQUIRE_INTEROP=1 SPEAR_REQUIRE_BWRAP=1 SPEAR_REQUIRE_BROWSER=1 $(GO) test -race -timeout 12m ./... ./testdata/testkit

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$out" ] || { echo "gofmt needed: $$out"; exit 1; }
	$(GO) vet ./... ./testdata/testkit
	$(GO) tool staticcheck ./... ./testdata/testkit

# Short runs of every fuzz target (each for FUZZTIME); .ci/fuzz says why one may run twice.
fuzz:
	GO=$(GO) .ci/fuzz $(FUZZTIME)

bench: build
	SPEAR_ISOLATION=none $(GO) run ./bench -bin $(BIN)

# A scripted turn on the bundled example provider (testdata/demo).
demo: build
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/ ./testdata/demo/spear-demo-notes
	bash testdata/demo/run.sh $(abspath $(BIN))

tidy-check:
	$(GO) mod tidy -diff

# The real agent terminals (testdata/harness/package.json pins them), installed once into a cache.
HARNESS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/spear-harness

harness-deps:
	@mkdir -p $(HARNESS_CACHE)
	@cmp -s testdata/harness/package.json $(HARNESS_CACHE)/installed.json || { \
		echo "installing the pinned agent terminals into $(HARNESS_CACHE)"; \
		cp testdata/harness/package.json $(HARNESS_CACHE)/package.json && \
		npm install --prefix $(HARNESS_CACHE) --no-audit --no-fund --no-package-lock --loglevel=error && \
		cp testdata/harness/package.json $(HARNESS_CACHE)/installed.json; }

# Each terminal driven through a scripted fake model API with spear-shell as its shell
# (docs/harnesses.md), in both isolation modes; one line per terminal and mode. Then the MCP
# rows: Claude Code, Codex and Gemini with spear-mcp registered as well (docs/mcp.md).
harness-check: build harness-deps
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/ ./testdata/demo/spear-demo-notes
	$(GO) vet ./testdata/harness/...
	$(GO) test -race ./testdata/harness/...
	$(GO) run ./testdata/harness/check -bin $(BIN) -cli $(HARNESS_CACHE)
	@# The terminal-session harnesses (Python, not installable here): their protocols replicated.
	@out=$$($(GO) test -count=1 ./cmd/spear-shell -run 'TestScripts/term_(swerex|openhands|terminalbench)$$' -v 2>&1); \
		status=$$?; printf '%s\n' "$$out" | grep -E '^ *--- |^(ok|FAIL)'; exit $$status

# Re-record the envelope texts each terminal sends (testdata/harness/captured) with a recorder shell.
harness-capture: build harness-deps
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/ ./testdata/demo/spear-demo-notes
	$(GO) run ./testdata/harness/check -bin $(BIN) -cli $(HARNESS_CACHE) -capture testdata/harness/captured
