package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	registerCommands(map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"env-file":  cmdEnvFile,
		"no-secret": cmdNoSecret,
	})
}

// env-file FILE: writes an env_file (mode 0600) holding a comment, a blank line, short values
// and TOKEN, a random 64-character value that no test file can know.
func cmdEnvFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: env-file FILE")
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	body := "# the server's own variables\n\n  # an indented comment\nSHORT=abc\nTOKEN=" + hex.EncodeToString(raw) +
		"\nQUOTED=\"a b\"\nEQ=x=y\n"
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(body), 0o600))
}

// no-secret ENVFILE DIR...: no file under the DIRs but ENVFILE holds any value of ENVFILE of
// 6 bytes or more (the redaction threshold), as it is or JSON-escaped.
func cmdNoSecret(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: no-secret ENVFILE DIR...")
	}
	envFile := ts.MkAbs(args[0])
	data, err := os.ReadFile(envFile)
	ts.Check(err)
	var secrets []string
	for _, line := range strings.Split(string(data), "\n") {
		if _, v, ok := strings.Cut(line, "="); ok && len(v) >= 6 && !strings.HasPrefix(line, "#") {
			secrets = append(secrets, v)
		}
	}
	if len(secrets) == 0 {
		ts.Fatalf("no-secret: %s holds no value of 6 bytes or more", args[0])
	}
	files := 0
	for _, dir := range args[1:] {
		err := filepath.WalkDir(ts.MkAbs(dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || p == envFile {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			for _, s := range secrets {
				if bytes.Contains(b, []byte(s)) {
					ts.Fatalf("no-secret: %s holds a value of %s", p, args[0])
				}
			}
			return nil
		})
		ts.Check(err)
	}
	ts.Logf("no-secret: %d files searched", files)
}
