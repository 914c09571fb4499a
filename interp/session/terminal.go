package session

import (
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spear-shell/spear-shell/interp"
	"github.com/spear-shell/spear-shell/interp/lineedit"
	"github.com/spear-shell/spear-shell/interp/realshell"
)

// Terminal is what a terminal session reads and writes besides the real shell.
type Terminal struct {
	// In is the terminal. While a line is read it is in the line editor's mode (as readline
	// puts it); while a unit runs it has the settings it had before, as the command left them.
	In *os.File
	// Out gets the prompts, the editor's drawing and bash -i's notes ("exit"): stderr, as
	// bash -i writes them.
	Out io.Writer
	// Interrupts gets one value per Ctrl-C (SIGINT), already passed on to the real shell.
	Interrupts <-chan struct{}
	// History is what Up, Down and Ctrl-R recall; nil for the session's own lines alone.
	History *lineedit.History
	mode    *lineedit.Mode
}

// Quiet says that no forwarded command runs until the next prompt: the editor's mode goes on
// now, so that a line typed from now on is drawn after the prompt, as bash -i shows a line
// typed ahead.
func (t *Terminal) Quiet() { t.termMode().Edit() }

func (t *Terminal) termMode() *lineedit.Mode {
	if t.mode == nil {
		t.mode = lineedit.NewMode(int(t.In.Fd()))
	}
	return t.mode
}

// RunTerminal runs a terminal session as bash -i runs one: a prompt before each line (PS1, or
// PS2 for a continuation line) read with line editing and history, each unit run to its end
// before the next line is read, a Ctrl-C that discards the line being typed or ends the
// running command with a new prompt, and an end at Ctrl-D on an empty line or when the shell
// exits. It returns the shell's status.
func RunTerminal(t *Terminal, sh *realshell.Shell, h Handlers) int {
	keys, err := lineedit.NewKeys(int(t.In.Fd()))
	if err != nil {
		io.WriteString(t.Out, "spear-shell: terminal: "+err.Error()+"\n")
		return sh.Close()
	}
	defer keys.Close()
	if t.History == nil {
		t.History = lineedit.NewHistory(-1, "")
	}
	mode := t.termMode()
	defer mode.Restore()
	completions := make(chan completion)
	editor := lineedit.NewEditor(keys, t.Out, mode, t.History, func(word string, command bool) []string {
		c := completion{word, command, make(chan []string, 1)}
		completions <- c
		return <-c.reply
	})
	// A Ctrl-C is taken from Interrupts once the unit has run (drained below): until then it is
	// seen there, and the rest of the unit given up.
	h.Interrupted = func() bool { return len(t.Interrupts) > 0 }
	unit := interp.NewUnit(h.Shell)
	defer unit.Close() // the real shell asked about text mvdan cannot parse, if one was started
	lines := make(chan lineRead, 1)
	resizes := make(chan os.Signal, 1)
	if !signal.Ignored(syscall.SIGWINCH) { // ignored at start, it stays so
		signal.Notify(resizes, syscall.SIGWINCH)
		defer signal.Stop(resizes)
	}
	for {
		// Typed-ahead text is read by the editor from here on, as readline reads it.
		mode.Edit()
		prompt, ok := sh.Prompt(unit.Started())
		if !ok {
			break
		}
		go func() {
			line, err := editor.ReadLine(prompt)
			lines <- lineRead{line, err}
		}()
		read, waiting := lineRead{}, true
		for waiting {
			select {
			case <-t.Interrupts:
				keys.Cancel()
				for done := false; !done; {
					select {
					case <-lines:
						done = true
					case c := <-completions:
						c.reply <- nil
					}
				}
				keys.Reset()
				read.err, waiting = lineedit.ErrInterrupted, false
			case c := <-completions:
				// The real shell is asked between reads only, from this goroutine.
				words, _ := sh.Completions(c.word, c.command)
				c.reply <- words
			case <-resizes:
				editor.Resized()
			case read = <-lines:
				waiting = false
			}
		}
		if read.err == lineedit.ErrInterrupted {
			if mode.Editing() && mode.EchoesControl() {
				io.WriteString(t.Out, "^C")
			}
			t.History.Entered()
			unit.Take()
			io.WriteString(t.Out, "\n")
			sh.Interrupted()
			continue
		}
		if read.err != nil {
			t.History.Entered()
			if unit.Started() || read.line != "" {
				// bash reports the incomplete command as it ends.
				unit.End(read.line)
				mode.Restore()
				runUnit(unit.Take(), sh, h)
			}
			break
		}
		if !unit.Add(read.line + "\n") {
			continue
		}
		t.History.Entered()
		mode.Restore()
		before, ok := sh.Before()
		if !ok {
			break
		}
		io.WriteString(t.Out, before)
		ran := runUnit(unit.Take(), sh, h)
		mode.Edit()
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

// completion is Tab's request for the words that may complete word.
type completion struct {
	word    string
	command bool
	reply   chan []string
}

type lineRead struct {
	line string
	err  error
}
