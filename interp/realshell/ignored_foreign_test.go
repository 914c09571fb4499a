package realshell

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFindFwdSigRefusesOthers: the symbol table of a file that is not this very binary (another
// build, plain or PIE, of a program holding the same package) or a corrupt ELF header gives no
// address to read, never a panic: readIgnored reads the address it is given in place.
func TestFindFwdSigRefusesOthers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	buildProbes(t, dir, false)
	files := []string{filepath.Join(dir, "plain"), filepath.Join(dir, "pie")}
	header := func(shoff uint64, shnum uint16) []byte {
		h := make([]byte, 64)
		copy(h, "\x7fELF\x02\x01\x01")
		binary.LittleEndian.PutUint16(h[16:], 2) // ET_EXEC
		binary.LittleEndian.PutUint64(h[0x28:], shoff)
		binary.LittleEndian.PutUint16(h[0x3a:], 64)
		binary.LittleEndian.PutUint16(h[0x3c:], shnum)
		return h
	}
	for name, data := range map[string][]byte{
		"shoff wraps":      header(1<<64-64, 1),
		"shoff past end":   header(1<<40, 2),
		"shoff mid header": header(60, 1),
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	for _, path := range files {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		addr, err := findFwdSig(fd)
		syscall.Close(fd)
		if err == nil {
			t.Errorf("%s: findFwdSig gave %#x, not an error: another binary's address", filepath.Base(path), addr)
		}
	}
}
