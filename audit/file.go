package audit

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// openFlags: O_APPEND makes every write land at the end whoever else holds the
// file open; O_NONBLOCK keeps a FIFO planted at the path from blocking us
// (it is refused below); O_NOCTTY keeps a terminal from becoming ours.
const openFlags = unix.O_APPEND | unix.O_CREAT | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY

// openAppend opens path for appending, creating it 0600. It asks for read
// access too, to repair a line torn by a writer that died mid-write; a file
// we may only write is still used, without that repair.
func openAppend(path string) (fd int, readable bool, err error) {
	fd, err = retryEINTR(func() (int, error) { return unix.Open(path, openFlags|unix.O_RDWR, 0o600) })
	readable = true
	if errors.Is(err, unix.EACCES) {
		fd, err = retryEINTR(func() (int, error) { return unix.Open(path, openFlags|unix.O_WRONLY, 0o600) })
		readable = false
	}
	if err != nil {
		return -1, false, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, false, &fs.PathError{Op: "open", Path: path, Err: errors.New("not a regular file")}
	}
	return fd, readable, nil
}

// checkFile is what Open does to the file: the same open, then close.
func checkFile(path string) error {
	fd, _, err := openAppend(path)
	if err != nil {
		return err
	}
	if err := unix.Close(fd); err != nil {
		return &fs.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// appendLine appends line (one record ending in '\n') to path with a single
// write(2) while holding an exclusive flock, so cooperating writers in any
// number of processes never interleave or tear lines. A short write (file size
// limit, full disk) is undone by truncating back to where the line began,
// which is safe because every writer holds the lock while it writes; the
// caller gets an error and the file keeps only whole lines. If sync is set the
// data is also flushed to disk (fdatasync) before returning.
//
// With reserve > 0 the line is written only once the file holds, allocated past its end, room
// for it and reserve bytes more (reserveAfter): what follows can then be written even if the
// file system fills meanwhile.
//
// The file is the one at path when the record is written: a file renamed away (rotated) or
// replaced gets no more records, the next goes to the new one (kept.file).
func appendLine(path string, line []byte, sync bool, reserve int64) (err error) {
	k := keptFor(path)
	defer k.mu.Unlock()
	fd, readable, err := k.file()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil || !k.keep || k.evicted {
			// close releases the lock; on some file systems (NFS) it is also where a failed
			// write is reported, so a file there is never kept open (keepable).
			if cerr := k.drop(); cerr != nil && err == nil {
				err = &fs.PathError{Op: "close", Path: path, Err: cerr}
			}
			return
		}
		if _, uerr := retryEINTR(func() (int, error) { return 0, unix.Flock(fd, unix.LOCK_UN) }); uerr != nil {
			k.drop()
			err = &fs.PathError{Op: "unlock", Path: path, Err: uerr}
		}
	}()
	if _, err := retryEINTR(func() (int, error) { return 0, unix.Flock(fd, unix.LOCK_EX) }); err != nil {
		return &fs.PathError{Op: "lock", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	size := st.Size
	if readable && size > 0 && size != k.end {
		// A line left without its newline (a writer killed mid-write, or a truncation that
		// failed) must not swallow the start of ours. A file that ends where this process's
		// last line to it ended, which held the lock until it ended with a newline, needs no
		// look.
		var last [1]byte
		if n, err := unix.Pread(fd, last[:], size-1); err == nil && n == 1 && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	k.end = -1
	if reserve > 0 {
		if err := reserveAfter(fd, &st, int64(len(line))+reserve); err != nil {
			return &fs.PathError{Op: "reserve", Path: path, Err: err}
		}
	}
	n, err := retryEINTR(func() (int, error) { return unix.Write(fd, line) })
	if err == nil && n == len(line) {
		k.end = size + int64(n)
		if sync {
			if _, err := retryEINTR(func() (int, error) { return 0, unix.Fdatasync(fd) }); err != nil {
				return &fs.PathError{Op: "sync", Path: path, Err: err}
			}
		}
		return nil
	}
	if err == nil {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
	}
	if n > 0 {
		if terr := unix.Ftruncate(fd, size); terr != nil {
			err = fmt.Errorf("%w; a partial line remains: truncate: %w", err, terr)
		}
	}
	return &fs.PathError{Op: "write", Path: path, Err: err}
}

// reserveAfter makes sure n bytes after the end of the file (st, as fstat saw it under the
// lock) can be written to it: they are preallocated without changing the file's size
// (fallocate FALLOC_FL_KEEP_SIZE), so later appends land in blocks that are already the file's.
// When st already shows that much allocated past the end, nothing is asked: a reservation asks
// reserveAhead more than it needs, so the records that follow find their room there (fallocate
// dirties the inode, which costs ext4 about 20 µs under load, the fstat that sees the room
// nothing more). Where the file system cannot preallocate, the free space is checked instead (a
// weaker promise: docs/audit.md). A file size limit (RLIMIT_FSIZE) that n more bytes would pass
// is refused too, since preallocation does not count against it but the writes will.
func reserveAfter(fd int, st *unix.Stat_t, n int64) error {
	size := st.Size
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &rl); err == nil && rl.Cur != unix.RLIM_INFINITY && uint64(size+n) > rl.Cur {
		return fmt.Errorf("the file size limit (%d bytes) leaves no room for %d bytes more", rl.Cur, n)
	}
	if allocatedPast(st) >= n {
		return nil
	}
	err := fallocate(fd, size, n+reserveAhead)
	if err != nil && err != unix.EOPNOTSUPP && err != unix.ENOSYS {
		err = fallocate(fd, size, n) // what the call needs may still fit
	}
	if err != unix.EOPNOTSUPP && err != unix.ENOSYS {
		return err
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return err
	}
	if free := int64(sfs.Bavail) * int64(sfs.Bsize); free < n {
		return fmt.Errorf("%w: %d bytes free, %d needed", unix.ENOSPC, free, n)
	}
	return nil
}

func fallocate(fd int, off, n int64) error {
	_, err := retryEINTR(func() (int, error) { return 0, unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, off, n) })
	return err
}

// reserveAhead is what a reservation asks beyond the room it needs, for the records after it.
const reserveAhead = 256 << 10

// allocSlack bounds what st_blocks counts besides the file's data and its room past the end:
// the file system's own blocks for the file (an extent tree, extended attributes).
const allocSlack = 64 << 10

// allocatedPast is how many bytes past the end of the file st surely has allocated: what
// st_blocks counts, less the file's data in whole blocks and allocSlack. A hole inside the file
// only makes it say less.
func allocatedPast(st *unix.Stat_t) int64 {
	bs := int64(st.Blksize)
	if bs <= 0 {
		bs = 4096
	}
	return st.Blocks*512 - (st.Size+bs-1)/bs*bs - allocSlack
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}
