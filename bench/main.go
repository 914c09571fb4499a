// Command bench is `make bench`: it measures spear-shell against its references side by side
// (A B A B ..., so drift hits both alike), takes medians and prints one table with the
// targets of issues 7 and 8. It exits 1 when a target fails (unless -no-fail) and 2 when
// it cannot run at all. docs/bench.md describes every case.
//
//	go run ./bench -bin bin [-n runs] [-run regexp] [-no-fail] [-v] [-keep] [-baseline DIR|none]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	bin    string // directory of spear-shell, spear-shell-schema and spear-mcp
	runs   int    // runs per side; 0 means each case's default
	filter *regexp.Regexp
	noFail bool
	keep   bool
	// baseline is the directory of the spear-shell binary measured beside the -c fast path
	// (c-true): "" builds baselineCommit from the git history, "none" measures none.
	baseline string
	log      io.Writer // progress; io.Discard unless -v
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", "bin", "directory holding spear-shell, spear-shell-schema and spear-mcp")
	runs := fs.Int("n", 0, "runs per side for every case (0: each case's default, sized for about 4 minutes in all)")
	filter := fs.String("run", "", "only the cases whose id matches this regexp (ids: "+strings.Join(caseIDs(), ", ")+")")
	noFail := fs.Bool("no-fail", false, "report failed targets without a non-zero exit")
	keep := fs.Bool("keep", false, "keep the scratch directory and print its path")
	verbose := fs.Bool("v", false, "print progress and per-case details on stderr")
	goTool := fs.String("go", "go", "go command used to build the helper programs")
	baseline := fs.String("baseline", "", "directory holding the spear-shell binary that c-true measures beside this one (default: build commit "+baselineCommit+" from the git history into the scratch directory; none: skip)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	re, err := regexp.Compile(*filter)
	if err != nil {
		fmt.Fprintf(stderr, "bench: -run: %v\n", err)
		return 2
	}
	o := options{runs: *runs, filter: re, noFail: *noFail, keep: *keep, baseline: *baseline, log: io.Discard}
	if *verbose {
		o.log = stderr
	}
	if o.bin, err = filepath.Abs(*bin); err != nil {
		fmt.Fprintf(stderr, "bench: -bin: %v\n", err)
		return 2
	}
	for _, name := range binaries {
		if _, err := os.Stat(filepath.Join(o.bin, name)); err != nil {
			fmt.Fprintf(stderr, "bench: %v (run make build first)\n", err)
			return 2
		}
	}
	w, err := newWorld(ctx, o, *goTool)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	if o.keep {
		fmt.Fprintf(stderr, "bench: scratch directory %s\n", w.root)
	} else {
		defer os.RemoveAll(w.root)
	}
	start := time.Now()
	var rows []row
	for _, c := range cases {
		if !re.MatchString(c.id) {
			continue
		}
		fmt.Fprintf(stderr, "bench: %s ...\n", c.id)
		t := time.Now()
		got := c.run(ctx, w)
		for i := range got {
			got[i].id = c.id
		}
		rows = append(rows, got...)
		fmt.Fprintf(o.log, "bench: %s took %s\n", c.id, time.Since(t).Round(time.Millisecond))
	}
	if len(rows) == 0 {
		fmt.Fprintf(stderr, "bench: no case matches %q\n", *filter)
		return 2
	}
	printTable(stdout, rows)
	fmt.Fprintf(stderr, "bench: %d rows in %s\n", len(rows), time.Since(start).Round(time.Second))
	failed := 0
	for _, r := range rows {
		if r.holds == "no" {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "bench: %d target(s) not met\n", failed)
		if !o.noFail {
			return 1
		}
	}
	return 0
}

// binaries are the product's programs the driver measures (make build builds them all in -bin).
var binaries = []string{"spear-shell", "spear-shell-schema", "spear-mcp"}

func caseIDs() []string {
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = c.id
	}
	return ids
}
