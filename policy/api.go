// Package policy loads the deployment's registry and the turn manifest, decides which
// providers a turn is offered and why, classifies tools and gates writes. Layer 1: of ours it
// imports only policy/paths and policy/lock, never interp/ or capability/ (docs/layout.md).
package policy

import (
	"fmt"
	"strings"
	"time"
)

// Problem is one configuration error; it names the file, the entry and the key.
// Entry and Key are empty for a file-level problem (unreadable, not JSON, wrong top
// level, unsafe mode); Key is empty for an entry that is not a JSON object.
// Messages never contain a value of an entry's env.
type Problem struct {
	File, Entry, Key, Msg string

	err error // the underlying cause, for errors.Is (fs.ErrNotExist)
}

// Error renders `capabilities.json: provider "x": key "scope": must be ...`.
func (p *Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Entry != "" {
		b.WriteString(": ")
		b.WriteString(p.Entry)
	}
	if p.Key != "" {
		fmt.Fprintf(&b, ": key %q", p.Key)
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	return b.String()
}

// Unwrap gives the cause of a file-level problem (for example fs.ErrNotExist).
func (p *Problem) Unwrap() error { return p.err }

// Paths says where the registry is.
type Paths struct {
	Home             string // SPEAR_HOME (resolved by the caller); must be absolute
	CapabilitiesFile string // "" means Home/capabilities.json; else must be absolute
	// AuditFile is SPEAR_AUDIT_FILE ("" when unset): its directory is where broker.audit may
	// lie besides SPEAR_HOME (SPEC 2.3).
	AuditFile string
}

// SystemPath is the PATH a provider's programs are found on and run with, unless its
// entry's env sets PATH (SPEC 2.3). The agent's PATH is never used: a directory on it
// may be one the agent writes to.
const SystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Registry is the loaded projects.json and capabilities.json.
type Registry struct {
	Home      string
	Projects  []Project
	Providers []Provider // valid entries only, in file order
	Problems  []*Problem // every rejected entry / key, in file order (projects first)
	Rejected  []Rejected // providers left out: id (if known) and why
	// PromptDirs are the capabilities file's prompt directories (SPEC 2.3), served by the MCP
	// face only; the face checks that each is trusted before it reads it.
	PromptDirs []string
	// Broker holds the file's broker settings (SPEC 14), defaults filled in.
	Broker Broker
	// LockRequired: "lock": "required" (SPEC 15), a missing lock file gives no providers.
	LockRequired bool

	secrets []string
	// The bytes of projects.json and of the capabilities file as read (nil: not read).
	projectsData, capabilitiesData []byte
}

// Sources are the bytes projects.json and the capabilities file were loaded from (nil for a
// file that could not be read), so that what identifies a configuration is what was used.
func (r *Registry) Sources() (projects, capabilities []byte) {
	return r.projectsData, r.capabilitiesData
}

// Rejected is a provider entry left out of the registry.
type Rejected struct{ ID, Reason string }

// Project is one valid entry of projects.json. Root is absolute and clean.
type Project struct {
	Name     string
	Root     string
	Families []string
}

// Scope says where a provider applies.
type Scope struct {
	Kind  string   // "global", "corpus", "family", "path"; "" = applies nowhere
	Names []string // corpus / family
	Path  string   // path: absolute, as written
}

// Scope kinds.
const (
	ScopeGlobal = "global"
	ScopeCorpus = "corpus"
	ScopeFamily = "family"
	ScopePath   = "path"
)

// Provider is one valid entry of capabilities.json.
type Provider struct {
	ID      string
	Command []string // Command[0] absolute, an executable regular file when loaded
	Scope   Scope
	Tasks   []string
	Env     map[string]string
	EnvFile string // absolute, under Home or the capabilities file's directory; read at each start (ReadEnvFile)
	Read    []string
	Write   string // "refuse", "confirm", "allow"
	Enabled bool
	Timeout time.Duration

	// MaxMessage is the largest message, in bytes, accepted from the server (max_message).
	MaxMessage int

	// Share is ShareProject or ShareAll for an entry the broker runs (SPEC 14), "" for a
	// provider that is the turn's own.
	Share string
	// RestartDelay is how long the broker waits before it starts a shared server that stopped
	// (restart_delay; DefaultRestartDelay when the entry is shared and does not say).
	RestartDelay time.Duration
}

// Task classes, passes, runtimes, permission modes and write policies.
const (
	TaskImplementation   = "implementation"
	TaskMixed            = "mixed"
	TaskGeneral          = "general"
	TaskStandardQuestion = "standard-question"

	PassNormativePrepass = "normative-prepass"
	PassImplementation   = "implementation"
	PassComplianceCheck  = "compliance-check"

	RuntimeGateway = "gateway"
	RuntimeEarlier = "earlier"

	ModeAsk         = "ask"
	ModeReadOnly    = "read-only"
	ModeAutoApprove = "auto-approve"

	TerminalNone          = "none"
	TerminalClaudeCode    = "claude-code"
	TerminalCodex         = "codex"
	TerminalGemini        = "gemini"
	TerminalTerminalBench = "terminal-bench"

	WriteRefuse  = "refuse"
	WriteConfirm = "confirm"
	WriteAllow   = "allow"

	ClassRead  = "READ"
	ClassWrite = "WRITE"
)

// Defaults and bounds.
const (
	DefaultTimeout         = 30 * time.Second
	DefaultApproverTimeout = 120 * time.Second
	MaxTimeout             = time.Hour // provider timeout and approver_timeout
	DefaultKeepProviders   = 300 * time.Second
	MaxKeepProviders       = 86400 * time.Second
	MinTimeout             = time.Millisecond
	DefaultMaxMessage      = 64 << 20 // a provider's max_message (SPEC 6)
	MaxMaxMessage          = 1 << 30
	MinMaxMessage          = 64 << 10 // below this even a modest tools/list cannot arrive
	MaxConfigBytes         = 4 << 20  // projects.json, capabilities.json
	MaxManifestBytes       = 1 << 20
)

// Manifest is a validated turn manifest (SPEC 2.4). Defaults are filled in.
type Manifest struct {
	Turn, Session, Workspace, Project, Task, Pass, Runtime, PermissionMode string

	// WorkspaceDefaulted: the manifest names no workspace, and Workspace is the current
	// directory (which the boundary does not allow: SPEC 2.4).
	WorkspaceDefaulted bool

	// Terminal is the agent terminal whose envelopes the turn accepts (SPEC 3, 11);
	// TerminalNone by default.
	Terminal string

	Source []byte // the bytes it was loaded from

	Approver        []string // Approver[0] absolute; nil when absent
	ApproverTimeout time.Duration
	Audit, StateDir string // as given ("" if absent); absolute when given

	// Writable lists the directories writable inside the boundary besides the defaults
	// (SPEC 9), absolute and clean. Nothing trusted may lie in one.
	Writable []string
	// KeepProviders is how long the turn's keeper keeps its providers up without a request
	// (SPEC 12); 0: no keeper, every -c answer starts its providers itself.
	KeepProviders time.Duration
}

// Decision says whether one registered provider is offered to the turn, and why.
type Decision struct {
	Provider string
	Offered  bool
	Reason   string // why (scope, task class, pass, runtime, enabled) - for the audit only
	ReadOnly bool   // general turn: READ capabilities only
}

// Offer is the turn's decision about every registered provider.
type Offer struct {
	Project   string     // the resolved project, "" if none
	Workspace string     // the workspace with symlinks resolved, "" if it cannot be
	Reason    string     // when nothing is offered: why (for the audit)
	Decisions []Decision // one per registered provider, registry order
}

// Withdrawn returns the offer with nothing offered, every decision saying reason.
func (o Offer) Withdrawn(reason string) Offer {
	ds := make([]Decision, len(o.Decisions))
	for i, d := range o.Decisions {
		ds[i] = Decision{Provider: d.Provider, Reason: reason}
	}
	return Offer{Project: o.Project, Workspace: o.Workspace, Reason: reason, Decisions: ds}
}

// Offered returns the decisions of the providers offered, in registry order.
func (o Offer) Offered() []Decision {
	var out []Decision
	for _, d := range o.Decisions {
		if d.Offered {
			out = append(out, d)
		}
	}
	return out
}
