package envelope

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/spear-shell/spear-shell/interp"
)

// wrapFor puts cmd in terminal's envelope as the terminal does (quoting included).
func wrapFor(terminal, cmd string) string {
	quoted := "'" + strings.ReplaceAll(cmd, "'", `'"'"'`) + "'"
	switch terminal {
	case "claude-code":
		return claude(quoted, " < /dev/null")
	case "codex":
		return codex(quoted)
	case "gemini":
		return gemini(cmd)
	}
	return cmd + "; tmux wait -S done"
}

// FuzzEnvelope: a command put in an envelope as the terminal puts it comes out of the match
// whole, and only its own invocations are answered; any input that matches is the template's
// text byte for byte outside the slots.
func FuzzEnvelope(f *testing.F) {
	for _, tt := range envelopeTests {
		f.Add(uint8(0), tt.command, tt.src)
	}
	// The recognition table's inputs (package interp keeps the file equal to its table).
	data, err := os.ReadFile("../testdata/recognition-inputs.json")
	if err != nil {
		f.Fatal(err)
	}
	var inputs []string
	if err := json.Unmarshal(data, &inputs); err != nil {
		f.Fatal(err)
	}
	for _, in := range inputs {
		f.Add(uint8(1), in, in)
	}
	terminals := []string{"claude-code", "codex", "gemini", "terminal-bench"}
	ctx := Context{Login: true, IsSelf: func(p string) bool { return p == codexSelf }}
	f.Fuzz(func(t *testing.T, which uint8, cmd, src string) {
		term := terminals[int(which)%len(terminals)]
		if strings.IndexByte(cmd, 0) >= 0 {
			return // no argument can hold one; the parser drops it, as bash does
		}
		wrapped := wrapFor(term, cmd)
		if m := MatchEnvelope(term, wrapped, ctx); m != nil {
			if m.Command != cmd && !(term == "terminal-bench" && m.Command == wrapped) {
				t.Fatalf("%s: command %q came out as %q", term, cmd, m.Command)
			}
			if a := interp.Analyze(m.Command); a.Verdict == interp.Answer {
				for _, s := range a.Segments {
					if s.Invocation != nil && !strings.Contains(cmd, s.Invocation.Source) {
						t.Fatalf("%s: answered %q, which is not the model's", term, s.Invocation.Source)
					}
				}
			}
		}
		if ownTextMayMatch(term, src) && !mayHaveEnds(term, src) {
			t.Fatalf("%s: %q may be an envelope, but its ends say no", term, src)
		}
		if m := MatchEnvelope(term, src, ctx); m != nil {
			if got := m.rebuilt(); got != src {
				t.Fatalf("%s: matched %q, whose slots in the template give %q", term, src, got)
			}
		}
	})
}

// rebuilt is the template's text with the input's slot contents in place of the markers.
func (m *Match) rebuilt() string {
	var b strings.Builder
	t := m.Envelope.Text
	cur := 0
	for _, bd := range m.bindings {
		b.WriteString(t[cur:bd.slot.start])
		b.WriteString(m.src[bd.start:bd.end])
		cur = bd.slot.end
	}
	b.WriteString(t[cur:])
	return b.String()
}

// TestMain checks that no test in the package leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
