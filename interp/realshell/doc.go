// Package realshell runs the real shell, layer 2 of the shell side (docs/layout.md): bash's
// command line read as bash reads it (Args), the forwarding of a whole command line inside the
// boundary or in place of this process (RealShell), the persistent shell of a session and its
// plumbing (Shell), and the signals ignored at start and passed on. It imports interp/sandbox
// and policy/paths of ours, never recognition (interp), envelopes, the line editor, the loops,
// or anything under capability/: the front binary's -c fast path links it without a parser.
package realshell
