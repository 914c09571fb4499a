package interp

import (
	"bufio"
	"io"
	"os"

	"github.com/spear-shell/spear-shell/interp/realshell"
)

// Terminal is what a terminal session reads and writes besides the real shell.
type Terminal struct {
	// In is the terminal, read one line at a time. In canonical mode its line discipline does
	// the echo, the erase and kill keys, Ctrl-D and Ctrl-C, as the terminal's settings say.
	In *os.File
	// Out gets the prompts and bash -i's notes ("exit"): stderr, as bash -i writes them.
	Out io.Writer
	// Interrupts gets one value per Ctrl-C (SIGINT), already passed on to the real shell.
	Interrupts <-chan struct{}
	echo       *echoGate
}

// Quiet says that no forwarded command runs until the next prompt: what is typed from now on
// is echoed after the prompt, as bash -i shows typed-ahead lines.
func (t *Terminal) Quiet() {
	if t.echo == nil {
		t.echo = &echoGate{fd: int(t.In.Fd())}
	}
	t.echo.hold()
}

// RunTerminal runs a terminal session as bash -i runs one: a prompt before each line (PS1, or
// PS2 for a continuation line), each unit run to its end before the next line is read, a
// Ctrl-C that discards the line being typed or ends the running command with a new prompt,
// and an end at Ctrl-D on an empty line or when the shell exits. It returns the shell's status.
func RunTerminal(t *Terminal, sh *realshell.Shell, h Handlers) int {
	lines := &lineReader{r: bufio.NewReader(t.In), results: make(chan lineRead, 1)}
	unit := unitText{shell: h.Shell}
	defer func() {
		if t.echo != nil {
			t.echo.release()
		}
	}()
	unechoed := 0
	for {
		prompt, ok := sh.Prompt(unit.started())
		if !ok {
			break
		}
		// Echo comes back before the prompt shows: a harness types when it sees the prompt.
		if t.echo != nil {
			unechoed += t.echo.release()
		}
		io.WriteString(t.Out, prompt)
		var read lineRead
		select {
		case <-t.Interrupts:
			// The line discipline has echoed ^C and dropped the typed line.
			unit.take()
			io.WriteString(t.Out, "\n")
			sh.Interrupted()
			continue
		case read = <-lines.next():
			lines.pending = false
		}
		if unechoed > 0 {
			n := min(unechoed, len(read.line))
			io.WriteString(t.Out, read.line[:n])
			unechoed -= n
		}
		if read.err != nil {
			if unit.started() || read.line != "" {
				// bash reports the incomplete command as it ends.
				unit.text.WriteString(read.line)
				runUnit(unit.take(), sh, h)
			}
			break
		}
		if !unit.add(read.line) {
			continue
		}
		before, ok := sh.Before()
		if !ok {
			break
		}
		io.WriteString(t.Out, before)
		ran := runUnit(unit.take(), sh, h)
		t.Quiet()
		if drained(t.Interrupts) {
			// bash -i ends the line of a command that Ctrl-C stopped.
			io.WriteString(t.Out, "\n")
		}
		if !ran {
			break
		}
	}
	io.WriteString(t.Out, "exit\n")
	return sh.Close()
}

// drained empties c and tells whether it held anything.
func drained(c <-chan struct{}) bool {
	held := false
	for {
		select {
		case <-c:
			held = true
		default:
			return held
		}
	}
}

type lineRead struct {
	line string
	err  error
}

// lineReader reads the terminal only when a line is wanted, so that a forwarded command reads
// what is typed while it runs. A read outlives a Ctrl-C: the next prompt waits for the same one.
type lineReader struct {
	r       *bufio.Reader
	results chan lineRead
	pending bool
}

func (l *lineReader) next() <-chan lineRead {
	if !l.pending {
		l.pending = true
		go func() {
			line, err := l.r.ReadString('\n')
			l.results <- lineRead{line, err}
		}()
	}
	return l.results
}
