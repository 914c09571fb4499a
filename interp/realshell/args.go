package realshell

import (
	"slices"
	"strings"
)

// ManifestPath is the turn manifest the command line names: --manifest, else SPEAR_TURN_MANIFEST.
func (a Args) ManifestPath(getenv func(string) string) string {
	if a.Manifest != "" {
		return a.Manifest
	}
	return getenv("SPEAR_TURN_MANIFEST")
}

// Mode is how spear-shell was asked to run, read the way bash reads its own command line.
type Mode int

const (
	ModeSession  Mode = iota // commands on stdin (no -c and no file, or -s, or -i)
	ModeString               // -c STRING [NAME [ARG...]]
	ModeScript               // FILE [ARG...]: forwarded as it is
	ModeBashOnly             // --version, --help and the like: bash answers
)

// Args is spear-shell's command line: spear-shell's own options taken out, bash's kept in order.
type Args struct {
	Mode     Mode
	Bash     []string // the command line for the real shell, without spear-shell's own options
	Options  []string // bash's options alone (what precedes -c STRING or FILE), -c/-s/-i removed
	String   string   // ModeString: the command string
	Name     string   // ModeString: $0 when given
	HasName  bool
	Params   []string // positional parameters
	NoExec   bool     // -n: bash only reads
	Terminal bool     // -i
	Own      string   // "check", "context", "end-turn", "import", "keeper", "lock", "spear-version", "broker", "broker-stop", "broker-release", "broker-serve", or ""
	OwnArgs  []string // --import: everything after it
	Release  string   // --broker-release ID
	Diff     bool     // --lock --diff
	IDs      []string // --lock's provider ids (its operands)
	Manifest string   // --manifest FILE
	Problem  string   // spear-shell's own option misused
}

// bashOptionArg lists bash's single-letter options that take the next argument.
const bashOptionArg = "oO"

// ParseArgs reads args (without argv[0]) as bash does: long options first, then single-letter
// options (each may be grouped, -o/-O take an argument, +o works likewise), up to `--`, `-` or the
// first operand. With -c the first operand is the string and the rest are $0 and the parameters.
func ParseArgs(args []string) Args {
	var a Args
	cFlag, sFlag := false, false
	i := 0
	for ; i < len(args); i++ {
		arg := args[i]
		switch arg {
		case "--spear-version":
			a.Own = "spear-version"
			continue
		case "--check":
			a.Own = "check"
			continue
		case "--context":
			a.Own = "context"
			continue
		case "--end-turn":
			a.Own = "end-turn"
			continue
		case "--import": // the rest is the import's (docs/import.md)
			a.Own, a.OwnArgs = "import", args[i+1:]
			return a
		case "--lock":
			a.Own = "lock"
			continue
		case "--diff":
			a.Diff = true
			continue
		case "--spear-keeper": // hidden: a turn's keeper (SPEC 12), started by spear-shell itself
			a.Own = "keeper"
			continue
		case "--broker", "--broker-stop": // the broker (SPEC 14): in the foreground; stopped
			a.Own = arg[2:]
			continue
		case "--spear-broker": // hidden: an on-demand broker, started by spear-shell itself
			a.Own = "broker-serve"
			continue
		case "--broker-release":
			a.Own = "broker-release"
			if i+1 >= len(args) || args[i+1] == "" {
				a.Problem = "--broker-release needs a provider id"
				continue
			}
			i++
			a.Release = args[i]
			continue
		case "--manifest":
			if i+1 >= len(args) {
				a.Problem = "--manifest needs a file"
				continue
			}
			i++
			a.Manifest = args[i]
			continue
		}
		if v, ok := strings.CutPrefix(arg, "--manifest="); ok {
			a.Manifest = v
			continue
		}
		if arg == "--" || arg == "-" {
			a.Bash = append(a.Bash, arg)
			i++
			break
		}
		if strings.HasPrefix(arg, "--") {
			a.Bash = append(a.Bash, arg)
			a.Options = append(a.Options, arg)
			switch arg {
			case "--version", "--help", "--dump-strings", "--dump-po-strings":
				a.Mode = ModeBashOnly
			case "--rcfile", "--init-file":
				if i+1 < len(args) {
					i++
					a.Bash = append(a.Bash, args[i])
					a.Options = append(a.Options, args[i])
				}
			}
			continue
		}
		if len(arg) < 2 || (arg[0] != '-' && arg[0] != '+') {
			break
		}
		a.Bash = append(a.Bash, arg)
		kept := arg[:1]
		takes := 0
		for _, c := range arg[1:] {
			switch {
			case c == 'c' && arg[0] == '-':
				cFlag = true
				continue
			case c == 's' && arg[0] == '-':
				sFlag = true
				continue
			case c == 'i' && arg[0] == '-':
				a.Terminal = true
				continue
			case c == 'n' && arg[0] == '-':
				a.NoExec = true
			case strings.ContainsRune(bashOptionArg, c):
				takes++
			}
			kept += string(c)
		}
		if len(kept) > 1 {
			a.Options = append(a.Options, kept)
		}
		for ; takes > 0 && i+1 < len(args); takes-- {
			i++
			a.Bash = append(a.Bash, args[i])
			a.Options = append(a.Options, args[i])
		}
	}
	rest := args[i:]
	if a.Own == "lock" {
		a.IDs = rest // provider ids, not a script
	} else if a.Diff {
		a.Problem = "--diff goes with --lock"
	}
	a.Bash = append(a.Bash, rest...)
	switch {
	case a.Mode == ModeBashOnly:
	case cFlag:
		a.Mode = ModeString
		if len(rest) == 0 {
			// bash reports "-c: option requires an argument" itself.
			a.Mode = ModeBashOnly
			break
		}
		a.String = rest[0]
		if len(rest) > 1 {
			a.Name, a.HasName = rest[1], true
			a.Params = rest[2:]
		}
	case sFlag || len(rest) == 0:
		a.Mode = ModeSession
		a.Params = rest
	default:
		a.Mode = ModeScript
	}
	return a
}

// Argv0Args is a.Bash for a shell started by its own path (bwrap cannot set argv[0]) that is
// to behave as if started with argv0, as bash does: a leading "-" makes a login shell (-l),
// and a -c string without NAME gets argv0 as $0, which bash also puts before its messages.
func (a Args) Argv0Args(argv0 string) []string {
	out := a.Bash
	if strings.HasPrefix(argv0, "-") && a.Mode != ModeBashOnly {
		// after bash's long options, which must come first
		i := 0
		for i < len(out) && strings.HasPrefix(out[i], "--") && out[i] != "--" {
			i++
		}
		out = slices.Insert(slices.Clone(out), i, "-l")
	}
	if a.Mode == ModeString && !a.HasName {
		out = append(slices.Clone(out), argv0)
	}
	return out
}
