package main

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// machineInfo describes where the figures were measured.
type machineInfo struct {
	cpuModel  string
	cpus      int
	kernel    string
	goVersion string
	memTotal  string
	loadStart string
	loadEnd   string
}

func readMachine() machineInfo {
	m := machineInfo{cpus: runtime.NumCPU(), goVersion: runtime.Version(), loadStart: loadAvg()}
	m.cpuModel = procField("/proc/cpuinfo", "model name")
	m.memTotal = procField("/proc/meminfo", "MemTotal")
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	return m
}

// procField returns the value of the first "key: value" line naming key.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// loadAvg returns the 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// load1 is the 1-minute load average, or -1 when unknown.
func load1() float64 {
	f := strings.Fields(loadAvg())
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// countLines is the number of lines of a file, -1 if unreadable.
func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	return strings.Count(string(b), "\n")
}
