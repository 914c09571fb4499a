// Package paths is what both sides of spear-shell must agree on about paths (SPEC 9): whether
// a path is out of the agent's reach (CheckTrusted, WritableRoots) and the state parent where
// spear-shell keeps what is its own (StateParent, EnsureStateParent, PrivateDir). It is a
// leaf, layer 0 (docs/layout.md): it imports no package of ours, so that the boundary
// (interp/sandbox), policy and the capability side may all import it.
package paths
