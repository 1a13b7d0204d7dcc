//go:build !(linux && (amd64 || arm64 || riscv64 || ppc64le || ppc64 || s390x || loong64 || mips64 || mips64le))

package pagecache

import "golang.org/x/sys/unix"

// readahead falls back to fadvise(WILLNEED) where the readahead(2) argument
// layout differs (32-bit ABIs split the offset across registers).
func readahead(fd int, off, n int64) error {
	return unix.Fadvise(fd, off, n, unix.FADV_WILLNEED)
}
