package audit

import (
	"sync"

	"golang.org/x/sys/unix"
)

// A process keeps the audit files it appends to open between records (an open, a stat and a
// close less per record: the MCP face writes two records a call, docs/bench.md face-invoke),
// and checks before each record that the file at the path is still the one it holds: a file
// renamed away, removed or replaced, or whose mode or owner changed, is closed and the path
// opened again, as if every record opened it. Only files of local file systems are kept (keepable).

// keptMax bounds the descriptors kept: the least recently used is closed past it.
const keptMax = 4

var (
	keptMu   sync.Mutex
	keptList []*kept // most recently used last
)

// kept is one audit path's descriptor; mu is held for a whole record.
type kept struct {
	mu       sync.Mutex
	path     string
	fd       int // -1: none
	readable bool
	keep     bool   // the file may stay open after the record
	evicted  bool   // no longer listed: a record that took it before closes what it opens
	dev, ino uint64 // the file fd holds
	mode     uint32 // its mode and owners when opened: a change opens it again, so that a
	uid, gid uint32 // file made read-only is refused as an open would refuse it
	end      int64  // the file's size after this process's last whole line in it, or -1
}

// keptFor returns path's entry, locked.
func keptFor(path string) *kept {
	keptMu.Lock()
	var k *kept
	for i, c := range keptList {
		if c.path == path {
			k = c
			keptList = append(keptList[:i], keptList[i+1:]...)
			break
		}
	}
	if k == nil {
		k = &kept{path: path, fd: -1, end: -1}
	}
	keptList = append(keptList, k)
	var evict *kept
	if len(keptList) > keptMax {
		evict = keptList[0]
		keptList = keptList[1:]
	}
	keptMu.Unlock()
	if evict != nil {
		evict.mu.Lock()
		evict.evicted = true
		evict.drop()
		evict.mu.Unlock()
	}
	k.mu.Lock()
	return k
}

// file returns a descriptor for the file now at k's path: the kept one when stat finds the same
// file there, or a new one (openAppend, whose errors and checks are every record's).
func (k *kept) file() (int, bool, error) {
	if k.fd >= 0 {
		var st unix.Stat_t
		if err := unix.Stat(k.path, &st); err == nil && st.Dev == k.dev && st.Ino == k.ino &&
			st.Mode == k.mode && st.Uid == k.uid && st.Gid == k.gid {
			return k.fd, k.readable, nil
		}
		k.drop()
	}
	fd, readable, err := openAppend(k.path)
	if err != nil {
		return -1, false, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, false, err
	}
	k.fd, k.readable, k.end, k.keep = fd, readable, -1, keepable(fd)
	k.dev, k.ino, k.mode, k.uid, k.gid = st.Dev, st.Ino, st.Mode, st.Uid, st.Gid
	return fd, readable, nil
}

// drop closes the descriptor, if any.
func (k *kept) drop() error {
	if k.fd < 0 {
		return nil
	}
	err := unix.Close(k.fd)
	k.fd, k.end = -1, -1
	return err
}

// keepable reports whether fd's file system is a local one, where a descriptor kept open loses
// nothing: a network file system (NFS) may report a failed write only at close, so a file
// there is opened and closed for every record, as before.
func keepable(fd int) bool {
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return false
	}
	switch uint32(sfs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC:
		return true
	}
	return false
}
