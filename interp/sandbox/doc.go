// Package sandbox is the isolation boundary (SPEC 9), layer 1 of the shell side
// (docs/layout.md): what one bwrap boundary is made of (PlanBoundary), its bwrap command line
// (Boundary), the probe of whether bwrap works here, the envelope files bound in, the turn's
// temporary directory, the stub that stands for spear-capability inside, and the real shell's
// environment (ShellEnv). It starts no real shell: package interp/realshell does. It imports
// only the leaves interp/invocation and policy/paths of ours, never interp, the real shell,
// the loops, or anything under capability/.
package sandbox
