// Command pingpong measures what waking an idle process costs on this machine: a round trip of
// a few bytes between two Go processes over a unix socket (this process and a copy of itself,
// which echoes), after each side has waited GAP doing nothing. Every process hop of a call (the
// face's to the keeper, the keeper's to the provider) pays it once per direction after an idle
// wait (docs/bench.md, "face-invoke: where the rest goes").
//
//	pingpong [-n 2000] [-gaps 0,100us,500us,2ms]
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-echo" {
		echo(os.Args[2])
		return
	}
	n := flag.Int("n", 2000, "round trips per gap")
	gaps := flag.String("gaps", "0,100us,500us,2ms", "idle waits before each round trip, comma-separated")
	flag.Parse()
	if err := run(*n, *gaps); err != nil {
		fmt.Fprintln(os.Stderr, "pingpong:", err)
		os.Exit(1)
	}
}

func echo(sock string) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		os.Exit(1)
	}
	buf := make([]byte, 64)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
	}
}

func run(n int, gapList string) error {
	dir, err := os.MkdirTemp("", "pingpong")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-echo", sock)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	buf := make([]byte, 64)
	for _, g := range strings.Split(gapList, ",") {
		gap, err := time.ParseDuration(g)
		if err != nil {
			return err
		}
		rtts := make([]time.Duration, 0, n)
		for range n {
			if gap > 0 {
				time.Sleep(gap)
			}
			start := time.Now()
			if _, err := c.Write([]byte("ping")); err != nil {
				return err
			}
			if _, err := c.Read(buf); err != nil {
				return err
			}
			rtts = append(rtts, time.Since(start))
		}
		slices.Sort(rtts)
		fmt.Printf("idle %-6v round trip: median %v, p10 %v, p90 %v\n", gap, rtts[n/2], rtts[n/10], rtts[n*9/10])
	}
	c.Close()
	return cmd.Wait()
}
