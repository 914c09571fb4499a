// Package policy loads the deployment's registry and the turn manifest, decides which
// providers a turn is offered and why, classifies tools and gates writes.
package policy

// CONTRACT (agreed between packages; the implementer may add, not change):
//
//	// Problem is one configuration error; it names the file, the entry and the key.
//	type Problem struct{ File, Entry, Key, Msg string }
//	func (p *Problem) Error() string // `capabilities.json: provider "x": key "scope": must be ...`
//
//	type Paths struct {
//		Home             string // SPEAR_HOME (resolved by the caller)
//		CapabilitiesFile string // "" means Home/capabilities.json
//		PathEnv          string // the PATH used to resolve command[0] (relative entries dropped)
//		Workspace        string // removed from PathEnv too
//	}
//	func DefaultHome(getenv func(string) string) string // SPEAR_HOME, $XDG_CONFIG_HOME/spear, ~/.config/spear
//
//	type Registry struct {
//		Home      string
//		Projects  []Project
//		Providers []Provider // valid entries only, in file order
//		Problems  []*Problem // every rejected entry / key, in file order
//		Rejected  []Rejected // providers left out: id (if known) and why
//	}
//	type Rejected struct{ ID, Reason string }
//	// Load never fails as a whole for a bad entry; a fatal error (unreadable, not JSON,
//	// group/world-writable file) gives a registry with no providers and that error.
//	func Load(p Paths) (*Registry, error)
//
//	type Project struct{ Name, Root string; Families []string }
//	type Scope struct {
//		Kind  string   // "global", "corpus", "family", "path"; "" = applies nowhere
//		Names []string // corpus / family
//		Path  string   // path
//	}
//	type Provider struct {
//		ID      string
//		Command []string          // Command[0] absolute
//		Scope   Scope
//		Tasks   []string
//		Env     map[string]string
//		Read    []string
//		Write   string            // "refuse", "confirm", "allow"
//		Enabled bool
//		Timeout time.Duration
//	}
//	func (p *Provider) Class(tool string) string // "READ" if tool is in Read, else "WRITE"
//	type Launch struct{ Path string; Args []string; Dir string; Env []string }
//	// Launch: absolute command, Dir = home, Env exactly PATH and HOME (from getenv) plus p.Env, sorted.
//	func (p *Provider) Launch(home string, getenv func(string) string) Launch
//	func (r *Registry) Secrets() []string // every env value of 6 bytes or more, all providers
//
//	type Manifest struct {
//		Turn, Session, Workspace, Project, Task, Pass, Runtime, PermissionMode string
//		Approver        []string
//		ApproverTimeout time.Duration
//		Audit, StateDir string // as given ("" if absent)
//	}
//	// LoadManifest validates strictly; Workspace defaults to cwd. Errors name the key.
//	func LoadManifest(path, cwd string) (*Manifest, error)
//
//	type Decision struct {
//		Provider string
//		Offered  bool
//		Reason   string // why (scope, task class, pass, runtime, enabled) - for the audit only
//		ReadOnly bool   // general turn: READ capabilities only
//	}
//	type Offer struct {
//		Project   string     // the resolved project, "" if none
//		Reason    string     // when nothing can be offered: why (for the audit)
//		Decisions []Decision // one per registered provider, registry order
//	}
//	func (r *Registry) Offer(m *Manifest) Offer
//
//	// The write gate (SPEC 2.7).
//	type Gate int
//	const ( GateRefuse Gate = iota; GateRun; GateAsk; GateAutoApproved )
//	func WriteGate(write, mode string) Gate
//	type ApprovalRequest struct {
//		Turn, Session, Capability, Class, Description string
//		Arguments json.RawMessage
//	}
//	// Approve runs the approver (stdin: the request as one JSON object; stdout/stderr discarded)
//	// and approves only on exit 0 within timeout. reason says why not.
//	func Approve(ctx context.Context, approver []string, timeout time.Duration, req ApprovalRequest) (ok bool, reason string)
