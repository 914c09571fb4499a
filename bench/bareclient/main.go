// Command bareclient is the floor of a turn start: the least an MCP client can do to start K
// servers at once and learn their tools. Each server gets its own goroutine, two pipes and a
// bare fork and exec; the client writes initialize, reads the answer, writes initialized and
// tools/list, reads the answer, closes the server's stdin and waits for it to exit. It checks
// that each answer is a result and nothing else: no JSON decoding, no records, no state.
//
//	bareclient [-parallel K] -- server [args...]
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"syscall"
)

const (
	initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{},"clientInfo":{"name":"bareclient","version":"1"}}}` + "\n"
	listTools = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}` + "\n"
)

func main() {
	parallel := flag.Int("parallel", 1, "copies of the server started at once")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: bareclient [-parallel K] -- server [args...]")
		os.Exit(2)
	}
	errs := make([]error, max(*parallel, 1))
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = start(flag.Args())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(os.Stderr, "bareclient: %v\n", err)
		os.Exit(1)
	}
}

// start runs one server through initialize and tools/list, then ends it.
func start(argv []string) error {
	var in, out [2]int
	if err := syscall.Pipe2(in[:], syscall.O_CLOEXEC); err != nil {
		return err
	}
	if err := syscall.Pipe2(out[:], syscall.O_CLOEXEC); err != nil {
		syscall.Close(in[0])
		syscall.Close(in[1])
		return err
	}
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env: os.Environ(), Files: []uintptr{uintptr(in[0]), uintptr(out[1]), 2},
	})
	syscall.Close(in[0])
	syscall.Close(out[1])
	if err != nil {
		syscall.Close(in[1])
		syscall.Close(out[0])
		return err
	}
	stdout := os.NewFile(uintptr(out[0]), "stdout")
	defer stdout.Close()
	r := bufio.NewReader(stdout)
	err = exchange(in[1], r, initialize)
	if err == nil {
		err = exchange(in[1], r, listTools)
	}
	syscall.Close(in[1])
	var ws syscall.WaitStatus
	for {
		if _, werr := syscall.Wait4(pid, &ws, 0, nil); werr != syscall.EINTR {
			break
		}
	}
	return err
}

// exchange writes msgs and reads one answer, which must carry a result.
func exchange(stdin int, r *bufio.Reader, msgs string) error {
	if _, err := syscall.Write(stdin, []byte(msgs)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	line, err := r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if !bytes.Contains(line, []byte(`"result"`)) {
		return fmt.Errorf("not a result: %.200s", line)
	}
	return nil
}
