// Package providers is a turn's provider core, layer 2 of the capability side: the turn as
// one process loads it (manifest, registry, offer, audit trail, state directory and the scope
// pinned there), and the offered providers' start, trust checks, listing and calls. The keeper
// (capability/keeper), the answers (capability) and the MCP face all run on it.
//
// It imports, of this module, only policy, policy/lock, mcpstdio and audit: never capability,
// its other packages, or anything under interp/.
package providers
