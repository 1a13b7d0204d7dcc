package net

import (
	"bufio"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultQueuedMaxRequestBytes is the bound Varve gives the request memory
// pool when queued.max.request.bytes is unset (-1). Kafka leaves the pool
// unbounded then and relies on its fixed JVM heap; a Go process has no such
// ceiling, so Varve derives one from the memory the operator gives the
// process:
//
//   - half of the Go memory limit, if one is set (GOMEMLIMIT or
//     debug.SetMemoryLimit);
//   - otherwise a quarter of physical memory or of the cgroup's memory limit
//     (memory.max, cgroup v2; memory.limit_in_bytes, v1), whichever is less;
//
// and never less than requestMax (socket.request.max.bytes), so that any
// legal request can still be read.
func DefaultQueuedMaxRequestBytes(requestMax int32) int64 {
	return max(memoryBudget(), int64(requestMax))
}

// memoryBudget is the share of the process's memory requests may hold.
func memoryBudget() int64 {
	if lim := debug.SetMemoryLimit(-1); lim > 0 && lim < math.MaxInt64 {
		return lim / 2
	}
	total := physicalMemory()
	if cg := cgroupMemoryLimit(); cg > 0 && (total <= 0 || cg < total) {
		total = cg
	}
	return total / 4
}

// physicalMemory is the machine's RAM in bytes (0 if unknown).
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(min(uint64(si.Totalram)*uint64(si.Unit), math.MaxInt64))
}

// cgroupMemoryLimit is the memory limit of the process's cgroup in bytes,
// or 0 when there is none or it cannot be read.
func cgroupMemoryLimit() int64 {
	var paths []string
	if p := cgroupV2Path(); p != "" {
		paths = append(paths, "/sys/fs/cgroup"+p+"/memory.max")
	}
	paths = append(paths, "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
	for _, p := range paths {
		if n := readLimitFile(p); n > 0 {
			return n
		}
	}
	return 0
}

// cgroupV2Path is the process's cgroup v2 path ("0::/path" in
// /proc/self/cgroup), or "" if none.
func cgroupV2Path() string {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok && p != "/" {
			return p
		}
	}
	return ""
}

// readLimitFile parses a cgroup limit file; "max" and the v1 "no limit"
// values (near MaxInt64) count as no limit (0).
func readLimitFile(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= math.MaxInt64/2 {
		return 0
	}
	return n
}
