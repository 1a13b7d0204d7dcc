//go:build linux && (amd64 || arm64 || riscv64 || ppc64le || ppc64 || s390x || loong64 || mips64 || mips64le)

package pagecache

import "golang.org/x/sys/unix"

// readahead wraps readahead(2), which golang.org/x/sys/unix does not expose.
// On 64-bit ABIs the offset fits one register.
func readahead(fd int, off, n int64) error {
	_, _, e := unix.Syscall(unix.SYS_READAHEAD, uintptr(fd), uintptr(off), uintptr(n))
	if e != 0 {
		return e
	}
	return nil
}
