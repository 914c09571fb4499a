package lineedit

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// BenchmarkLongLine types a line of each length onto a pseudo-terminal, as tmux send-keys and
// pexpect sendline write it, and reads it with the editor: the time per character stays flat
// from under the editor's limit to far past it (the editor's key hook, which copies the whole
// line at each key, is off past the limit).
//
//	go test -run '^$' -bench LongLine ./interp/lineedit
func BenchmarkLongLine(b *testing.B) {
	for _, n := range []int{4000, 20000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			master, tty, err := pty.Open()
			if err != nil {
				b.Skip("no pseudo-terminal:", err)
			}
			defer master.Close()
			defer tty.Close()
			keys, err := NewKeys(int(tty.Fd()))
			if err != nil {
				b.Fatal(err)
			}
			defer keys.Close()
			mode := &Mode{fd: int(tty.Fd())}
			mode.Edit()
			defer mode.Restore()
			e := &Editor{keys: keys, out: io.Discard, mode: mode, history: NewHistory(-1, "")}
			line := "echo " + strings.Repeat("x", n-5)
			b.SetBytes(int64(n))
			for b.Loop() {
				go master.Write([]byte(line + "\r"))
				got, err := e.readLine(shownPrompt{last: "$ ", width: 2})
				if err != nil || got != line {
					b.Fatalf("read %d characters, %v; want %d", len(got), err, n)
				}
			}
		})
	}
}
