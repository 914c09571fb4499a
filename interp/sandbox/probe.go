package sandbox

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

// bwrapDirs are where bwrap is looked for when SPEAR_BWRAP is not set (SPEC 2.1): never PATH,
// which the agent may write.
var bwrapDirs = []string{"/usr/bin", "/bin", "/usr/local/bin"}

// FindBwrap returns SPEAR_BWRAP (absolute), else the first bwrap in bwrapDirs.
func FindBwrap(getenv func(string) string) (string, os.FileInfo, error) {
	if b := getenv("SPEAR_BWRAP"); b != "" {
		if !filepath.IsAbs(b) {
			return "", nil, fmt.Errorf("SPEAR_BWRAP=%q is not an absolute path", b)
		}
		fi, err := os.Stat(b)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return "", nil, fmt.Errorf("SPEAR_BWRAP=%s is not an executable file", b)
		}
		return b, fi, nil
	}
	for _, dir := range bwrapDirs {
		p := filepath.Join(dir, "bwrap")
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, fi, nil
		}
	}
	return "", nil, fmt.Errorf("bwrap not found in %s (or set SPEAR_BWRAP)", strings.Join(bwrapDirs, ", "))
}

// Probe tells whether bwrap (fi its stat) works here. It runs bwrap once with the boundary's
// options (cacheDir masked, the stub inside it, a command checking both from inside) and
// caches the answer in cacheDir/bwrap-probe; the cached answer is reused while the bwrap
// binary's path, size and mtime are unchanged. cacheDir is the state parent, private and
// masked: nothing inside can forge the answer. reason says why not when ok is false.
func Probe(bwrap string, fi os.FileInfo, cacheDir string) (ok bool, reason string) {
	key := probeCache{Path: bwrap, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	cache := filepath.Join(cacheDir, ProbeCacheName)
	if c, err := readProbeCache(cache); err == nil && c.Path == key.Path && c.Size == key.Size && c.MTime == key.MTime {
		return c.OK, c.Reason
	}
	key.OK, key.Reason = runProbe(bwrap, cacheDir)
	writeProbeCache(cache, key)
	return key.OK, key.Reason
}

// runProbe builds one boundary and checks from inside that its mask, read-only root and stub
// took effect.
func runProbe(bwrap, cacheDir string) (bool, string) {
	cacheDir, err := filepath.EvalSymlinks(cacheDir)
	if err != nil {
		return false, fmt.Sprintf("probe: %v", err)
	}
	b := Boundary{
		Bwrap:      bwrap,
		Masks:      []string{cacheDir},
		StubDir:    filepath.Join(cacheDir, "bin"),
		StubTarget: bwrap,
		Dir:        "/",
	}
	stub := filepath.Join(b.StubDir, StubName)
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	check := "test -L " + shellQuote(stub) + " && ! test -e " + shellQuote(filepath.Join(cacheDir, ProbeCacheName)) +
		" && ! (: > /.spear-probe) 2>/dev/null && (: > /dev/shm/probe)"
	args := b.Args([]string{"/bin/sh", "-c", check})
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
