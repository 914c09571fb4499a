package capability

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/spear-shell/spear-shell/mcpstdio"
	"github.com/spear-shell/spear-shell/policy"
)

// provClient is a running provider as an answer uses it: started by this process
// (*mcpstdio.Client), or kept by the turn's keeper (keeperProv). Close stops a provider this
// process started; a kept one is only let go, and stays with the keeper.
type provClient interface {
	ListTools(ctx context.Context) ([]mcpstdio.Tool, error)
	CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpstdio.CallResult, error)
	ToolsChanged() bool
	StderrTail() string
	Close() error
}

// providerTimeout bounds each request to a provider (its entry's timeout, else 30 s).
func providerTimeout(p *policy.Provider) time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return 30 * time.Second
}

// startProvider starts p for this answer: through the turn's keeper when there is one (the
// provider then outlives this process), else here. A keeper that cannot be used never fails the
// start: it is recorded (keeper_unavailable) and the provider is started here.
func (e *turnEnv) startProvider(ctx context.Context, p *prov, listOnly bool) (provClient, error) {
	if !listOnly {
		if k := e.keeper(); k != nil {
			if c, reached, err := k.start(ctx, p.cfg); reached {
				if err != nil {
					return nil, err
				}
				return c, nil
			}
		}
	}
	c, err := launchProvider(ctx, e, p.cfg)
	if err != nil {
		return nil, err // a nil *mcpstdio.Client must not become a non-nil provClient
	}
	return c, nil
}

// listTools lists c's tools within p's timeout. When c is kept by a keeper that went away,
// the provider is started here and listed instead: a listing changes nothing, so it may be
// asked again (a call may not). It returns the client the tools came from.
func (e *turnEnv) listTools(ctx context.Context, p *prov, c provClient) (provClient, []mcpstdio.Tool, error) {
	lctx, cancel := context.WithTimeout(ctx, providerTimeout(p.cfg))
	defer cancel()
	tools, err := c.ListTools(lctx)
	if !errors.Is(err, errKeeperLost) {
		return c, tools, err
	}
	c.Close()
	local, err := launchProvider(ctx, e, p.cfg)
	if err != nil {
		return nil, nil, err
	}
	tools, err = local.ListTools(lctx)
	return local, tools, err
}

// launchProvider starts the provider of entry cfg in this process and initializes it.
func launchProvider(ctx context.Context, e *turnEnv, cfg *policy.Provider) (*mcpstdio.Client, error) {
	l := cfg.Launch(e.reg.Home, e.s.Getenv)
	sctx, cancel := context.WithTimeout(ctx, providerTimeout(cfg))
	defer cancel()
	return mcpstdio.Start(sctx, mcpstdio.Command{Path: l.Path, Args: l.Args, Dir: l.Dir, Env: mcpstdio.NewEnv(l.Env)},
		mcpstdio.Options{ClientName: "spear-shell", ClientVersion: Version, MaxMessage: cfg.MaxMessage})
}

// stageOf and stderrOf read a provider failure whether it happened here or in the keeper.
func stageOf(err error) string {
	var ke *keeperError
	if errors.As(err, &ke) {
		return ke.stage
	}
	return mcpstdio.StageOf(err)
}

func stderrOf(err error) string {
	var ke *keeperError
	if errors.As(err, &ke) {
		return ke.tail
	}
	return mcpstdio.StderrOf(err)
}
