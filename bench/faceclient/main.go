// Command faceclient is the benchmarks' client of the MCP face (SPEC 13, Targets), built with
// the official go-sdk as an agent terminal's client would be. It is given a plan (JSON, the
// only argument) and does one of two things:
//
//   - calls: it starts every server of the plan and keeps one session open to each
//     (initialize with protocol 2025-06-18, then tools/list), makes the setup calls, then makes
//     the sides' calls alternated, A B A B ... (with Shuffle, each round in a new order, so that
//     no side always follows the same one), after one untimed warm-up call of each side, and
//     prints each side's per-call latency in nanoseconds, one line per side ("side K NS NS ...").
//     Every result is checked: not isError, and its text and structuredContent together hold
//     the side's want.
//   - start (-start in the plan): for Rounds rounds, it starts each server in turn and times
//     from just before the process is started to the answer of its first tools/list
//     (initialize, notifications/initialized, tools/list), then closes the session (untimed)
//     and waits for the exit; it prints the times the same way. Each server must list WantTools
//     tools. With DumpTools it first lists server 0's tools into that file (for listserver).
//
// The servers inherit faceclient's environment, unless the plan's Env gives one for a server.
//
//	faceclient PLAN
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type plan struct {
	Servers   [][]string // argv of each server
	Env       [][]string // environment of each server; missing or null: faceclient's
	Setup     []call     // made once, in order, before the sides
	Sides     []call     // alternated
	Calls     int        // timed calls per side
	Shuffle   bool       // each round makes the sides' calls in a new random order
	Start     bool       // time start to first tools/list instead
	Rounds    int        // with Start: starts per server
	WantTools int        // with Start: tools each server must list
	DumpTools string     // with Start: write server 0's tools here first
}

type call struct {
	Server int
	Tool   string
	Args   map[string]any
	Want   string // must appear in the result's text or structuredContent
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: faceclient PLAN-JSON")
		os.Exit(2)
	}
	var p plan
	if err := json.Unmarshal([]byte(os.Args[1]), &p); err != nil {
		fmt.Fprintf(os.Stderr, "faceclient: plan: %v\n", err)
		os.Exit(2)
	}
	var got [][]time.Duration
	var err error
	if p.Start {
		got, err = starts(context.Background(), p)
	} else {
		got, err = calls(context.Background(), p)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "faceclient: %v\n", err)
		os.Exit(1)
	}
	for k, ds := range got {
		var b strings.Builder
		b.WriteString("side " + strconv.Itoa(k))
		for _, d := range ds {
			b.WriteString(" " + strconv.FormatInt(d.Nanoseconds(), 10))
		}
		fmt.Println(b.String())
	}
}

func connect(ctx context.Context, argv, env []string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "faceclient", Version: "1.0.0"}, nil)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		return nil, fmt.Errorf("%s: connect: %w", argv[0], err)
	}
	return cs, nil
}

// env is server i's environment (nil: faceclient's).
func (p plan) env(i int) []string {
	if i < len(p.Env) {
		return p.Env[i]
	}
	return nil
}

func calls(ctx context.Context, p plan) ([][]time.Duration, error) {
	sessions := make([]*mcp.ClientSession, len(p.Servers))
	defer func() {
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
	}()
	for i, argv := range p.Servers {
		cs, err := connect(ctx, argv, p.env(i))
		if err != nil {
			return nil, err
		}
		sessions[i] = cs
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return nil, fmt.Errorf("%s: tools/list: %w", argv[0], err)
		}
	}
	do := func(c call) (time.Duration, error) {
		if c.Server < 0 || c.Server >= len(sessions) {
			return 0, fmt.Errorf("%s: no server %d", c.Tool, c.Server)
		}
		start := time.Now()
		res, err := sessions[c.Server].CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: c.Args})
		d := time.Since(start)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", c.Tool, err)
		}
		return d, check(c, res)
	}
	for _, c := range p.Setup {
		if _, err := do(c); err != nil {
			return nil, fmt.Errorf("setup: %w", err)
		}
	}
	got := make([][]time.Duration, len(p.Sides))
	order := make([]int, len(p.Sides))
	for k := range order {
		order[k] = k
	}
	for i := -1; i < p.Calls; i++ {
		if p.Shuffle {
			rand.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		}
		for _, k := range order {
			c := p.Sides[k]
			d, err := do(c)
			if err != nil {
				return nil, fmt.Errorf("side %d, call %d: %w", k, i+1, err)
			}
			if i >= 0 {
				got[k] = append(got[k], d)
			}
		}
	}
	return got, nil
}

func check(c call, res *mcp.CallToolResult) error {
	var text strings.Builder
	for _, item := range res.Content {
		if t, ok := item.(*mcp.TextContent); ok {
			text.WriteString(t.Text + "\n")
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		text.Write(b)
	}
	if res.IsError {
		return fmt.Errorf("%s: isError: %.300s", c.Tool, text.String())
	}
	if !strings.Contains(text.String(), c.Want) {
		return fmt.Errorf("%s: result lacks %q: %.300s", c.Tool, c.Want, text.String())
	}
	return nil
}

func starts(ctx context.Context, p plan) ([][]time.Duration, error) {
	if p.DumpTools != "" {
		cs, err := connect(ctx, p.Servers[0], p.env(0))
		if err != nil {
			return nil, err
		}
		res, err := cs.ListTools(ctx, nil)
		cs.Close()
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		b, err := json.Marshal(res.Tools)
		if err == nil {
			err = os.WriteFile(p.DumpTools, b, 0o644)
		}
		if err != nil {
			return nil, err
		}
	}
	got := make([][]time.Duration, len(p.Servers))
	for i := -1; i < p.Rounds; i++ {
		for k, argv := range p.Servers {
			start := time.Now()
			cs, err := connect(ctx, argv, p.env(k))
			if err != nil {
				return nil, err
			}
			res, err := cs.ListTools(ctx, nil)
			d := time.Since(start)
			cerr := cs.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: tools/list: %w", argv[0], err)
			}
			if cerr != nil {
				return nil, fmt.Errorf("%s: close: %w", argv[0], cerr)
			}
			if len(res.Tools) != p.WantTools {
				return nil, errors.New(argv[0] + ": listed " + strconv.Itoa(len(res.Tools)) + " tools, want " + strconv.Itoa(p.WantTools))
			}
			if i >= 0 {
				got[k] = append(got[k], d)
			}
		}
	}
	return got, nil
}
