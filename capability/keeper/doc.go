// Package keeper is a turn's keeper (SPEC 12), layer 4 of the capability side: the process
// that keeps the turn's providers running between -c answers, its protocol over the turn's
// unix socket, the client an answering process (or the MCP face) uses to reach it, and its
// start and end (spear-shell --end-turn). It runs providers only: every check, refusal and
// capability record stays with the answering process.
//
// It imports, of this module, capability/providers, capability/provlink, policy, mcpstdio and
// audit: never capability itself, the broker, or anything under interp/.
package keeper
