package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
	"github.com/spear-shell/spear-shell/policy/paths"
)

// Usage is the command line Run takes (after --import).
const Usage = "usage: spear-shell --import claude-code|codex|gemini [FILE] [--scope SCOPE] [--read-from-annotations]"

// StartTimeout bounds starting and listing one server for --read-from-annotations.
const StartTimeout = 30 * time.Second

// Run is `spear-shell --import ARGS`: exit 0 when every server was imported, 1 when some were
// left out, 2 when the import could not be done (nothing is written then).
func Run(ctx context.Context, args []string, getenv func(string) string, writable []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: --import: %v\n%s\n", err, Usage)
		return 2
	}
	o.WritableRoots = writable
	p, err := Decide(o)
	if err == nil && o.ReadFromAnnotations {
		err = p.readFromAnnotations(ctx, o)
	}
	if err == nil {
		err = p.writeEnvFiles()
	}
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: --import: %v\n", err)
		return 2
	}
	out, _ := json.MarshalIndent(map[string]any{"providers": p.Entries}, "", "  ")
	stdout.Write(append(escapeInvisible(out), '\n'))
	for _, n := range p.Notes {
		fmt.Fprintf(stderr, "spear-shell: --import: %s\n", n)
	}
	for _, l := range p.LeftOut {
		fmt.Fprintf(stderr, "spear-shell: --import: server %s left out: %s\n", strconv.Quote(l.Name), l.Reason)
	}
	if o.Scope == "" && len(p.Entries) > 0 {
		fmt.Fprintln(stderr, "spear-shell: --import: no --scope: these entries apply nowhere until each is given a scope")
	}
	fmt.Fprintf(stderr, "spear-shell: --import: %s: %d imported, %d left out; review them, then add them to capabilities.json's providers\n",
		p.File, len(p.Entries), len(p.LeftOut))
	if len(p.LeftOut) > 0 {
		return 1
	}
	return 0
}

// escapeInvisible writes each non-ASCII rune of a JSON text that a terminal would act on or hide
// (C1 controls such as U+009B, bidi overrides, other format characters) as a \u escape, which
// reads back as the same value: encoding/json escapes only those below U+0020 (and U+2028/9).
// Such runes can only lie inside the text's strings.
func escapeInvisible(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r < utf8.RuneSelf || unicode.IsGraphic(r) {
			if out != nil {
				out = append(out, b[i:i+n]...)
			}
			i += n
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(b)+16), b[:i]...)
		}
		for _, u := range utf16.Encode([]rune{r}) {
			out = fmt.Appendf(out, "\\u%04x", u)
		}
		i += n
	}
	if out == nil {
		return b
	}
	return out
}

func parseArgs(args []string, getenv func(string) string) (Options, error) {
	o := Options{Getenv: getenv, Home: getenv("HOME"), Path: getenv("PATH"),
		SpearHome: policy.DefaultHome(getenv), CapabilitiesFile: getenv("SPEAR_CAPABILITIES_FILE")}
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--read-from-annotations":
			o.ReadFromAnnotations = true
		case a == "--scope":
			if i+1 >= len(args) {
				return o, errors.New("--scope needs a scope")
			}
			i++
			o.Scope = args[i]
		case strings.HasPrefix(a, "--scope="):
			o.Scope = strings.TrimPrefix(a, "--scope=")
		case strings.HasPrefix(a, "-") && a != "-":
			return o, fmt.Errorf("unknown option %s", strconv.Quote(a))
		default:
			pos = append(pos, a)
		}
	}
	switch {
	case len(pos) == 0:
		return o, errors.New("name the terminal")
	case len(pos) > 2:
		return o, errors.New("one terminal and at most one file")
	case !slices.Contains(Terminals, pos[0]):
		return o, fmt.Errorf("unknown terminal %s: claude-code, codex or gemini", strconv.Quote(pos[0]))
	}
	o.Terminal = pos[0]
	if len(pos) == 2 {
		o.File = pos[1]
		if !filepath.IsAbs(o.File) {
			wd, err := os.Getwd()
			if err != nil {
				return o, err
			}
			o.File = filepath.Join(wd, o.File)
		}
	}
	if o.Home == "" && o.File == "" {
		return o, errors.New("HOME is not set: name the file")
	}
	return o, nil
}

// readFromAnnotations starts each entry's server as spear-shell would (the fixed PATH, HOME,
// its env) and proposes its tools annotated readOnlyHint: true as read, leaving out the tools
// the terminal's filters leave out. The servers run outside any boundary, with the user's
// rights: a settings file the agent could have written is refused.
func (p *Plan) readFromAnnotations(ctx context.Context, o Options) error {
	roots := append(slices.Clone(o.WritableRoots), projectRoots(o.SpearHome)...)
	if err := paths.CheckTrusted(p.File, paths.WritableRoots(roots...)); err != nil {
		return fail("%s: --read-from-annotations starts the servers it names outside any boundary, so it refuses a settings file an agent could have written (a registered project root or a writable root): %v", p.File, err)
	}
	dir := o.SpearHome
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = o.Home
	}
	writable := paths.WritableRoots(roots...)
	kept := p.Entries[:0]
	for i := range p.Entries {
		e := &p.Entries[i]
		env := map[string]string{}
		for _, v := range p.envs[e.ID] {
			env[v.name] = v.value
		}
		prov := policy.Provider{ID: e.ID, Command: e.Command, Env: env}
		// The program and its #! interpreters are checked as a provider's are (SPEC 9): the
		// settings file being the user's does not make what it names out of an agent's reach.
		if why := untrustedProgram(&prov, writable); why != nil {
			p.LeftOut = append(p.LeftOut, leftOut{p.names[e.ID], "not started for --read-from-annotations, and left out: " + why.Error()})
			delete(p.envs, e.ID)
			continue
		}
		kept = append(kept, *e)
		e = &kept[len(kept)-1]
		l, _ := prov.Launch(dir, o.Getenv) // no env_file yet: no error
		sctx, cancel := context.WithTimeout(ctx, StartTimeout)
		c, err := mcpstdio.Start(sctx, mcpstdio.Command{Path: l.Path, Args: l.Args, Dir: l.Dir, Env: mcpstdio.NewEnv(l.Env)},
			mcpstdio.Options{ClientName: "spear-shell-import", ClientVersion: "1"})
		var tools []mcpstdio.Tool
		if err == nil {
			tools, err = c.ListTools(sctx)
			c.Close()
		}
		cancel()
		if err != nil {
			red := policyRedactor(p.envs[e.ID])
			p.Notes = append(p.Notes, fmt.Sprintf("server for %s could not be started and listed, so no read is proposed: %s", e.ID, red(err.Error())))
			continue
		}
		f := p.filters[e.ID]
		for _, t := range tools {
			if readOnlyHint(t.Raw) && f.admits(t.Name) && policy.ValidToolName(t.Name) && !slices.Contains(e.Read, t.Name) {
				e.Read = append(e.Read, t.Name)
			}
		}
	}
	p.Entries = kept
	return nil
}

// untrustedProgram says why a server's program chain cannot be started outside the boundary
// (nil when it can): a program that cannot be told, or lies within an agent's reach.
func untrustedProgram(prov *policy.Provider, writable []string) error {
	progs, err := prov.Programs()
	if err != nil {
		return err
	}
	for _, pg := range progs {
		if err := paths.CheckTrusted(pg, writable); err != nil {
			return fmt.Errorf("%s: %w", pg, err)
		}
	}
	return nil
}

// policyRedactor hides a server's env values (6 bytes or more) in a message about it.
func policyRedactor(env []envVar) func(string) string {
	return func(s string) string {
		for _, v := range env {
			if len(v.value) >= policy.MinSecretLen {
				s = strings.ReplaceAll(s, v.value, "[REDACTED]")
			}
		}
		return s
	}
}

// filter is a terminal's tool filter for one server.
type filter struct{ include, exclude []string }

func (f filter) admits(tool string) bool {
	return (f.include == nil || slices.Contains(f.include, tool)) && !slices.Contains(f.exclude, tool)
}

func readOnlyHint(raw json.RawMessage) bool {
	var t struct {
		Annotations struct {
			ReadOnlyHint bool `json:"readOnlyHint"`
		} `json:"annotations"`
	}
	return json.Unmarshal(raw, &t) == nil && t.Annotations.ReadOnlyHint
}

// projectRoots are the registered project roots (projects.json), when it can be read.
func projectRoots(home string) []string {
	data, err := os.ReadFile(filepath.Join(home, "projects.json"))
	if err != nil {
		return nil
	}
	var reg struct {
		Projects []struct {
			Root string `json:"root"`
		} `json:"projects"`
	}
	_ = json.Unmarshal(data, &reg)
	var out []string
	for _, p := range reg.Projects {
		if filepath.IsAbs(p.Root) {
			out = append(out, p.Root)
		}
	}
	return out
}

// writeEnvFiles writes each entry's env_file: the folder 0700 (made if missing), each file
// created exclusively, 0600. Either all are written or none is left.
func (p *Plan) writeEnvFiles() error {
	var files []string
	for _, e := range p.Entries {
		if e.EnvFile != "" {
			files = append(files, e.EnvFile)
		}
	}
	if len(files) == 0 {
		return nil
	}
	dir := filepath.Dir(files[0])
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fail("%s: %v", filepath.Dir(dir), paths.UnwrapPath(err))
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fail("%s: %v", dir, paths.UnwrapPath(err))
	}
	st, err := os.Lstat(dir)
	switch {
	case err != nil:
		return fail("%s: %v", dir, paths.UnwrapPath(err))
	case !st.IsDir():
		return fail("%s: not a directory", dir)
	case st.Mode().Perm() != 0o700:
		return fail("%s: mode %04o, not 0700 (chmod 700)", dir, st.Mode().Perm())
	case st.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()):
		return fail("%s: not owned by this user", dir)
	}
	var exist []string
	for _, f := range files {
		if _, err := os.Lstat(f); err == nil {
			exist = append(exist, f)
		}
	}
	if len(exist) > 0 {
		verb := "exists"
		if len(exist) > 1 {
			verb = "exist"
		}
		return fail("%s already %s (an earlier import?): remove or rename it; nothing was written", strings.Join(exist, ", "), verb)
	}
	var made []string
	undo := func() {
		for _, f := range made {
			_ = os.Remove(f)
		}
	}
	for _, e := range p.Entries {
		if e.EnvFile == "" {
			continue
		}
		var b bytes.Buffer
		for _, v := range p.envs[e.ID] {
			fmt.Fprintf(&b, "%s=%s\n", v.name, v.value)
		}
		f, err := os.OpenFile(e.EnvFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			undo()
			return fail("%s: %v; nothing was written", e.EnvFile, paths.UnwrapPath(err))
		}
		made = append(made, e.EnvFile)
		_, werr := f.Write(b.Bytes())
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			undo()
			return fail("%s: %v; nothing was written", e.EnvFile, paths.UnwrapPath(werr))
		}
	}
	return nil
}
