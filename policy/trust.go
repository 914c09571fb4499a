package policy

// Which programs a start runs, so that each can be checked before anything runs (SPEC 9): the
// check itself (where a path lies against the writable roots) is the caller's.

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spear-shell/spear-shell/policy/paths"
)

// maxInterpreters bounds the chain of `#!` interpreters followed, as the kernel does.
const maxInterpreters = 4

// Programs returns every program starting the provider runs before its own code: Command[0]
// and, for a `#!` script, its interpreter (for `#!/usr/bin/env NAME`, NAME found on the
// provider's PATH, as env will find it), and so on down the chain. An error says what cannot
// be told: a spear-shell that cannot say what will run does not run it.
func (p *Provider) Programs() ([]string, error) {
	if len(p.Command) == 0 {
		return nil, fmt.Errorf("no program")
	}
	return Programs(p.Command[0], searchDirs(p.programEnv()))
}

// programEnv is the environment whose PATH a `#!/usr/bin/env NAME` of the server searches: the
// entry's env, then its env_file's PATH when it sets one (the file's variables come after env,
// so that is the PATH env will search). An env_file that cannot be read starts no server.
func (p *Provider) programEnv() map[string]string {
	if p.EnvFile == "" {
		return p.Env
	}
	file, err := ReadEnvFile(p.EnvFile)
	if err != nil {
		return p.Env
	}
	path, ok := file["PATH"]
	if !ok {
		return p.Env
	}
	env := maps.Clone(p.Env)
	if env == nil {
		env = map[string]string{}
	}
	env["PATH"] = path
	return env
}

// ApproverPrograms is Programs for the manifest's approver, which runs with SystemPath.
func (m *Manifest) ApproverPrograms() ([]string, error) {
	if len(m.Approver) == 0 {
		return nil, fmt.Errorf("no approver")
	}
	return Programs(m.Approver[0], searchDirs(nil))
}

// Programs returns prog and the chain of `#!` interpreters it starts, NAMEs of
// `#!/usr/bin/env NAME` found on dirs.
func Programs(prog string, dirs []string) ([]string, error) {
	progs := []string{prog}
	for range maxInterpreters {
		next, err := interpreters(progs[len(progs)-1], dirs)
		if err != nil || next == nil {
			return progs, err
		}
		progs = append(progs, next...)
	}
	return progs, fmt.Errorf("%s: more than %d levels of #! interpreters", prog, maxInterpreters)
}

// interpreters returns the programs a `#!` line of prog runs (nil when prog is not a script):
// the interpreter, and for `#!/usr/bin/env NAME` NAME too, found on dirs as env finds it
// with the provider's PATH. The last one is what runs the script.
func interpreters(prog string, dirs []string) ([]string, error) {
	f, err := os.OpenFile(prog, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prog, paths.UnwrapPath(err))
	}
	defer f.Close()
	head := make([]byte, 256) // the kernel reads no more of a #! line (BINPRM_BUF_SIZE)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", prog, err)
	}
	head = head[:n]
	if !bytes.HasPrefix(head, []byte("#!")) {
		return nil, nil
	}
	line, _, _ := bytes.Cut(head[2:], []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return nil, fmt.Errorf("%s: an empty #! line", prog)
	}
	interp := fields[0]
	if !filepath.IsAbs(interp) {
		return nil, fmt.Errorf("%s: #! interpreter %q is not an absolute path", prog, interp)
	}
	if filepath.Base(interp) != "env" {
		return []string{interp}, nil
	}
	// The kernel passes everything after the interpreter as one argument; env -S splits it.
	args := fields[1:]
	for len(args) > 0 && (strings.HasPrefix(args[0], "-") || strings.Contains(args[0], "=")) {
		switch a := args[0]; {
		case a == "-S" || a == "--split-string" || a == "-" || a == "-i" || a == "--ignore-environment" || strings.Contains(a, "="):
			args = args[1:]
		case strings.HasPrefix(a, "-S"):
			args[0] = a[2:]
		default:
			return nil, fmt.Errorf("%s: #!%s: cannot tell which program env runs with option %q", prog, interp, a)
		}
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: #!%s names no program", prog, interp)
	}
	path, msg := resolveCommand(args[0], dirs)
	if msg != "" {
		return nil, fmt.Errorf("%s: #!%s: %s", prog, interp, msg)
	}
	return []string{interp, path}, nil
}
