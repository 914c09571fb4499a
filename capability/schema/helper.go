package schema

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// HelperName is the schema helper's file name beside spear-shell: it holds the schema
// library, which the full binary does not link (SPEC 10), and judges the schemas that the native
// validator leaves to it.
const HelperName = "spear-shell-schema"

// helperTimeout bounds one answer of the helper; a helper that takes longer is stopped.
const helperTimeout = 20 * time.Second

// helperAnswer is one line of the helper's output.
type helperAnswer struct {
	OK       bool     `json:"ok"`
	Unusable string   `json:"unusable"`
	Errors   []string `json:"errors"`
}

// schemaHelper is one running helper process, started at the first need and kept for the rest
// of the process; requests are serialised. A helper that fails is stopped and started again
// at the next need.
type schemaHelper struct {
	mu   sync.Mutex
	path string
	cmd  *exec.Cmd
	in   *os.File // the helper's stdin
	out  *os.File // the helper's stdout
	r    *bufio.Reader
}

var helpers = struct {
	sync.Mutex
	m map[string]*schemaHelper
}{m: map[string]*schemaHelper{}}

// helperRequests counts the requests sent to helpers, so tests can tell which tier answered.
var helperRequests atomic.Int64

// helperPath is where the helper is: the setting, or beside the running executable.
func helperPath(setting string) (string, error) {
	if setting != "" {
		return setting, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate the running executable: %w", err)
	}
	return filepath.Join(filepath.Dir(self), HelperName), nil
}

func helperAt(path string) *schemaHelper {
	helpers.Lock()
	defer helpers.Unlock()
	h := helpers.m[path]
	if h == nil {
		h = &schemaHelper{path: path}
		helpers.m[path] = h
	}
	return h
}

// check asks the helper for the verdict of schema on instance.
func (h *schemaHelper) check(schema, instance json.RawMessage) (helperAnswer, error) {
	helperRequests.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cmd == nil {
		if err := h.start(); err != nil {
			return helperAnswer{}, fmt.Errorf("start %s: %w", h.path, err)
		}
	}
	// Marshal compacts both raw messages: the request is one line.
	req, err := json.Marshal(struct {
		Schema   json.RawMessage `json:"schema"`
		Instance json.RawMessage `json:"instance"`
	}{schema, instance})
	if err != nil {
		return helperAnswer{}, fmt.Errorf("encode request: %w", err)
	}
	deadline := time.Now().Add(helperTimeout)
	_ = h.in.SetWriteDeadline(deadline)
	_ = h.out.SetReadDeadline(deadline)
	if _, err := h.in.Write(append(req, '\n')); err != nil {
		h.stop()
		return helperAnswer{}, fmt.Errorf("write to %s: %w", HelperName, err)
	}
	line, err := h.r.ReadBytes('\n')
	if err != nil {
		h.stop()
		return helperAnswer{}, fmt.Errorf("read from %s: %w", HelperName, err)
	}
	var a helperAnswer
	if err := json.Unmarshal(line, &a); err != nil {
		h.stop()
		n := min(len(line), 200)
		for n < len(line) && n > 0 && !utf8.RuneStart(line[n]) {
			n-- // never a rune cut in two
		}
		return helperAnswer{}, fmt.Errorf("%s answered %q: %w", HelperName, line[:n], err)
	}
	if !a.OK && a.Unusable == "" && len(a.Errors) == 0 {
		return helperAnswer{}, errors.New(HelperName + " refused without saying why")
	}
	return a, nil
}

func (h *schemaHelper) start() error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	// A session of its own: a Ctrl-C meant for a command does not reach it, nor can it reach
	// the terminal. It needs no environment, and it ends when its stdin does, with this
	// process at the latest.
	cmd := &exec.Cmd{Path: h.path, Args: []string{h.path}, Env: []string{}, Stdin: inR, Stdout: outW,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return err
	}
	h.cmd, h.in, h.out, h.r = cmd, inW, outR, bufio.NewReader(outR)
	return nil
}

func (h *schemaHelper) stop() {
	h.in.Close()
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
	h.out.Close()
	h.cmd, h.in, h.out, h.r = nil, nil, nil, nil
}
