package testkit

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	rec := map[string]any{"event": "capability_invoked", "code": "ok", "phase": "outcome",
		"reason": "a, b=c", "count": float64(3), "args": map[string]any{"k": "v"}}
	for _, c := range []struct {
		spec string
		want bool
	}{
		{"capability_invoked", true},
		{"capability_denied", false},
		{"capability_invoked,code=ok,phase=outcome", true},
		{"capability_invoked,code=refused", false},
		{"capability_invoked,missing=x", false},
		{"capability_invoked,count=3", true},           // not a string: compact JSON
		{`capability_invoked,args={"k":"v"}`, true},    // the value's commas and braces are its own
		{"capability_invoked,reason=a, b=c", true},     // " b" is no key: the value goes on
		{"capability_invoked,code=ok,reason=a", false}, // a value is matched whole
	} {
		if got := Match(rec, c.spec); got != c.want {
			t.Errorf("Match(%s) = %v, want %v", c.spec, got, c.want)
		}
	}
}

func TestRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `{"time":"t","event":"turn_started","turn":"t1","session":"s"}` + "\n"
	if recs, err := Records(write("good", good+good)); err != nil || len(recs) != 2 || recs[1]["turn"] != "t1" {
		t.Errorf("good: %v, %v", recs, err)
	}
	for name, text := range map[string]string{
		"torn":       good + `{"time":"t","ev`,
		"no session": `{"time":"t","event":"e","turn":"t1"}`,
	} {
		if _, err := Records(write(strings.ReplaceAll(name, " ", "-"), text)); err == nil || !strings.HasPrefix(err.Error(), "audit: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Records(filepath.Join(dir, "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
	broker := `{"time":"t","event":"broker_started","broker":true,"provider":"p","share_key":""}` + "\n"
	if recs, err := BrokerRecords(write("broker", broker)); err != nil || len(recs) != 1 {
		t.Errorf("broker: %v, %v", recs, err)
	}
	if _, err := BrokerRecords(write("turn-in-broker", broker+good)); err == nil || !strings.Contains(err.Error(), "not a broker record") {
		t.Errorf("a turn's record in the broker's file: %v", err)
	}
}

// Marked finds exactly the processes whose environment holds the variable, with their memory.
func TestMarked(t *testing.T) {
	mark := "TESTKIT_MARK=" + t.Name() + strconv.Itoa(os.Getpid())
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var pids []int
	var rss, pss int64
	Poll(func() bool { pids, rss, pss = Marked(mark); return len(pids) == 1 })
	if len(pids) != 1 || pids[0] != cmd.Process.Pid || rss <= 0 || pss <= 0 {
		t.Fatalf("Marked = %v, %d KiB, %d KiB; want [%d] with its memory", pids, rss, pss, cmd.Process.Pid)
	}
	if pids, _, _ := Marked(mark + "x"); len(pids) != 0 {
		t.Errorf("another value matched %v", pids)
	}
}
