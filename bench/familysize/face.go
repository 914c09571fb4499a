package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

type face struct {
	cmd   *exec.Cmd
	stdin io.Closer
	in    *bufio.Writer
	out   *bufio.Reader
	id    int
}

func start(bin string, env []string) *face {
	cmd := exec.Command(bin)
	cmd.Env = env
	w, _ := cmd.StdinPipe()
	r, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	f := &face{cmd: cmd, stdin: w, in: bufio.NewWriter(w), out: bufio.NewReaderSize(r, 1<<20)}
	f.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "m", "version": "1"}})
	f.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return f
}

func (f *face) send(v any) {
	b, _ := json.Marshal(v)
	f.in.Write(append(b, '\n'))
	f.in.Flush()
}

func (f *face) call(method string, params any) string {
	f.id++
	f.send(map[string]any{"jsonrpc": "2.0", "id": f.id, "method": method, "params": params})
	for {
		line, err := f.out.ReadString('\n')
		if err != nil {
			panic(err)
		}
		if strings.Contains(line, fmt.Sprintf(`"id":%d`, f.id)) {
			return line
		}
	}
}

func (f *face) tool(name string, args any) (time.Duration, string) {
	t0 := time.Now()
	out := f.call("tools/call", map[string]any{"name": name, "arguments": args})
	return time.Since(t0), out
}

// faces times the face's tools in the two turns, one spear-mcp each.
func faces(bin string, bigEnv, smallEnv []string, n int) {
	big, small := start(bin, bigEnv), start(bin, smallEnv)
	defer big.close()
	defer small.close()
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{"spear_preflight", map[string]any{"id": "p/echo", "arguments": map[string]any{"message": "hi"}}, `ok`},
		{"spear_describe", map[string]any{"ids": []string{"p/t0005"}}, "t0005"},
		{"spear_invoke", map[string]any{"id": "p/echo", "arguments": map[string]any{"message": "hi"}}, "hi"},
	} {
		var b, s []float64
		for i := 0; i < n; i++ {
			for j, f := range []*face{big, small} {
				if i%2 == 1 {
					f = []*face{small, big}[j]
				}
				d, out := f.tool(c.tool, c.args)
				if !strings.Contains(out, c.want) || strings.Contains(out, `"isError":true`) {
					fmt.Fprintln(os.Stderr, out[:min(len(out), 400)])
					os.Exit(1)
				}
				ms := float64(d.Microseconds()) / 1000
				if f == big {
					b = append(b, ms)
				} else {
					s = append(s, ms)
				}
			}
		}
		mb, ms := median(b), median(s)
		fmt.Printf("face %-16s 10k %7.2f ms   10 %7.2f ms   ratio %.2f\n", c.tool, mb, ms, mb/ms)
	}
}

// close ends the face (EOF on its stdin) and waits for it.
func (f *face) close() {
	f.stdin.Close()
	f.cmd.Wait()
}
