package realshell

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Which signals were ignored when this process started.
//
// A shell passes every signal ignored at its start on to its commands (nohup's SIGHUP, a
// harness's SIGPIPE, `trap '' TERM` before an exec). Go's runtime does not: before any Go code
// runs it installs its own handler for every signal but an ignored SIGHUP or SIGINT
// (runtime/signal_unix.go, initsig), so a child gets the default, and the disposition the
// process started with is kept only in the runtime's unexported array fwdSig. No API reports
// it, and the linker refuses a //go:linkname to it (Go 1.23's check), assembly included. So
// its address is read from this binary's own ELF symbol table (/proc/self/exe), corrected for
// a PIE's load address, and the array is read in place once a variable of this package is found
// where the table says (another binary's table gives no address). Without a symbol table (a binary
// linked with -ldflags=-s), or with a symbol that does not look like the runtime's, only
// SIGHUP and SIGINT are known (signal.Ignored).

// SignalSet is a set of signals 1 to 64.
type SignalSet uint64

// Has tells whether sig is in the set.
func (s SignalSet) Has(sig syscall.Signal) bool {
	return sig >= 1 && sig <= 64 && s&(1<<(sig-1)) != 0
}

func (s SignalSet) with(sig syscall.Signal) SignalSet { return s | 1<<(sig-1) }

// String lists the set's signals by name: "SIGPIPE SIGTERM".
func (s SignalSet) String() string {
	var names []string
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		if s.Has(sig) {
			names = append(names, signalName(sig))
		}
	}
	return strings.Join(names, " ")
}

// signalName is a signal's name (real-time ones by number).
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(sig))
}

var startIgnored struct {
	once sync.Once
	set  SignalSet
	err  error
}

// IgnoredAtStart returns the signals ignored when this process started. With an error (which
// says why) only SIGHUP and SIGINT are known. The first call must come before this process
// changes the disposition of SIGHUP or SIGINT (signal.Notify).
func IgnoredAtStart() (SignalSet, error) {
	startIgnored.once.Do(func() {
		startIgnored.set, startIgnored.err = readIgnored("/proc/self/exe")
		if startIgnored.err != nil {
			startIgnored.set = 0
			for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT} {
				if signal.Ignored(sig) {
					startIgnored.set = startIgnored.set.with(sig)
				}
			}
		}
	})
	return startIgnored.set, startIgnored.err
}

const (
	fwdSigName = "runtime.fwdSig"
	nsig       = 65 // the runtime's _NSIG on Linux (mips aside: there the size check fails)
	symSize    = 24 // an ELF64 symbol
	sigIgn     = 1  // SIG_IGN
)

// readIgnored reads the runtime's fwdSig through exe's symbol table (exe must be this very
// binary).
func readIgnored(exe string) (SignalSet, error) {
	fd, err := syscall.Open(exe, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("ignored signals: %w", err)
	}
	defer syscall.Close(fd)
	addr, err := findFwdSig(fd)
	if err != nil {
		return 0, fmt.Errorf("ignored signals: %s: %w", exe, err)
	}
	// The address was checked to lie in a writable section of this binary, which is mapped;
	// the double conversion keeps vet from taking an address read from a file for a misuse.
	fwd := *(**[nsig]uintptr)(unsafe.Pointer(&addr))
	var set SignalSet
	for sig := 1; sig < nsig; sig++ {
		v := atomic.LoadUintptr(&fwd[sig])
		switch {
		case syscall.Signal(sig) == syscall.SIGPROF:
			// profiling keeps its previous handler here; and it cannot be passed on
		case v > sigIgn, v != 0 && (syscall.Signal(sig) == syscall.SIGKILL || syscall.Signal(sig) == syscall.SIGSTOP):
			// After an exec every disposition is the default or ignored, and the runtime
			// leaves SIGKILL's and SIGSTOP's at zero.
			return 0, fmt.Errorf("ignored signals: %s: %s holds %#x for signal %d: not the runtime's table", exe, fwdSigName, v, sig)
		case v == sigIgn:
			set = set.with(syscall.Signal(sig))
		}
	}
	return set, nil
}

var errNoSymtab = errors.New("no symbol table (linked with -ldflags=-s?)")

// findFwdSig returns the run-time address of runtime.fwdSig from the ELF file fd: its symbol
// must be a data object of the array's size inside a writable section, and the load bias (a
// PIE's) is what makes a function of this package's table address its run-time one.
func findFwdSig(fd int) (uintptr, error) {
	le := binary.LittleEndian
	// Two pages on the heap for the reads: on the stack they would grow this goroutine's stack
	// at the call, which costs more than all the reads.
	page := os.Getpagesize()
	buf := make([]byte, 2*page)
	// Go's linker puts the section headers right after the program headers: one read of the
	// first page usually holds them.
	head := buf[:page]
	n, err := syscall.Pread(fd, head, 0)
	if err != nil {
		return 0, err
	}
	eh := head[:n]
	if n < 64 || string(eh[:4]) != "\x7fELF" || eh[4] != 2 || eh[5] != 1 {
		return 0, errors.New("not a 64-bit little-endian ELF file")
	}
	shoff, shentsize, shnum := le.Uint64(eh[0x28:]), le.Uint16(eh[0x3a:]), int(le.Uint16(eh[0x3c:]))
	if shentsize != 64 || shnum == 0 || shnum > 1024 {
		return 0, errors.New("unexpected section headers")
	}
	var sh []byte
	if shoff <= uint64(n) && uint64(shnum*64) <= uint64(n)-shoff {
		sh = head[shoff : shoff+uint64(shnum*64)]
	} else {
		sh = make([]byte, shnum*64)
		if n, err := syscall.Pread(fd, sh, int64(shoff)); err != nil || n != len(sh) {
			return 0, errors.New("section headers: short read")
		}
	}
	section := func(i int) []byte { return sh[i*64 : i*64+64] }
	symtab := -1
	for i := range shnum {
		if le.Uint32(section(i)[4:]) == 2 { // SHT_SYMTAB
			symtab = i
			break
		}
	}
	if symtab < 0 {
		return 0, errNoSymtab
	}
	st := section(symtab)
	symOff, symLen, strtab := le.Uint64(st[0x18:]), le.Uint64(st[0x20:]), int(le.Uint32(st[0x28:]))
	if le.Uint64(st[0x38:]) != symSize || strtab >= shnum || symLen > 1<<30 {
		return 0, errors.New("unexpected symbol table")
	}
	strOff := le.Uint64(section(strtab)[0x18:])
	// Go's linker writes the data symbols after the functions, the runtime's near the end:
	// the table is read backwards, a chunk at a time, until what is needed is found.
	pie := le.Uint16(eh[16:]) == 3 // ET_DYN; an ET_EXEC is loaded where it was linked
	// The anchors are a function and a variable of this package, found by their names where
	// their table addresses can be their run-time ones (a load bias is a whole number of
	// pages): the function gives a PIE's load bias, and the variable must then lie where the
	// table says, which another binary's table (another build of this one) does not give.
	// The function anchor is asked for only in a PIE: runtime.Caller and FuncForPC read the
	// cold pclntab, which an ordinary executable (ET_EXEC, Go's default) never needs here.
	var entry uintptr
	var anchorName string
	if pie {
		anchor := anchorFunc()
		entry, anchorName = anchor.Entry(), anchor.Name()
	}
	data := uint64(uintptr(unsafe.Pointer(&dataAnchor)))
	dataName := pkgPath + ".dataAnchor"
	nameIs := func(off uint32, want string) bool {
		buf := make([]byte, len(want)+1)
		n, err := syscall.Pread(fd, buf, int64(strOff)+int64(off))
		return err == nil && n == len(buf) && string(buf[:len(want)]) == want && buf[len(want)] == 0
	}
	const wantSize = nsig * unsafe.Sizeof(uintptr(0))
	const pageMask = 1<<12 - 1
	var value, anchorValue, dataValue uint64
	var shndx int
	// A page at a time: a larger buffer costs more to fault in than the reads it saves.
	chunk := buf[page : page+page/symSize*symSize]
	for end := symLen - symLen%symSize; end > 0 && (value == 0 || dataValue == 0 || pie && anchorValue == 0); {
		n := min(end, uint64(len(chunk)))
		end -= n
		if got, err := syscall.Pread(fd, chunk[:n], int64(symOff+end)); err != nil || uint64(got) != n {
			return 0, errors.New("symbol table: short read")
		}
		for p := 0; p+symSize <= int(n); p += symSize {
			e := chunk[p : p+symSize]
			switch kind := e[4] & 0xf; {
			case kind == 1 && value == 0 && le.Uint64(e[16:]) == uint64(wantSize): // STT_OBJECT
				if nameIs(le.Uint32(e), fwdSigName) {
					value, shndx = le.Uint64(e[8:]), int(le.Uint16(e[6:]))
				}
			case kind == 1 && dataValue == 0 && le.Uint64(e[16:]) == uint64(unsafe.Sizeof(dataAnchor)) &&
				(pie && le.Uint64(e[8:])&pageMask == data&pageMask || !pie && le.Uint64(e[8:]) == data):
				if nameIs(le.Uint32(e), dataName) {
					dataValue = le.Uint64(e[8:])
				}
			case kind == 2 && pie && anchorValue == 0 && le.Uint64(e[8:])&pageMask == uint64(entry)&pageMask: // STT_FUNC
				if nameIs(le.Uint32(e), anchorName) {
					anchorValue = le.Uint64(e[8:])
				}
			}
		}
	}
	if value == 0 {
		return 0, fmt.Errorf("no %s of %d bytes in the symbol table", fwdSigName, wantSize)
	}
	if pie && anchorValue == 0 {
		return 0, fmt.Errorf("no %s in the symbol table", anchorName)
	}
	if dataValue == 0 {
		return 0, fmt.Errorf("no %s at its run-time address in the symbol table: not this binary's", dataName)
	}
	if shndx == 0 || shndx >= shnum {
		return 0, fmt.Errorf("%s: section %d", fwdSigName, shndx)
	}
	in := section(shndx)
	flags, secAddr, secLen := le.Uint64(in[8:]), le.Uint64(in[0x10:]), le.Uint64(in[0x20:])
	if flags&3 != 3 || value < secAddr || value-secAddr > secLen || secLen-(value-secAddr) < uint64(wantSize) { // SHF_WRITE|SHF_ALLOC
		return 0, fmt.Errorf("%s does not lie in a writable section", fwdSigName)
	}
	if pie {
		bias := uint64(entry) - anchorValue
		if dataValue+bias != data {
			return 0, fmt.Errorf("%s not at its run-time address: not this binary's symbol table", dataName)
		}
		value += bias
	}
	return uintptr(value), nil
}

// pkgPath is this package's import path, which its symbols' names begin with (the test
// checks it against anchorFunc's name).
const pkgPath = "github.com/spear-shell/spear-shell/interp/realshell"

// dataAnchor is the variable the symbol table must place where it is (findFwdSig).
var dataAnchor uintptr

// anchorFunc describes itself: a function whose run-time entry and symbol name are known.
//
//go:noinline
func anchorFunc() *runtime.Func {
	pc, _, _, _ := runtime.Caller(0)
	return runtime.FuncForPC(pc)
}
