package providers

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

// Version is sent in initialize's clientInfo.
var Version = "dev"

// Client is a running provider as an answer uses it: started by this process
// (*mcpstdio.Client), or kept by the turn's keeper. Close stops a provider this process
// started; a kept one is only let go, and stays with the keeper.
type Client interface {
	ListTools(ctx context.Context) ([]mcpstdio.Tool, error)
	CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpstdio.CallResult, error)
	ToolsChanged() bool
	StderrTail() string
	Close() error
}

// Definition is one tool name as a provider's last listing holds it.
type Definition struct {
	Name  string         // the name asked
	Count int            // how many of the listing's tools carry it: 0 not listed, 2 or more a duplicate
	Tool  *mcpstdio.Tool // the first of them as listed (Raw aside); nil when Count is 0
}

// Listing is what a Definer says of the listing its definitions come from.
type Listing struct {
	Hash string        // ListingHash of the listing
	Age  time.Duration // how long ago the provider sent it
}

// Definer is a Client that gives some of its tools as last listed without the whole listing:
// a provider kept by the turn's keeper, which lists it again exactly when it would for
// ListTools. Nothing in a Definition is judged: the answering process judges the tools it asked
// for as it judges a whole listing (names, duplicates, schemas, classes, pins).
type Definer interface {
	Definitions(ctx context.Context, names []string) ([]Definition, Listing, error)
}

// A GuardedCaller is a Definer whose calls can be sent on a condition: that the provider's
// listing is still the one (by its Listing.Hash) the caller's definitions came from. A caller
// that checked a tool against a definition from that listing then needs no fresh definitions
// before each call: a listing that changed meanwhile stops the call before it is sent, and
// the tool comes back as the new listing holds it (Moved) for the caller to judge again.
type GuardedCaller interface {
	Definer
	CallToolIf(ctx context.Context, name string, args json.RawMessage, listing string) (*mcpstdio.CallResult, *Moved, error)
}

// Moved says that a guarded call was not sent: the provider's listing is another one now.
type Moved struct {
	Def     Definition // the tool's name as the new listing holds it
	Listing Listing
}

// ListingHash fingerprints a listing as the provider sent it: SHA-256 over each tool object's
// bytes, each preceded by its length.
func ListingHash(tools []mcpstdio.Tool) string {
	h := sha256.New()
	var n [8]byte
	for _, t := range tools {
		binary.BigEndian.PutUint64(n[:], uint64(len(t.Raw)))
		h.Write(n[:])
		h.Write(t.Raw)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// RelistAfter is how old a running provider's listing may be before an answer that needs the
// provider lists it again (docs/capabilities.md, "Changed definitions"). A provider that
// changes a definition without notifications/tools/list_changed is caught by the first answer
// after this age, at the cost of one tools/list round trip, while a session's tight run of
// invokes is not slowed by a listing before each one.
const RelistAfter = 10 * time.Second

// Timeout bounds each request to a provider (its entry's timeout, else 30 s).
func Timeout(p *policy.Provider) time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return 30 * time.Second
}

// StageEnvFile is the stage of a start refused for its env_file (SPEC 2.3).
const StageEnvFile = "env_file"

// Launch starts the provider of entry cfg in this process and initializes it. Its programs
// and env_file path are not judged here: TrustProvider first. The env_file is read here, at
// each start, and its values are redacted from then on from all this turn records and says.
func (t *Turn) Launch(ctx context.Context, cfg *policy.Provider) (*mcpstdio.Client, error) {
	if cfg.EnvFile != "" {
		t.envFiles.noteEnvFile(cfg.EnvFile)
	}
	l, err := cfg.Launch(t.Registry.Home, t.Settings.Getenv)
	if err != nil {
		return nil, &Failure{Msg: err.Error(), Stage: StageEnvFile, Is: []error{err}}
	}
	t.Redactor.Add(l.Secrets...)
	sctx, cancel := context.WithTimeout(ctx, Timeout(cfg))
	defer cancel()
	return mcpstdio.Start(sctx, mcpstdio.Command{Path: l.Path, Args: l.Args, Dir: l.Dir, Env: mcpstdio.NewEnv(l.Env)},
		mcpstdio.Options{ClientName: "spear-shell", ClientVersion: Version, MaxMessage: cfg.MaxMessage})
}

// Failure is a provider failure that happened in another process (the turn's keeper), read
// back as the error it was, or one that happened before the provider ran (its env_file): its
// message, the step it happened in, the provider's stderr tail, and the errors it matches
// (errors.Is and errors.As see them).
type Failure struct {
	Msg, Stage, Tail string
	Is               []error
}

func (f *Failure) Error() string   { return f.Msg }
func (f *Failure) Unwrap() []error { return f.Is }

// StageOf and StderrOf read a provider failure whether it happened here or in the keeper.
func StageOf(err error) string {
	var f *Failure
	if errors.As(err, &f) {
		return f.Stage
	}
	return mcpstdio.StageOf(err)
}

// StderrOf: see StageOf.
func StderrOf(err error) string {
	var f *Failure
	if errors.As(err, &f) {
		return f.Tail
	}
	return mcpstdio.StderrOf(err)
}
