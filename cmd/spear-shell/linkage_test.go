package main

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgramInterpreter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A 32-bit big-endian ELF whose one program header is PT_INTERP.
	elf32 := make([]byte, 84)
	copy(elf32, "\x7fELF\x01\x02\x01")
	binary.BigEndian.PutUint32(elf32[0x1c:], 52) // e_phoff
	binary.BigEndian.PutUint16(elf32[0x2a:], 32) // e_phentsize
	binary.BigEndian.PutUint16(elf32[0x2c:], 1)  // e_phnum
	binary.BigEndian.PutUint32(elf32[52:], ptInterp)
	binary.BigEndian.PutUint32(elf32[52+4:], 84)  // p_offset
	binary.BigEndian.PutUint32(elf32[52+16:], 13) // p_filesz
	elf32 = append(elf32, "/lib/ld.so.1\x00"...)

	cases := []struct {
		name, path, want, err string
	}{
		{"static spear-shell (CGO_ENABLED=0)", filepath.Join(binDir, "spear-shell"), "", ""},
		{"32-bit big-endian", write("elf32", elf32), "/lib/ld.so.1", ""},
		{"interpreter out of the file", write("cut", elf32[:90]), "", "PT_INTERP"},
		{"not ELF", write("text", []byte(strings.Repeat("#!/bin/sh\n", 10))), "", "not an ELF file"},
		{"short", write("short", []byte("\x7fELF")), "", "not an ELF file"},
		{"missing", filepath.Join(dir, "nonesuch"), "", "no such file"},
	}
	if sh, err := programInterpreter("/bin/sh"); err == nil && sh != "" { // a distribution's shell is dynamic
		cases = append(cases, struct{ name, path, want, err string }{"/bin/sh", "/bin/sh", sh, ""})
		if !strings.Contains(sh, "ld") {
			t.Errorf("/bin/sh: interpreter %q", sh)
		}
	}
	for _, c := range cases {
		got, err := programInterpreter(c.path)
		if got != c.want || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %q, %v; want %q, error %q", c.name, got, err, c.want, c.err)
		}
	}
}

// --check warns when the running spear-shell is dynamically linked (plain go build with cgo),
// and says nothing of it for the static build.
func TestCheckWarnsDynamic(t *testing.T) {
	t.Parallel()
	if out, err := exec.Command("go", "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skip("no cgo here: a plain go build is static")
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/spear-shell")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	check := func(bin string) string {
		cmd := exec.Command(bin, "--check")
		cmd.Env = []string{"SPEAR_HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "SPEAR_ISOLATION=none"}
		out, _ := cmd.Output() // no configuration: exit 1, which is not what is tested
		return string(out)
	}
	if out := check(filepath.Join(dir, "spear-shell")); !strings.Contains(out, "warning: this spear-shell is dynamically linked (program interpreter /") ||
		!strings.Contains(out, "CGO_ENABLED=0") {
		t.Errorf("dynamic build: --check printed\n%s", out)
	}
	if out := check(filepath.Join(binDir, "spear-shell")); strings.Contains(out, "warning:") {
		t.Errorf("static build: --check printed\n%s", out)
	}
}

// The -c fast path runs from package initialisation (docs/shell.md): no package of ours that is
// initialised before it may do work at init (a map built, a string computed by a call), which
// every -c command would pay. capability/search's stop words and realshell's interrupt trap
// were such work once.
func TestNothingOfOursInitialisesBeforeTheFastPath(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(filepath.Join(binDir, "spear-shell"), "-c", "true")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "SPEAR_ISOLATION=none")
	out, _ := cmd.CombinedOutput()
	seen := 0
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/spear-shell/") {
			continue
		}
		seen++
		if !strings.Contains(line, " 0 bytes, 0 allocs") {
			t.Errorf("initialised with work before the fast path: %s", line)
		}
	}
	if !strings.Contains(string(out), "init runtime") {
		t.Fatalf("no init trace: %s", out)
	}
	t.Logf("%d packages of ours initialised before the fast path, none with work", seen)
}
