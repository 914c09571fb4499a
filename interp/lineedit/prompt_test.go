package lineedit

import (
	"testing"

	"go.uber.org/goleak"
)

func TestParsePrompt(t *testing.T) {
	for _, tc := range []struct {
		in, head, last string
		width          int
	}{
		{"$ ", "", "$ ", 2},
		{"", "", "", 0},
		// \[ \] (\001 \002): dropped, and what is between them takes no columns
		{"\001\x1b[1;32m\002user\001\x1b[0m\002$ ", "", "\x1b[1;32muser\x1b[0m$ ", 6},
		// a window title inside \[ \], and one outside them
		{"\001\x1b]0;user@host: ~\a\002P0 > ", "", "\x1b]0;user@host: ~\aP0 > ", 5},
		{"\x1b]0;title\x1b\\P> ", "", "\x1b]0;title\x1b\\P> ", 3},
		// colours outside \[ \] take no columns either
		{"\x1b[31mred\x1b[0m> ", "", "\x1b[31mred\x1b[0m> ", 5},
		// several lines: the last is the editor's
		{"user@x\n\001\x1b[1m\002P0 > ", "user@x\n", "\x1b[1mP0 > ", 5},
		{"a\nb\nc> ", "a\nb\n", "c> ", 3},
		// a newline inside \[ \] is not a line of the prompt
		{"x\001\n\002y ", "", "x\ny ", 3},
		// UTF-8: one column a character
		{"héllo 日> ", "", "héllo 日> ", 9},
		// a carriage return starts the count again
		{"long\rP> ", "", "long\rP> ", 3},
	} {
		got := parsePrompt(tc.in)
		if got.head != tc.head || got.last != tc.last || got.width != tc.width {
			t.Errorf("parsePrompt(%q) = %q, %q, %d; want %q, %q, %d", tc.in, got.head, got.last, got.width, tc.head, tc.last, tc.width)
		}
	}
}

// TestMain checks that no test in the package leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
