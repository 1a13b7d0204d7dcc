package pagecache

import (
	"os"

	"golang.org/x/sys/unix"
)

// fileVersion identifies one version of a file's contents for the block
// cache. Device and inode name the file; birth time tells a new file that
// reuses a freed inode number from the old one; size, mtime and ctime change
// on every write, truncate and metadata change, so a file truncated and
// rewritten in place (same inode) gets a new version; gen is bumped by
// BlockCache.Invalidate, for writers on file systems whose timestamps are too
// coarse to tell two writes in one clock tick apart.
type fileVersion struct {
	dev, ino            uint64
	btime, mtime, ctime int64 // nanoseconds since the epoch
	size                int64
	gen                 uint64
}

// fileKey is the part of fileVersion that survives writes: the inode.
type fileKey struct{ dev, ino uint64 }

func (v fileVersion) key() fileKey { return fileKey{v.dev, v.ino} }

// statVersion reads f's current version with one statx(2).
func statVersion(f *os.File) (fileVersion, error) {
	var st unix.Statx_t
	err := withFd(f, func(fd int) error {
		return unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_SYNC_AS_STAT,
			unix.STATX_BASIC_STATS|unix.STATX_BTIME, &st)
	})
	if err != nil {
		return fileVersion{}, err
	}
	return fileVersion{
		dev:   unix.Mkdev(st.Dev_major, st.Dev_minor),
		ino:   st.Ino,
		btime: nanos(st.Btime),
		mtime: nanos(st.Mtime),
		ctime: nanos(st.Ctime),
		size:  int64(st.Size),
	}, nil
}

func nanos(t unix.StatxTimestamp) int64 { return t.Sec*1e9 + int64(t.Nsec) }
