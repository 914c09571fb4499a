package sandbox

// What one boundary is made of, decided at every start from cheap sources only (SPEC 9 and
// 10): the environment, one read of the manifest, and lstat calls. No configuration file is
// opened here.

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/spear-shell/spear-shell/policy/paths"
)

// manifestLimit bounds the cheap manifest read (policy refuses larger manifests anyway).
const manifestLimit = 1 << 20

// turnManifest is what the boundary reads of the turn manifest.
type turnManifest struct {
	Turn      string   `json:"turn"`
	Session   string   `json:"session"`
	Workspace string   `json:"workspace"`
	Writable  []string `json:"writable"`
	Audit     string   `json:"audit"`
	StateDir  string   `json:"state_dir"`
}

// Verdict is one trusted path and whether it can be trusted, for --check.
type Verdict struct {
	What string // what spear-shell uses it for: "bwrap", "manifest", "mask (SPEAR_HOME)"...
	Path string
	Err  error // nil: trusted
}

// BoundaryError is a refusal at start (SPEC 9): the command exits 126 with
// "spear-shell: boundary: <path>: <why>" and never runs unconfined instead.
type BoundaryError struct {
	Path, Why string
}

func (e *BoundaryError) Error() string { return "boundary: " + e.Path + ": " + e.Why }

// Plan is one boundary as decided at start. Err is the first refusal.
type Plan struct {
	workspace string
	Roots     []string // every writable root, resolved: the workspace, Writable, Tmp
	Writable  []string // bound at their own paths: the workspace and the manifest's writable
	Tmp       string   // the turn's temporary directory
	Masks     []string
	Verdicts  []Verdict // one per trusted path: the executables first, in their order
	Err       error
}

func (p *Plan) refuse(path, why string) {
	if p.Err == nil {
		p.Err = &BoundaryError{Path: path, Why: why}
	}
}

// trust records the verdict on path and refuses when it cannot be trusted.
func (p *Plan) trust(what, path string) {
	err := paths.CheckTrusted(path, p.Roots)
	p.Verdicts = append(p.Verdicts, Verdict{What: what, Path: path, Err: err})
	if err != nil {
		p.refuse(path, err.Error())
	}
}

// PlanBoundary decides the boundary: the writable roots from the manifest (its workspace,
// else, with no valid manifest, the working directory), the turn's temporary directory under
// parent, the masks, and a verdict on every trusted path (execs are bwrap, the real shell and
// this binary, in that order of names in execNames).
func PlanBoundary(getenv func(string) string, manifestPath, parent, cwd string, execs, execNames []string) *Plan {
	p := &Plan{}
	var m turnManifest
	if manifestPath != "" {
		manifestPath = absFrom(cwd, manifestPath)
		// A manifest policy refuses (unreadable, no absolute workspace) offers nothing, and the
		// shell still works (SPEC 2.4): in the working directory, as without a manifest.
		if readManifest(manifestPath, &m) != nil || !filepath.IsAbs(m.Workspace) {
			m = turnManifest{}
		}
	}
	p.workspace = m.Workspace
	if p.workspace == "" {
		p.workspace = cwd
	}
	if p.workspace != "" {
		if fi, err := os.Stat(p.workspace); err != nil || !fi.IsDir() {
			p.refuse(p.workspace, "the workspace is not a directory")
		} else {
			p.Writable = append(p.Writable, p.workspace)
		}
	}
	for _, w := range m.Writable {
		switch {
		case !filepath.IsAbs(w):
			p.refuse(manifestPath, fmt.Sprintf(`"writable" entry %q is not an absolute path`, w))
		case slices.Contains([]string{"/", "/tmp", "/var/tmp"}, filepath.Clean(w)):
			p.refuse(w, `cannot be writable: the host's /tmp and everything in it would be reachable`)
		default:
			if fi, err := os.Stat(w); err == nil && fi.IsDir() {
				p.Writable = append(p.Writable, w)
			}
		}
	}
	p.Tmp = turnTmp(parent, m, manifestPath, p.workspace)
	if p.Tmp == "" {
		p.refuse(filepath.Join(parent, "tmp"), "the turn's temporary directory cannot be made")
	}
	p.Roots = paths.WritableRoots(append(slices.Clone(p.Writable), p.Tmp)...)
	p.Writable = paths.WritableRoots(p.Writable...)
	tmpdirInTurn(p.Tmp, getenv("TMPDIR"), p.Writable)
	slices.Sort(p.Writable)
	p.Writable = slices.Compact(p.Writable)

	for i, e := range execs {
		p.trust(execNames[i], e)
	}
	p.trust("state parent", parent)
	if manifestPath != "" {
		p.trust("manifest", manifestPath)
	}
	p.planMasks(getenv, m, manifestPath, parent, cwd)
	return p
}

// planMasks decides the masks (SPEC 9): SPEAR_HOME, the directory holding the capabilities
// file, the manifest or an audit file when it lies outside SPEAR_HOME (a directory, so that a
// file replaced by sed -i or a rotation is hidden too), the state_dir, the state parent and
// $XDG_RUNTIME_DIR. Each must be trusted and must not hide what the shell needs; a missing one
// is created 0700 (otherwise what appears there later would be visible).
func (p *Plan) planMasks(getenv func(string) string, m turnManifest, manifestPath, parent, cwd string) {
	type want struct{ what, path string }
	home := absFrom(cwd, SpearHome(getenv))
	wants := []want{{"SPEAR_HOME", home}, {"state parent", parent}}
	dirOf := func(what, file string) {
		if file == "" {
			return
		}
		file = absFrom(cwd, file)
		if home == "" || !paths.Within(file, home) {
			wants = append(wants, want{what, filepath.Dir(file)})
		}
	}
	dirOf("directory of SPEAR_CAPABILITIES_FILE", getenv("SPEAR_CAPABILITIES_FILE"))
	dirOf("directory of SPEAR_AUDIT_FILE", getenv("SPEAR_AUDIT_FILE"))
	dirOf("directory of the manifest", manifestPath)
	if filepath.IsAbs(m.Audit) {
		dirOf(`directory of the manifest's "audit"`, m.Audit)
	}
	if filepath.IsAbs(m.StateDir) {
		wants = append(wants, want{`the manifest's "state_dir"`, filepath.Clean(m.StateDir)})
	}
	if r := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(r) {
		wants = append(wants, want{"XDG_RUNTIME_DIR", filepath.Clean(r)})
	}
	never := []string{"/", "/etc", "/usr", "/var", "/tmp", "/var/tmp"}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		never = append(never, h)
	}
	never = append(paths.WritableRoots(never...), never...)
	var masks []string
	for _, w := range wants {
		if w.path == "" {
			continue
		}
		p.trust("mask: "+w.what, w.path)
		real, err := filepath.EvalSymlinks(w.path)
		if errors.Is(err, fs.ErrNotExist) && p.Err == nil {
			if err = os.MkdirAll(w.path, 0o700); err == nil {
				real, err = filepath.EvalSymlinks(w.path)
			}
		}
		if err != nil {
			continue // this user cannot reach it, so neither can the shell
		}
		if slices.Contains(never, real) || slices.Contains(p.Roots, real) {
			p.refuse(w.path, fmt.Sprintf("the %s would be masked, and masking %s hides what the shell needs; keep it in a directory of its own", w.what, real))
			continue
		}
		masks = append(masks, real)
	}
	p.Masks = outermost(masks)
}

// outermost sorts and deduplicates dirs and drops every one inside another.
func outermost(dirs []string) []string {
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	var out []string
	for _, d := range dirs {
		if len(out) == 0 || !paths.Within(d, out[len(out)-1]) {
			out = append(out, d)
		}
	}
	return out
}

// readManifest decodes what the boundary needs of the manifest.
func readManifest(path string, m *turnManifest) error {
	f, err := os.Open(path)
	if err != nil {
		return paths.UnwrapPath(err)
	}
	defer f.Close()
	return json.NewDecoder(io.LimitReader(f, manifestLimit)).Decode(m)
}

// turnTmp makes the turn's temporary directory, parent/tmp/<key> (0700), and returns it; ""
// when it cannot. The key is the same for every process of one turn (manifest, turn, session,
// workspace), so a file one command leaves in /tmp is there for the next.
func turnTmp(parent string, m turnManifest, manifestPath, workspace string) string {
	h := fnv.New64a()
	for _, s := range []string{manifestPath, m.Turn, m.Session, workspace} {
		h.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
	}
	dir := filepath.Join(parent, "tmp")
	tmp := filepath.Join(dir, strconv.FormatUint(h.Sum64(), 16))
	for _, d := range []string{dir, tmp} {
		if paths.PrivateDir(d) != nil {
			return ""
		}
	}
	return tmp
}

// absFrom makes p absolute against dir ("" stays "").
func absFrom(dir, p string) string {
	if p == "" {
		return ""
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
