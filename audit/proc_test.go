package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// child runs this test binary as a child doing job on path.
func child(t *testing.T, job, path, id string, n int) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+job, childPathEnv+"="+path, childIDEnv+"="+id, childNEnv+"="+strconv.Itoa(n))
	return cmd
}

func runReport(t *testing.T, cmd *exec.Cmd) childReport {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v (stderr %q)", err, stderr.String())
	}
	var rep childReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("child report %q: %v", stdout.String(), err)
	}
	return rep
}

// 8 processes append 500 records each to one file at once: every line parses
// and each child's records are all there, in its order.
func TestAppendFromManyProcesses(t *testing.T) {
	t.Parallel()
	const procs, each = 8, 500
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	reps := make([]childReport, procs)
	var wg sync.WaitGroup
	for i := range procs {
		cmd := child(t, "append", path, string(rune('a'+i)), each)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := cmd.Wait(); err != nil {
				reps[i].Errors = append(reps[i].Errors, fmt.Sprintf("child: %v (stderr %q)", err, stderr.String()))
				return
			}
			if err := json.Unmarshal(stdout.Bytes(), &reps[i]); err != nil {
				reps[i].Errors = append(reps[i].Errors, fmt.Sprintf("report %q: %v", stdout.String(), err))
			}
		})
	}
	wg.Wait()
	for i, rep := range reps {
		if len(rep.Errors) > 0 || rep.Written != each {
			t.Fatalf("child %d wrote %d records, errors %v", i, rep.Written, rep.Errors)
		}
	}
	recs := readRecords(t, path)
	if len(recs) != procs*each {
		t.Fatalf("%d records, want %d", len(recs), procs*each)
	}
	next := map[string]int{}
	for _, r := range recs {
		id, _ := r["child"].(string)
		seq, _ := r["seq"].(json.Number).Int64()
		if int(seq) != next[id] {
			t.Fatalf("child %q: record %d follows %d", id, seq, next[id]-1)
		}
		if r[FieldSession] != "session-"+id || r[FieldResult] != strings.Repeat(id, MaxValueBytes) {
			t.Fatalf("child %q: record %d has the wrong contents", id, seq)
		}
		next[id]++
	}
	if len(next) != procs {
		t.Fatalf("records from %d children, want %d", len(next), procs)
	}
}

// A file size limit (a full disk, as the writer sees it) makes Log fail,
// never kills the process (SIGXFSZ) and never leaves a torn line.
func TestFileSizeLimit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash for ulimit")
	}
	const limitKiB = 4
	tests := []struct {
		name    string
		prefill int // bytes of whole lines already in the file
	}{
		{"limit reached mid-record", 0},
		{"limit reached exactly", limitKiB * 1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			if tt.prefill > 0 {
				line := []byte(`{"event":"prefill"}` + "\n")
				fill := bytes.Repeat(line, (tt.prefill-30)/len(line))
				// One more record pads the file to exactly prefill bytes.
				pad := strings.Repeat("x", tt.prefill-len(fill)-len(`{"p":""}`+"\n"))
				fill = append(fill, `{"p":"`+pad+`"}`+"\n"...)
				if err := os.WriteFile(path, fill, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cmd := child(t, "fill", path, "f", 1000)
			// $0 is the test binary: ulimit applies to it, not to us.
			cmd.Args = []string{"bash", "-c", fmt.Sprintf(`ulimit -f %d && exec "$0"`, limitKiB), cmd.Path}
			cmd.Path, _ = exec.LookPath("bash")
			rep := runReport(t, cmd)
			if len(rep.Errors) != 2 {
				t.Fatalf("errors %q, want two failed Logs", rep.Errors)
			}
			for _, e := range rep.Errors {
				if !strings.Contains(e, "short write") && !strings.Contains(e, "file too large") {
					t.Errorf("error %q does not name the cause", e)
				}
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() > limitKiB*1024 {
				t.Fatalf("file is %d bytes, beyond the limit", fi.Size())
			}
			recs := readRecords(t, path)
			var written int
			for _, r := range recs {
				if r[FieldEvent] == EventDescribed {
					written++
				}
			}
			if written != rep.Written {
				t.Errorf("file holds %d records, the child reports %d written", written, rep.Written)
			}
			if tt.prefill == 0 && rep.Written == 0 {
				t.Errorf("nothing fitted under the limit")
			}
		})
	}
}

// A file that becomes read-only makes Log fail; a read-only file makes Open fail.
// Root ignores file modes, so then the child runs as nobody.
func TestReadOnlyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var cred *syscall.Credential
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		const nobody = 65534
		cred = &syscall.Credential{Uid: nobody, Gid: nobody}
		// nobody must reach the directory and run a copy of the binary.
		for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		exe = copyExe(t, exe, filepath.Join(dir, "audit.test"))
		if err := os.Chown(dir, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	run := func(job, path string) childReport {
		cmd := child(t, job, path, "r", 0)
		cmd.Path = exe
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return runReport(t, cmd)
	}

	t.Run("becomes read-only after Open", func(t *testing.T) {
		path := filepath.Join(dir, "ro-later.jsonl")
		rep := run("readonly", path)
		if rep.Written != 1 || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "permission denied") {
			t.Fatalf("written %d, errors %q; want 1 and a permission error", rep.Written, rep.Errors)
		}
		if recs := readRecords(t, path); len(recs) != 1 || recs[0][FieldEvent] != EventTurnStarted {
			t.Fatalf("records %v, want turn_started only", recs)
		}
	})
	t.Run("read-only at Open", func(t *testing.T) {
		path := filepath.Join(dir, "ro.jsonl")
		if err := os.WriteFile(path, []byte("{}\n"), 0o444); err != nil {
			t.Fatal(err)
		}
		rep := run("readonly", path)
		if rep.Written != 0 || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "audit: open") {
			t.Fatalf("written %d, errors %q; want Open to fail", rep.Written, rep.Errors)
		}
		if data, _ := os.ReadFile(path); string(data) != "{}\n" {
			t.Fatalf("file changed to %q", data)
		}
	})
}

func copyExe(t *testing.T, from, to string) string {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return to
}
