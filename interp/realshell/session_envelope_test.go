package realshell

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSyncStatusAndReplace: SyncStatus reports $? of what ran last, a forwarded command's or an
// answer's; Replace gives a fresh shell that keeps only what an exec keeps, and reads the rest.
func TestSyncStatusAndReplace(t *testing.T) {
	sh, r := startBashS(t)
	defer r.Close()
	sh.Forward("plain=1; export exported=2; f() { :; }; cd /; (exit 4)")
	if st, ok := sh.SyncStatus(); !ok || st != 4 {
		t.Fatalf("SyncStatus after a forwarded (exit 4) = %d, %v", st, ok)
	}
	sh.SetStatus(6) // an answer's
	if st, ok := sh.SyncStatus(); !ok || st != 6 {
		t.Fatalf("SyncStatus after an answer's 6 = %d, %v", st, ok)
	}
	sh.SetStatus(0)
	if st, ok := sh.SyncStatus(); !ok || st != 0 {
		t.Fatalf("SyncStatus after an answer's 0 = %d, %v", st, ok)
	}
	sh.Replace("/bin/bash", "/opt/self")
	sh.Forward(`echo "plain=${plain-unset} exported=$exported zero=$0 pwd=$PWD"; type f >/dev/null 2>&1 || echo "no f"; (exit 3)`)
	if st, ok := sh.SyncStatus(); !ok || st != 3 {
		t.Fatalf("SyncStatus in the fresh shell = %d, %v", st, ok)
	}
	if code := sh.Close(); code != 3 {
		t.Fatalf("exit status %d, want 3", code)
	}
	out, _ := io.ReadAll(r)
	want := "plain=unset exported=2 zero=/opt/self pwd=/\nno f\n"
	if string(out) != want {
		t.Fatalf("output %q, want %q", out, want)
	}
	if strings.Contains(string(out), "exec") {
		t.Fatal("the plumbing shows")
	}
}

// TestInList: on the left of && bash's set -e does not act, and neither do a forwarded part
// or an answer's status sent there; sent as usual afterwards, a failure ends the shell.
func TestInList(t *testing.T) {
	sh, r := startBashS(t)
	defer r.Close()
	sh.ForwardInList("set -e\nfalse\necho \"after false $?\"")
	if !sh.Sync() {
		t.Fatal("the shell ended on a failure on the left of &&")
	}
	sh.SetStatusInList(3)
	sh.ForwardInList(`echo "after the answer $?"; (exit 4)`)
	if st, ok := sh.SyncStatus(); !ok || st != 4 {
		t.Fatalf("SyncStatus = %d, %v; want 4", st, ok)
	}
	sh.SetStatus(5) // outside the list: set -e ends the shell
	sh.Forward("echo never")
	if code := sh.Close(); code != 5 {
		t.Fatalf("exit status %d, want 5", code)
	}
	out, _ := io.ReadAll(r)
	if want := "after false 1\nafter the answer 3\n"; string(out) != want {
		t.Fatalf("output %q, want %q", out, want)
	}
}

// startBashS starts bash -s as a session's real shell, its stdout on the pipe returned.
func startBashS(t *testing.T) (*Shell, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sh, err := StartShell(ShellConfig{Argv: []string{"/bin/bash", "-s"}, Env: []string{"PATH=/usr/bin:/bin"}, Stdout: w, Stderr: os.Stderr, OwnGroup: true})
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	return sh, r
}

// TestInListAliases: an envelope's command is read with the session's alias setting, and the
// plumbing around it with expansion off: aliases named `{`, `function`, `if` (words the
// plumbing's lines start commands with) break nothing, and the command's own alias is expanded.
// bash -s, given the same lines, is the oracle.
func TestInListAliases(t *testing.T) {
	setup := "shopt -s expand_aliases\nalias ll='echo ll' {='echo ALIAS;' function='echo ALIAS;' if='echo ALIAS;'\necho set"
	units := []string{"ll one\ntrue | false\necho \"s $? ${PIPESTATUS[*]}\"", "ll two; false", "echo \"after $?\"; ll three",
		"set -e\nfalse\necho \"after false $?\"; ll four"}
	// Envelopes run the command as `eval 'CMD' && ...`.
	text := setup + "\n"
	for _, unit := range units {
		text += "eval " + shellQuote(unit) + " && :\n"
	}
	oracle := exec.Command("/bin/bash", "-s")
	oracle.Env = []string{"PATH=/usr/bin:/bin"}
	oracle.Stdin = strings.NewReader(text)
	want, err := oracle.Output()
	if err != nil {
		t.Fatal(err)
	}
	sh, r := startBashS(t)
	defer r.Close()
	sh.Forward(setup)
	for _, unit := range units {
		sh.ForwardInList(unit)
		if !sh.Sync() {
			t.Fatal("the shell ended")
		}
	}
	if code := sh.Close(); code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
	out, _ := io.ReadAll(r)
	if string(out) != string(want) {
		t.Fatalf("output %q, want bash -s's %q", out, want)
	}
}

func TestDefinesCommand(t *testing.T) {
	for unit, want := range map[string]bool{
		"command() { :; }": true, "command () { :; }": true, "function command { :; }": true,
		"f() { :; }; function  command() { :; }": true, "command -v ls": false, "x=command; echo $x": false,
	} {
		if got := definesCommand(unit); got != want {
			t.Errorf("definesCommand(%q) = %v, want %v", unit, got, want)
		}
	}
}
