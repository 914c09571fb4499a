package envelope

import (
	"strings"
	"testing"
)

// TestEnvelopeEnds: the ends found in a template's text are never longer than the parsed
// template's text before its first slot and after its last, so the test without a parse never
// turns away an input that the templates may match.
func TestEnvelopeEnds(t *testing.T) {
	t.Parallel()
	all, err := envelopes()
	if err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, e := range all {
		if e.Plain() {
			continue
		}
		own++
		got := textEnds(e.Text)
		head, tail := e.Text[:e.slots[0].start], e.Text[e.slots[len(e.slots)-1].end:]
		if !strings.HasPrefix(head, got.head) || !strings.HasSuffix(tail, got.tail) {
			t.Errorf("%s %s/%s: ends of %d and %d bytes, but the parsed template's text before its first slot ends %q and after its last starts %q",
				e.Terminal, e.Version, e.Variant, len(got.head), len(got.tail), head[max(0, len(head)-20):], tail[:min(len(tail), 20)])
		}
	}
	ends := 0
	for _, term := range Terminals() {
		ends += len(templatesOf(term).ends())
	}
	if ends != own {
		t.Errorf("%d ends for %d envelopes with text of their own", ends, own)
	}
}

func TestMayBeEnvelope(t *testing.T) {
	t.Parallel()
	for _, tt := range envelopeTests {
		if tt.variant == "" || tt.login || tt.variant == "typed" {
			continue
		}
		if !MayBeEnvelope(tt.terminal, tt.src) {
			t.Errorf("%s: MayBeEnvelope says no to an envelope", tt.name)
		}
		for _, other := range Terminals() {
			if other != tt.terminal && MayBeEnvelope(other, tt.src) {
				t.Errorf("%s: MayBeEnvelope says %s's envelope may be %s's", tt.name, tt.terminal, other)
			}
		}
	}
	// A session's everyday lines are turned away by the ends alone.
	for _, term := range Terminals() {
		for _, src := range []string{"echo line 1", "cd /tmp/a", "x=$((x+1))", `echo "x=$x in ${PWD##*/}"`, "", "tmux wait -S done"} {
			if mayHaveEnds(term, src) {
				t.Errorf("%q has an envelope's ends under %s", src, term)
			}
		}
	}
	if MayBeEnvelope("vim", "echo hi; tmux wait -S done") {
		t.Error("a terminal without envelopes has one")
	}
}
