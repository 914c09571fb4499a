// Package session is the loops that run on top of the rest of the shell side, layer 3
// (docs/layout.md): a -c string's segments (RunSegments), an envelope's steps (RunEnvelope),
// a stdin session (RunSession) and a terminal session (RunTerminal), forwarding to the real
// shell what is forwarded and handing each invocation to the Handlers it is given. It imports
// interp, interp/envelope, interp/lineedit and interp/realshell; nothing imports it but
// cmd/spear-shell, and it never imports anything under capability/.
package session
