package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// baselineCommit is the build of spear-shell that c-true measures beside this one, in the same
// alternation: main as of 2026-11-29, whose -c fast path measured 1.12-1.16x the exec floor
// when the fast path of 2026-12-01 measured 1.21-1.26x (issue 22, item 3).
const baselineCommit = "ef3f36d"

// baselineBinary returns the copy of the baseline spear-shell that c-true runs, making it on
// the first call: from -baseline DIR, else built from baselineCommit out of the git history of
// the module the bench runs in (git archive, then go build as make build does) into the
// scratch directory. It returns "" and why when there is none (-baseline none, no git, a
// shallow clone without the commit, a failed build).
func (w *world) baselineBinary(ctx context.Context) (string, string) {
	if w.baselineDone {
		return w.baseline, w.baselineWhy
	}
	w.baselineDone = true
	dir := filepath.Join(w.root, "baseline")
	var src string
	switch w.o.baseline {
	case "none":
		w.baselineWhy = "-baseline none"
		return "", w.baselineWhy
	case "":
		built, err := w.buildBaseline(ctx, dir)
		if err != nil {
			w.baselineWhy = err.Error() + " (or pass -baseline DIR, a directory holding its spear-shell)"
			return "", w.baselineWhy
		}
		src = built
	default:
		src = filepath.Join(w.o.baseline, "spear-shell")
	}
	// A copy, as the product's own binary is measured (install).
	bin := filepath.Join(dir, "bin", "spear-shell")
	err := os.MkdirAll(filepath.Dir(bin), 0o755)
	if err == nil {
		err = copyExecutable(src, bin)
	}
	if err != nil {
		w.baselineWhy = fmt.Sprintf("baseline: %v", err)
		return "", w.baselineWhy
	}
	w.baseline = bin
	w.logf("baseline: %s (from %s)", bin, src)
	return w.baseline, ""
}

// buildBaseline extracts baselineCommit's tree into dir/src and builds its spear-shell there.
func (w *world) buildBaseline(ctx context.Context, dir string) (string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", fmt.Errorf("%s cannot be built: no git", baselineCommit)
	}
	out, err := exec.CommandContext(ctx, "git", "-C", w.modDir, "rev-parse", "--verify", "--quiet", baselineCommit+"^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("%s is not in the history of %s (a shallow clone? git fetch --unshallow)", baselineCommit, w.modDir)
	}
	commit := strings.TrimSpace(string(out))
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", fmt.Errorf("baseline: %w", err)
	}
	archive := exec.CommandContext(ctx, "git", "-C", w.modDir, "archive", "--format=tar", commit)
	var stderr bytes.Buffer
	archive.Stderr = &stderr
	tarOut, err := archive.StdoutPipe()
	if err != nil {
		return "", fmt.Errorf("baseline: %w", err)
	}
	if err := archive.Start(); err != nil {
		return "", fmt.Errorf("baseline: git archive: %w", err)
	}
	xerr := untar(tarOut, src)
	_, _ = io.Copy(io.Discard, tarOut)
	if err := archive.Wait(); err != nil || xerr != nil {
		return "", fmt.Errorf("baseline: git archive %s: %v %v %s", baselineCommit, err, xerr, strings.TrimSpace(stderr.String()))
	}
	build := exec.CommandContext(ctx, w.goTool, "build", "-trimpath", "-o", filepath.Join(dir, "build")+"/", "./cmd/spear-shell")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("baseline: building %s: %v\n%s", baselineCommit, err, out)
	}
	w.logf("baseline: built %s (%s)", baselineCommit, commit)
	return filepath.Join(dir, "build", "spear-shell"), nil
}

// untar writes the regular files and directories of a git archive stream under dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("archive entry %q outside the tree", h.Name)
		}
		path := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, path); err != nil {
				return err
			}
		}
	}
}
