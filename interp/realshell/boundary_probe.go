package realshell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ProbeCacheName is the probe's cache file in the cache directory: one line of tab-separated
// fields (a format tag, bwrap's path, size and mtime, ok, reason). Not JSON: the -c fast path
// reads it, and a first JSON decode in a process costs more than the whole line parse.
const ProbeCacheName = "bwrap-probe"

const probeCacheTag = "spear-bwrap-probe-1"

// probeTimeout bounds the one bwrap run of a probe; a working bwrap takes milliseconds.
const probeTimeout = 10 * time.Second

// probeCache is the cached answer, valid while the binary's path, size and mtime stay.
type probeCache struct {
	Path   string
	Size   int64
	MTime  int64
	OK     bool
	Reason string
}

// Probe tells whether bwrap on PATH works here. It runs bwrap once with the boundary's
// options (cacheDir masked, the stub inside it, the bwrap binary masked as a file, and a
// /bin/sh command checking both)
// and caches the answer in cacheDir/bwrap-probe; the cached answer is reused while the
// bwrap binary's path, size and mtime are unchanged. A cache file that is not ours or is
// writable by others is ignored. reason says why not when ok is false.
func Probe(getenv func(string) string, cacheDir string) (bwrap string, ok bool, reason string) {
	bwrap, fi, err := lookBwrap(getenv("PATH"))
	if err != nil {
		return "", false, err.Error()
	}
	key := probeCache{Path: bwrap, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	cache := filepath.Join(cacheDir, ProbeCacheName)
	if c, err := readProbeCache(cache); err == nil && c.Path == key.Path && c.Size == key.Size && c.MTime == key.MTime {
		return bwrap, c.OK, c.Reason
	}
	key.OK, key.Reason = runProbe(bwrap, cacheDir)
	writeProbeCache(cache, key)
	return bwrap, key.OK, key.Reason
}

// lookBwrap finds bwrap on path, skipping relative entries (the workspace must not decide).
func lookBwrap(path string) (string, os.FileInfo, error) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, "bwrap")
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, fi, nil
		}
	}
	return "", nil, errors.New("bwrap not found on PATH")
}

// runProbe builds one boundary and checks from inside that its masks took effect.
func runProbe(bwrap, cacheDir string) (bool, string) {
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return false, fmt.Sprintf("probe: %v", err)
	}
	cacheDir, err := filepath.EvalSymlinks(cacheDir)
	if err != nil {
		return false, fmt.Sprintf("probe: %v", err)
	}
	empty := ensureEmpty(filepath.Join(cacheDir, EmptyName))
	if empty == "" {
		return false, "probe: cannot make the empty mask file in " + cacheDir
	}
	b := Boundary{
		Bwrap:      bwrap,
		Masks:      Masks{Dirs: []string{cacheDir}, Files: []string{bwrap}, Empty: empty},
		StubDir:    filepath.Join(cacheDir, "bin"),
		StubTarget: bwrap,
		Dir:        "/",
	}
	// The command checks inside that the file mask (bwrap reads as empty) and the stub took.
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	args := b.Args([]string{"/bin/sh", "-c", "test ! -s " + shellQuote(bwrap) + " && test -L " + shellQuote(filepath.Join(b.StubDir, StubName))})
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			return false, fmt.Sprintf("%s does not work here: %v", bwrap, err)
		}
		return false, fmt.Sprintf("%s does not work here: %v: %s", bwrap, err, msg)
	}
	return true, ""
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func readProbeCache(path string) (probeCache, error) {
	// Plain system calls: an *os.File would set up the runtime's poller, which the -c fast
	// path does not otherwise need.
	var c probeCache
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return c, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return c, err
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return c, errors.New("probe cache: not a private file of this user")
	}
	var buf [4096]byte
	n, err := syscall.Read(fd, buf[:])
	if err != nil {
		return c, err
	}
	line, complete := strings.CutSuffix(string(buf[:n]), "\n")
	fields := strings.Split(line, "\t")
	if !complete || len(fields) != 6 || fields[0] != probeCacheTag {
		return c, errors.New("probe cache: unknown format")
	}
	c.Path, c.Reason = fields[1], fields[5]
	c.OK = fields[4] == "ok"
	var e1, e2 error
	c.Size, e1 = strconv.ParseInt(fields[2], 10, 64)
	c.MTime, e2 = strconv.ParseInt(fields[3], 10, 64)
	return c, errors.Join(e1, e2)
}

// writeProbeCache replaces the cache atomically; failing to cache only costs a probe next time.
func writeProbeCache(path string, c probeCache) {
	ok := "no"
	if c.OK {
		ok = "ok"
	}
	flat := strings.NewReplacer("\t", " ", "\n", " ")
	data := strings.Join([]string{probeCacheTag, flat.Replace(c.Path), strconv.FormatInt(c.Size, 10),
		strconv.FormatInt(c.MTime, 10), ok, flat.Replace(c.Reason)}, "\t") + "\n"
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
	}
}
