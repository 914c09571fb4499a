// Package lineedit is the line editor of terminal sessions, as readline is bash -i's: the
// editor (Editor), the terminal's keys and mode, history and its file, Tab completion from a
// function it is given, prompt drawing, lines longer than the terminal's own line, and
// terminals that do not echo. It is a leaf, layer 0 (docs/layout.md): it imports no package of
// ours; completion comes in as a function, and the session loop (interp/session) drives it.
package lineedit
