// Command fwdserver is the reference of the face's invoke row (SPEC 13, Targets): the least a
// go-sdk MCP server can do to pass one call on. It is a stdio server (the go-sdk's own
// StdioTransport) with one tool, echo, whose handler forwards the call as it came (the raw
// arguments) to the provider given after its flags, through one go-sdk client session opened
// at start (initialize, protocol 2025-06-18, as spear-shell speaks it) and kept open, and
// returns the provider's result as it is: no offer, no checks, no audit, no cleaning.
//
// Two flags add, each on its own, the least any program can do for the two pieces of work the
// contract gives the face beside the forwarding (docs/bench.md, face-invoke: the floor):
//
//   - -relay RELAY: the provider is held by a separate process, RELAY (bench/relay), which
//     fwdserver starts with the provider's argv and reaches over a unix socket (the keeper's hop,
//     SPEC 12): the client session speaks MCP over that connection (the SDK's IOTransport).
//
//   - -audit FILE: every call appends two records to FILE, one before the call is sent and one
//     after its answer (SPEC 7's intent and outcome): each a small JSON line written with one
//     write(2) on a descriptor opened once with O_APPEND, under flock(LOCK_EX), released after.
//     No fsync, as audit/ syncs no invoke record.
//
//     fwdserver [-relay RELAY] [-audit FILE] -- provider [args...]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	relay := flag.String("relay", "", "reach the provider through this relay program (bench/relay) over a unix socket")
	audit := flag.String("audit", "", "append an intent and an outcome record per call to this file")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: fwdserver [-relay RELAY] [-audit FILE] -- provider [args...]")
		os.Exit(2)
	}
	if err := run(context.Background(), *relay, *audit, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "fwdserver: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, relay, auditPath string, provider []string) error {
	// The environment spear-shell gives a provider: PATH and HOME only.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	var transport mcp.Transport
	if relay == "" {
		cmd := exec.Command(provider[0], provider[1:]...)
		cmd.Env = env
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	} else {
		conn, stop, err := startRelay(relay, env, provider)
		if err != nil {
			return fmt.Errorf("relay: %w", err)
		}
		defer stop()
		transport = &mcp.IOTransport{Reader: conn, Writer: keepOpen{conn}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "fwdserver", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	defer cs.Close()
	var trail *auditFile
	if auditPath != "" {
		if trail, err = openAudit(auditPath); err != nil {
			return err
		}
		defer trail.f.Close()
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "fwdserver", Version: "1.0.0"}, nil)
	server.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Echo back the message it is given (forwarded to the provider).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if trail == nil {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
		}
		return trail.call(ctx, cs, req.Params.Arguments)
	})
	return server.Run(ctx, &mcp.StdioTransport{})
}

// startRelay starts relay holding the provider, waits for its socket and connects to it. stop
// closes the connection (the relay then ends the provider and exits) and waits for the relay.
func startRelay(relay string, env, provider []string) (net.Conn, func(), error) {
	dir, err := os.MkdirTemp("", "fwdrelay")
	if err != nil {
		return nil, nil, err
	}
	socket := filepath.Join(dir, "s")
	cmd := exec.Command(relay, append([]string{"-socket", socket, "--"}, provider...)...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	fail := func(err error) (net.Conn, func(), error) {
		cmd.Process.Kill()
		cmd.Wait()
		os.RemoveAll(dir)
		return nil, nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		return fail(fmt.Errorf("not ready: %q, %v", line, err))
	}
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return fail(err)
	}
	return conn, func() {
		conn.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		os.RemoveAll(dir)
	}, nil
}

// keepOpen is the connection's writing side for IOTransport, whose Close closes its reader
// and its writer: the reader (the same connection) closes it once.
type keepOpen struct{ io.Writer }

func (keepOpen) Close() error { return nil }

// auditFile is the floor of an audit trail: one descriptor, opened once with O_APPEND, and per
// record flock(LOCK_EX), one write(2) of one JSON line, flock(LOCK_UN).
type auditFile struct {
	f  *os.File
	fd int
	n  atomic.Int64 // calls so far: each call's records carry its number
}

func openAudit(path string) (*auditFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return &auditFile{f: f, fd: int(f.Fd())}, nil
}

type record struct {
	Time      string          `json:"time"`
	Event     string          `json:"event"`
	Call      string          `json:"call"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Outcome   string          `json:"outcome,omitempty"`
}

func (a *auditFile) append(r record) error {
	r.Time = time.Now().UTC().Format(time.RFC3339Nano)
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if err := syscall.Flock(a.fd, syscall.LOCK_EX); err != nil {
		return err
	}
	n, err := syscall.Write(a.fd, line)
	if uerr := syscall.Flock(a.fd, syscall.LOCK_UN); err == nil {
		err = uerr
	}
	if err == nil && n != len(line) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
	}
	return err
}

// call writes the intent, forwards the call, and writes the outcome; a record that cannot be
// written refuses the call (the intent) or fails it (the outcome), as the face must.
func (a *auditFile) call(ctx context.Context, cs *mcp.ClientSession, args json.RawMessage) (*mcp.CallToolResult, error) {
	id := strconv.FormatInt(a.n.Add(1), 10)
	if err := a.append(record{Event: "intent", Call: id, Tool: "echo", Arguments: args}); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "failed"
	case res.IsError:
		outcome = "error"
	}
	if aerr := a.append(record{Event: "outcome", Call: id, Tool: "echo", Outcome: outcome}); aerr != nil {
		return nil, errors.Join(err, fmt.Errorf("audit: %w", aerr))
	}
	return res, err
}
