// Command familysize measures an answer about one capability in a family of 10,000 tools
// against the same answer in a family of 10 (SPEC 13's target: at most 1.5x), both from one
// warm slowprovider with the turn's keeper running: -c describe, invoke and list, alternated
// between the two turns, then (with -face) spear_preflight, spear_describe and spear_invoke
// through one spear-mcp per turn. It prints medians. docs/capabilities.md ("A family of
// thousands") has its numbers.
//
//	CGO_ENABLED=0 go build -trimpath -o bin/ ./cmd/... ./bench/slowprovider
//	go run ./bench/familysize -bin bin -prov bin/slowprovider -n 40 -face
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type home struct {
	env  []string
	name string
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func writeJSON(p string, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	must(os.WriteFile(p, b, 0o644))
}

func newHome(root, name, spear, prov string, tools int) *home {
	base := filepath.Join(root, name)
	hd := filepath.Join(base, "home")
	run := filepath.Join(base, "run")
	ws := filepath.Join(root, "ws")
	for _, d := range []string{hd, run, ws} {
		must(os.MkdirAll(d, 0o700))
	}
	writeJSON(filepath.Join(hd, "projects.json"), map[string]any{"projects": []any{map[string]any{"name": "bench", "root": ws}}})
	writeJSON(filepath.Join(hd, "capabilities.json"), map[string]any{"providers": []any{map[string]any{
		"id": "p", "command": []string{prov, "-tools", fmt.Sprint(tools)}, "scope": "global", "read": []string{"echo"}}}})
	man := filepath.Join(base, "turn.json")
	writeJSON(man, map[string]any{"turn": "perf-" + name + fmt.Sprint(time.Now().UnixNano()), "task": "implementation", "workspace": ws, "keep_providers": 300})
	env := append(os.Environ(), "SPEAR_HOME="+hd, "SPEAR_TURN_MANIFEST="+man, "SPEAR_AUDIT_FILE="+filepath.Join(base, "audit.jsonl"),
		"SPEAR_ISOLATION=none", "XDG_RUNTIME_DIR="+run)
	return &home{env: env, name: name}
}

func run(spear string, h *home, line string) (time.Duration, string, int) {
	cmd := exec.Command(spear, "-c", line)
	cmd.Env = h.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	}
	return d, out.String(), rc
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func main() {
	bin := flag.String("bin", "bin", "")
	prov := flag.String("prov", "bin/slowprovider", "the slowprovider program")
	n := flag.Int("n", 40, "runs per side")
	withFace := flag.Bool("face", false, "also measure through spear-mcp")
	flag.Parse()
	spear, _ := filepath.Abs(filepath.Join(*bin, "spear-shell"))
	*prov, _ = filepath.Abs(*prov)
	root, _ := os.MkdirTemp("", "perf10k-")
	defer os.RemoveAll(root)
	big := newHome(root, "big", spear, *prov, 10000)
	small := newHome(root, "small", spear, *prov, 10)
	ends := func() {
		for _, h := range []*home{big, small} {
			cmd := exec.Command(spear, "--end-turn")
			cmd.Env = h.env
			cmd.Run()
		}
	}
	defer ends()
	answers := []struct{ name, line, want string }{
		{"describe", "spear-capability describe p/t0005", "t0005"},
		{"invoke", `spear-capability invoke p/echo '{"message":"hi"}'`, "hi"},
		{"list", "spear-capability list", "echo"},
	}
	// warm: the family selected, the keeper running, both described
	for _, h := range []*home{big, small} {
		for _, l := range []string{"spear-capability list", "spear-capability describe p/t0005", "spear-capability describe p/echo"} {
			_, out, rc := run(spear, h, l)
			if rc != 0 {
				fmt.Fprintf(os.Stderr, "warm %s %q: rc %d\n%s\n", h.name, l, rc, out)
				os.Exit(1)
			}
		}
	}
	for _, a := range answers {
		var b, s []float64
		for i := 0; i < *n; i++ {
			for _, h := range []*home{big, small} {
				if i%2 == 1 {
					h = map[*home]*home{big: small, small: big}[h]
				}
				d, out, rc := run(spear, h, a.line)
				if rc != 0 || !strings.Contains(out, a.want) {
					fmt.Fprintf(os.Stderr, "%s %s: rc %d\n%s\n", h.name, a.name, rc, out[:min(len(out), 500)])
					os.Exit(1)
				}
				ms := float64(d.Microseconds()) / 1000
				if h == big {
					b = append(b, ms)
				} else {
					s = append(s, ms)
				}
			}
		}
		mb, msm := median(b), median(s)
		fmt.Printf("%-10s 10k %7.1f ms   10 %7.1f ms   ratio %.2f\n", a.name, mb, msm, mb/msm)
	}
	if *withFace {
		faces(filepath.Join(filepath.Dir(spear), "spear-mcp"), big.env, small.env, *n)
	}
}
