package realshell

import (
	"io"
	"strings"
	"testing"
)

// PIPESTATUS and $? reach the next command across a reply (a terminal session waits for each
// command; an answer waits for what came before it), as they do in bash -s between two lines.
func TestPipestatusAcrossReply(t *testing.T) {
	t.Parallel()
	sh, r := startBashS(t)
	for _, unit := range []string{"false | true", `echo "${PIPESTATUS[@]} $?"`, "! true | false",
		`echo "${PIPESTATUS[@]} $?"`, "set -o pipefail; (exit 3) | (exit 2) | true", `echo "${PIPESTATUS[@]} $?"`,
		"set -e; true | (exit 4)"} {
		sh.Forward(unit)
		if !sh.Sync() {
			break
		}
	}
	if code := sh.Close(); code != 4 {
		t.Errorf("exit status %d, want 4 (set -e after a failing pipeline)", code)
	}
	out, _ := io.ReadAll(r)
	if want := "1 0 0\n0 1 0\n3 2 0 2\n"; string(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}
}

// A session that sets the plumbing's __spear_p itself gets nothing of it run as plumbing.
func TestPipestatusReplyIsDigits(t *testing.T) {
	t.Parallel()
	sh, r := startBashS(t)
	// A DEBUG trap leaves batches without the tail that would overwrite it.
	sh.Forward(`trap : DEBUG; __spear_p='1,0,;echo${IFS}INJECTED'`)
	sh.Sync()
	sh.Forward(`echo "after ${PIPESTATUS[@]}"`)
	sh.Close()
	out, _ := io.ReadAll(r)
	if strings.Contains(string(out), "INJECTED") {
		t.Errorf("output %q: the session's text ran as plumbing", out)
	}
}

// The keys of an associative PROMPT_COMMAND are the session's text: none of it runs as plumbing
// (a terminal session's prompt runs each element by its index).
func TestPromptCommandKeysAreDigits(t *testing.T) {
	t.Parallel()
	sh, r := startBashS(t)
	sh.Forward(`unset PROMPT_COMMAND; declare -A PROMPT_COMMAND=(['0]}";echo${IFS}INJECTED;: "${x[0']=:)`)
	if _, ok := sh.Prompt(false); !ok {
		t.Fatal("the shell ended")
	}
	sh.Close()
	out, _ := io.ReadAll(r)
	if strings.Contains(string(out), "INJECTED") {
		t.Errorf("output %q: the session's text ran as plumbing", out)
	}
}
