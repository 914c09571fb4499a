package capability

import (
	"context"
	"errors"

	"github.com/spear-shell/spear-shell/capability/broker"
	"github.com/spear-shell/spear-shell/capability/keeper"
	"github.com/spear-shell/spear-shell/capability/providers"
	"github.com/spear-shell/spear-shell/mcpstdio"
)

// broker returns the process's link to the broker, made once (it reaches the broker at its
// first need).
func (e *turnEnv) broker() *broker.Link {
	e.brokerOnce.Do(func() { e.brokerLink = broker.NewLink(e.Settings.Getenv, e.Settings.Self) })
	return e.brokerLink
}

// startProvider starts p for this answer: through the turn's keeper when there is one (the
// provider then outlives this process), else here. A keeper that cannot be used never fails the
// start: it is recorded (keeper_unavailable) and the provider is started here.
func (e *turnEnv) startProvider(ctx context.Context, p *prov, listOnly bool) (providers.Client, error) {
	if p.cfg.Share != "" {
		// A shared entry is the broker's, for every face and mode: never a copy here (SPEC 14).
		return e.broker().Start(ctx, p.cfg, p.shareKey)
	}
	if !listOnly {
		if k := e.keeper(); k != nil {
			if c, reached, err := k.Start(ctx, p.cfg); reached {
				if err != nil {
					return nil, err
				}
				return c, nil
			}
		}
	}
	c, err := e.Launch(ctx, p.cfg)
	if err != nil {
		return nil, err // a nil *mcpstdio.Client must not become a non-nil providers.Client
	}
	return c, nil
}

// listTools lists c's tools within p's timeout. When c is kept by a keeper that went away,
// the provider is started here and listed instead: a listing changes nothing, so it may be
// asked again (a call may not). It returns the client the tools came from.
func (e *turnEnv) listTools(ctx context.Context, p *prov, c providers.Client) (providers.Client, []mcpstdio.Tool, error) {
	lctx, cancel := context.WithTimeout(ctx, providers.Timeout(p.cfg))
	defer cancel()
	tools, err := c.ListTools(lctx)
	if !errors.Is(err, keeper.ErrLost) {
		return c, tools, err
	}
	c.Close()
	local, err := e.Launch(ctx, p.cfg)
	if err != nil {
		return nil, nil, err
	}
	tools, err = local.ListTools(lctx)
	return local, tools, err
}
