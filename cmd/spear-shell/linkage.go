package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// A spear-shell built with cgo (plain `go build` or `go install` on a machine with a C
// compiler: zerolog imports net) is dynamically linked, and every -c command, the fast path
// included, then pays the dynamic loader before main. --check says so. The ELF header is read
// by hand, not with debug/elf, whose package initialisation every command would pay.

// dynamicWarning returns --check's warning about the running binary, or "" when it is static.
func dynamicWarning() string {
	interp, err := programInterpreter("/proc/self/exe")
	switch {
	case err != nil:
		return fmt.Sprintf("warning: cannot tell how this spear-shell is linked: %v\n", err)
	case interp != "":
		return fmt.Sprintf("warning: this spear-shell is dynamically linked (program interpreter %s): every -c command "+
			"pays the dynamic loader; build it with CGO_ENABLED=0 (make build) for the fast path\n", interp)
	}
	return ""
}

const ptInterp = 3 // PT_INTERP: the program header naming the dynamic loader

// programInterpreter returns the program interpreter an ELF executable names (its PT_INTERP
// segment), or "" when it names none (a static executable).
func programInterpreter(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var h [64]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:4]) != "\x7fELF" {
		return "", fmt.Errorf("%s: not an ELF file", path)
	}
	var order binary.ByteOrder
	switch h[5] {
	case 1:
		order = binary.LittleEndian
	case 2:
		order = binary.BigEndian
	default:
		return "", fmt.Errorf("%s: unknown ELF byte order %d", path, h[5])
	}
	// Where the program headers are, and where in each its type, offset and size are.
	var phoff int64
	var phentsize, phnum int
	var offAt, sizeAt int
	var word func([]byte) int64
	switch h[4] {
	case 1: // 32-bit
		phoff, phentsize, phnum = int64(order.Uint32(h[0x1c:])), int(order.Uint16(h[0x2a:])), int(order.Uint16(h[0x2c:]))
		offAt, sizeAt = 4, 16
		word = func(b []byte) int64 { return int64(order.Uint32(b)) }
	case 2: // 64-bit
		phoff, phentsize, phnum = int64(order.Uint64(h[0x20:])), int(order.Uint16(h[0x36:])), int(order.Uint16(h[0x38:]))
		offAt, sizeAt = 8, 32
		word = func(b []byte) int64 { return int64(order.Uint64(b)) }
	default:
		return "", fmt.Errorf("%s: unknown ELF class %d", path, h[4])
	}
	if phentsize < sizeAt+8 || phnum > 4096 || phoff < 0 {
		return "", fmt.Errorf("%s: malformed program headers", path)
	}
	ph := make([]byte, phentsize*phnum)
	if _, err := f.ReadAt(ph, phoff); err != nil {
		return "", fmt.Errorf("%s: program headers: %w", path, err)
	}
	for i := 0; i < phnum; i++ {
		p := ph[i*phentsize:]
		if order.Uint32(p) != ptInterp {
			continue
		}
		off, size := word(p[offAt:]), word(p[sizeAt:])
		if off < 0 || size <= 0 || size > 4096 {
			return "", fmt.Errorf("%s: malformed PT_INTERP", path)
		}
		b := make([]byte, size)
		if _, err := f.ReadAt(b, off); err != nil {
			return "", fmt.Errorf("%s: PT_INTERP: %w", path, err)
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		if len(b) == 0 {
			return "", errors.New(path + ": empty PT_INTERP")
		}
		return string(b), nil
	}
	return "", nil
}
