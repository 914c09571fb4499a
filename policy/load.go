package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/spear-shell/spear-shell/policy/paths"
)

// DefaultHome returns SPEAR_HOME, else $XDG_CONFIG_HOME/spear (when absolute, as the
// XDG spec says), else ~/.config/spear; "" when none can be formed.
func DefaultHome(getenv func(string) string) string {
	if h := getenv("SPEAR_HOME"); h != "" {
		return h
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "spear")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "spear")
	}
	return ""
}

// readConfig reads one of the deployment's files: a regular file, not group- or
// world-writable, at most limit bytes, valid UTF-8 JSON. The mode is checked on the
// opened file so a swap between check and read cannot pass.
func readConfig(path string, limit int64) ([]byte, *Problem) {
	fileErr := func(msg string, err error) *Problem { return &Problem{File: path, Msg: msg, err: err} }
	if !filepath.IsAbs(path) {
		return nil, fileErr("path must be absolute", nil)
	}
	// O_NONBLOCK: opening a FIFO planted in place of the file must not hang.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fileErr("does not exist", err)
		}
		return nil, fileErr(fmt.Sprintf("cannot be opened: %v", paths.UnwrapPath(err)), err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fileErr(fmt.Sprintf("cannot be inspected: %v", paths.UnwrapPath(err)), err)
	}
	if !st.Mode().IsRegular() {
		return nil, fileErr("is not a regular file", nil)
	}
	if perm := st.Mode().Perm(); perm&0o022 != 0 {
		return nil, fileErr(fmt.Sprintf("mode %04o is group- or world-writable: refused", perm), nil)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fileErr(fmt.Sprintf("cannot be read: %v", paths.UnwrapPath(err)), err)
	}
	if int64(len(data)) > limit {
		return nil, fileErr(fmt.Sprintf("is larger than %d bytes", limit), nil)
	}
	if p := checkJSON(path, data); p != nil {
		return nil, p
	}
	return data, nil
}

// checkJSON refuses what is not one JSON value in UTF-8 (RFC 8259); encoding/json
// alone would let invalid UTF-8 through as U+FFFD.
func checkJSON(path string, data []byte) *Problem {
	if !utf8.Valid(data) || !json.Valid(data) {
		return &Problem{File: path, Msg: "not valid JSON"}
	}
	return nil
}

// Load reads projects.json and capabilities.json. A bad entry is left out and recorded
// in Problems (and Rejected for providers); the rest stand. A fatal error (a file
// missing, unreadable, not JSON, with a wrong top level, or group/world-writable; a
// relative Home) gives a registry with no projects and no providers, and that error
// (a *Problem, or several joined). A missing file's error Is fs.ErrNotExist.
func Load(p Paths) (*Registry, error) {
	reg := &Registry{Home: p.Home, Broker: DefaultBroker()}
	if !filepath.IsAbs(p.Home) {
		return reg, &Problem{File: "SPEAR_HOME", Msg: fmt.Sprintf("%q is not an absolute directory", p.Home)}
	}
	capsFile := p.CapabilitiesFile
	if capsFile == "" {
		capsFile = filepath.Join(p.Home, "capabilities.json")
	}

	projData, projErr := readConfig(filepath.Join(p.Home, "projects.json"), MaxConfigBytes)
	capsData, capsErr := readConfig(capsFile, MaxConfigBytes)
	reg.projectsData, reg.capabilitiesData = projData, capsData
	var fatal fatalErrors
	var projects []Project
	var projProblems []*Problem
	if projErr != nil {
		fatal = append(fatal, projErr)
	} else if projects, projProblems, projErr = parseProjects(filepath.Join(p.Home, "projects.json"), projData); projErr != nil {
		fatal = append(fatal, projErr)
	}
	var pr providersResult
	if capsErr != nil {
		fatal = append(fatal, capsErr)
	} else {
		pr = parseProviders(capsFile, p.Home, capsData)
		if pr.fatal != nil {
			fatal = append(fatal, pr.fatal)
		}
	}
	// Secrets of every readable env, valid entry or not, so redaction covers them
	// even when the file as a whole is refused.
	reg.secrets = pr.secrets
	if len(fatal) == 1 {
		return reg, fatal[0]
	}
	if len(fatal) > 1 {
		return reg, fatal
	}
	reg.Projects = projects
	reg.Providers = pr.providers
	reg.Problems = append(projProblems, pr.problems...)
	reg.Rejected = pr.rejected
	reg.PromptDirs = pr.prompts
	reg.Broker = pr.broker
	checkBrokerAudit(capsFile, p, &reg.Broker, &reg.Problems)
	reg.LockRequired = pr.lockRequired
	return reg, nil
}

// fatalErrors joins file-level errors on one line (a reason is printed as one line).
type fatalErrors []error

func (f fatalErrors) Error() string {
	var b strings.Builder
	for i, err := range f {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (f fatalErrors) Unwrap() []error { return f }
