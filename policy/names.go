package policy

// namePattern matches the names that configuration keys allow, written out by hand: the
// equivalent regular expressions, compiled at package initialisation, cost most of a
// millisecond in every process that links this package (SPEC 10).
type namePattern struct {
	text        string // the equivalent regular expression, for messages
	first, rest func(byte) bool
	max         int // longest allowed length in bytes; 0 = unbounded
}

func (p namePattern) MatchString(s string) bool {
	if s == "" || (p.max > 0 && len(s) > p.max) || !p.first(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !p.rest(s[i]) {
			return false
		}
	}
	return true
}

func (p namePattern) String() string { return p.text }

func lower(c byte) bool { return c >= 'a' && c <= 'z' }
func upper(c byte) bool { return c >= 'A' && c <= 'Z' }
func digit(c byte) bool { return c >= '0' && c <= '9' }

func lowerDigitDashUnderscore(c byte) bool { return lower(c) || digit(c) || c == '_' || c == '-' }
func alnumDotDashUnderscore(c byte) bool {
	return lower(c) || upper(c) || digit(c) || c == '.' || c == '_' || c == '-'
}

var (
	nameRe     = namePattern{`^[a-z][a-z0-9_-]*$`, lower, lowerDigitDashUnderscore, 0}
	idRe       = namePattern{`^[a-z][a-z0-9_-]{0,62}$`, lower, lowerDigitDashUnderscore, 63}
	turnRe     = namePattern{`^[A-Za-z0-9._-]{1,128}$`, alnumDotDashUnderscore, alnumDotDashUnderscore, 128}
	toolNameRe = namePattern{`^[A-Za-z0-9_.-]{1,128}$`, alnumDotDashUnderscore, alnumDotDashUnderscore, 128}
	envNameRe  = namePattern{`^[A-Za-z_][A-Za-z0-9_]*$`,
		func(c byte) bool { return lower(c) || upper(c) || c == '_' },
		func(c byte) bool { return lower(c) || upper(c) || digit(c) || c == '_' }, 0}
)

// ValidID reports whether id may name a provider entry: [a-z][a-z0-9_-]{0,62}, not "spear".
func ValidID(id string) bool { return idRe.MatchString(id) && id != "spear" }

// ValidToolName reports whether a read entry may name tool: [A-Za-z0-9_.-]{1,128}.
func ValidToolName(tool string) bool { return toolNameRe.MatchString(tool) }

// ValidEnvName reports whether name may name a variable of env or an env_file.
func ValidEnvName(name string) bool { return envNameRe.MatchString(name) }
