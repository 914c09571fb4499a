package lineedit

import (
	"golang.org/x/sys/unix"
)

// Mode switches the terminal between what a command sees and what the line editor needs,
// as readline does around each line it reads: the settings found when reading starts are saved
// and put back before the command runs, so that a forwarded command (read, vim, or the user's
// `stty -echo`) finds the terminal as bash -i leaves it.
type Mode struct {
	fd      int
	saved   *unix.Termios // nil while a command has the terminal
	set     bool          // the session's settings are on: Restore puts the saved ones back
	editing bool          // the editor draws the line (the saved settings echo)
}

// NewMode returns the mode switch of the terminal fd.
func NewMode(fd int) *Mode { return &Mode{fd: fd} }

// Editing tells whether the editor draws the line: the terminal echoed when Edit saved it.
func (m *Mode) Editing() bool { return m.editing }

// Edit saves the terminal's settings, once until Restore, and turns the editor's mode on:
// no canonical input (keys come as they are typed, and a line may be longer than the 4095
// characters the kernel holds of one), no echo (the editor draws the line), CR and NL kept
// apart (both end a line), but ISIG kept, so that Ctrl-C is still SIGINT. A terminal that
// does not echo (pexpect's echo=False, `stty -echo`) only loses canonical input: readline
// draws nothing there either, and readQuiet does what the kernel's line editing did.
func (m *Mode) Edit() {
	if m.saved != nil {
		return
	}
	tio, err := unix.IoctlGetTermios(m.fd, unix.TCGETS)
	if err != nil {
		return
	}
	saved := *tio
	m.saved = &saved
	echoes := tio.Lflag&unix.ECHO != 0
	tio.Lflag &^= unix.ICANON | unix.ECHO
	if echoes {
		tio.Iflag &^= unix.ICRNL | unix.INLCR
		// The editor ends its lines with \n and relies on the terminal to add \r.
		tio.Oflag |= unix.OPOST | unix.ONLCR
	}
	// A read returns at once, with what there is: the session waits in poll (keys.go).
	tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 0, 0
	m.set = unix.IoctlSetTermios(m.fd, unix.TCSETS, tio) == nil
	m.editing = m.set && echoes
}

// Restore puts back the settings saved by Edit.
func (m *Mode) Restore() {
	if m.saved == nil {
		return
	}
	if m.set {
		_ = unix.IoctlSetTermios(m.fd, unix.TCSETS, m.saved)
	}
	m.saved, m.set, m.editing = nil, false, false
}

// EchoesControl tells whether the saved settings show control characters (ECHOCTL): readline
// then shows a Ctrl-C at the prompt as ^C.
func (m *Mode) EchoesControl() bool {
	return m.saved != nil && m.saved.Lflag&unix.ECHOCTL != 0
}
