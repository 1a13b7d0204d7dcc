package diskmodel

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// alignedBuffer returns n bytes of anonymous memory from mmap, which is
// page-aligned as O_DIRECT requires. Release it with unix.Munmap.
func alignedBuffer(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
}

// openDirect opens path for O_DIRECT reads and checks that an aligned read
// works. It returns nil, nil when the file system refuses O_DIRECT (EINVAL,
// EOPNOTSUPP: tmpfs on older kernels, some overlays), so the caller falls
// back to evicting the page cache.
func openDirect(path string, probe []byte) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if directRefused(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.ReadAt(probe[:pageSize], 0); err != nil {
		f.Close()
		if directRefused(err) {
			return nil, nil
		}
		return nil, err
	}
	return f, nil
}

func directRefused(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP)
}

// evict asks the kernel to drop f's cached pages in [off, off+n); n == 0
// means to the end. Only clean pages go, so callers fdatasync first. The
// advice can be ignored (tmpfs keeps its pages), which is why calibration
// measures residency afterwards instead of trusting this call; its error is
// therefore not fatal and is dropped.
func evict(f *os.File, off, n int64) {
	_ = unix.Fadvise(int(f.Fd()), off, n, unix.FADV_DONTNEED)
}

// residentFraction returns the fraction of f's pages (size bytes) that are
// in the page cache, from mincore(2) on a read-only mapping that is never
// touched. It returns -1 when the file cannot be mapped.
func residentFraction(f *os.File, size int64) float64 {
	m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return -1
	}
	defer unix.Munmap(m)
	pages := (len(m) + os.Getpagesize() - 1) / os.Getpagesize()
	vec := make([]byte, pages)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])),
		uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return -1
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	return float64(resident) / float64(pages)
}

// fsNames maps statfs(2) magic numbers to file system names.
var fsNames = map[int64]string{
	unix.EXT4_SUPER_MAGIC:      "ext4",
	unix.XFS_SUPER_MAGIC:       "xfs",
	unix.BTRFS_SUPER_MAGIC:     "btrfs",
	unix.TMPFS_MAGIC:           "tmpfs",
	unix.OVERLAYFS_SUPER_MAGIC: "overlay",
	unix.NFS_SUPER_MAGIC:       "nfs",
	unix.F2FS_SUPER_MAGIC:      "f2fs",
	0x2fc12fc1:                 "zfs",
}

// fsType names the file system holding dir, or gives its magic in hex.
func fsType(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	if name, ok := fsNames[int64(st.Type)]; ok {
		return name
	}
	return fmt.Sprintf("0x%x", st.Type)
}

// loadAvg1 returns the 1-minute load average, or 0 when unknown.
func loadAvg1() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(fields[0], 64)
	return v
}
