package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Usage is spear-shell --report's synopsis.
const Usage = "spear-shell --report [--audit FILE]... [--session S] [--turn T] [--since RFC3339-TIME] [--html FILE]"

// Main runs spear-shell --report with the arguments after --report. It exits 0 whenever the
// trail was read (what does not add up is in the report, not an error), 2 on bad flags or a
// file it cannot read, 1 when the report cannot be written. color asks for colour in the text
// (stdout is a terminal); getenv reads the deployment's settings (SPEC 2.1).
func Main(args []string, stdout, stderr io.Writer, color bool, getenv func(string) string) int {
	var files []string
	var f Filter
	var since, html string
	// Parsed by hand: package flag would be initialised before the -c fast path of every
	// command line (it is linked into spear-shell), for a mode that is seldom run.
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(args[i], "=")
		var dst *string
		switch name {
		case "--audit":
			files = append(files, "")
			dst = &files[len(files)-1]
		case "--session":
			dst = &f.Session
		case "--turn":
			dst = &f.Turn
		case "--since":
			dst = &since
		case "--html":
			dst = &html
		default:
			fmt.Fprintf(stderr, "spear-shell: --report: unexpected argument %q\nusage: %s\n", excerpt(args[i], 80), Usage)
			return 2
		}
		if !inline {
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "spear-shell: --report: %s needs a value\nusage: %s\n", name, Usage)
				return 2
			}
			i++
			value = args[i]
		}
		if value == "" {
			fmt.Fprintf(stderr, "spear-shell: --report: %s: empty value\nusage: %s\n", name, Usage)
			return 2
		}
		*dst = value
	}
	if since != "" {
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			fmt.Fprintf(stderr, "spear-shell: --report: --since %q is not an RFC 3339 time (2026-12-07T10:00:00Z)\n", excerpt(since, 80))
			return 2
		}
		f.Since = t
	}
	if len(files) == 0 {
		var err error
		if files, err = defaultFiles(getenv); err != nil {
			fmt.Fprintf(stderr, "spear-shell: --report: %v\n", err)
			return 2
		}
	}
	r, err := Read(files, f)
	if err != nil {
		fmt.Fprintf(stderr, "spear-shell: --report: %v\n", err)
		return 2
	}
	defer r.Close()
	if html != "" {
		if err := writePage(html, r); err != nil {
			fmt.Fprintf(stderr, "spear-shell: --report: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "report: %d turns of %d records written to %s\n", r.Turns(), r.Records, excerpt(html, 200))
		return 0
	}
	if err := r.Text(stdout, color); err != nil {
		fmt.Fprintf(stderr, "spear-shell: --report: %v\n", err)
		return 1
	}
	return 0
}

// defaultFiles is the deployment's audit file (SPEAR_AUDIT_FILE, else $SPEAR_HOME/audit.jsonl)
// and the broker's when capabilities.json names another (broker.audit, SPEC 2.3 and 14).
func defaultFiles(getenv func(string) string) ([]string, error) {
	home := getenv("SPEAR_HOME")
	if home == "" {
		base := getenv("XDG_CONFIG_HOME")
		if base == "" {
			h := getenv("HOME")
			if h == "" {
				return nil, errors.New("no audit file: set SPEAR_AUDIT_FILE or SPEAR_HOME, or name one with --audit")
			}
			base = filepath.Join(h, ".config")
		}
		home = filepath.Join(base, "spear")
	}
	files := []string{getenv("SPEAR_AUDIT_FILE")}
	if files[0] == "" {
		files[0] = filepath.Join(home, "audit.jsonl")
	}
	caps := getenv("SPEAR_CAPABILITIES_FILE")
	if caps == "" {
		caps = filepath.Join(home, "capabilities.json")
	}
	// Only broker.audit is read here; the file's validity is --check's to judge. A file that
	// cannot be read names no broker file.
	if b, err := os.ReadFile(caps); err == nil {
		var c struct {
			Broker struct {
				Audit string `json:"audit"`
			} `json:"broker"`
		}
		if json.Unmarshal(b, &c) == nil && filepath.IsAbs(c.Broker.Audit) {
			files = append(files, filepath.Clean(c.Broker.Audit))
		}
	}
	return files, nil
}
