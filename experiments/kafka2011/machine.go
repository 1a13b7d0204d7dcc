package main

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// machineInfo describes where and when the figures were measured.
type machineInfo struct {
	date      time.Time
	cpuModel  string
	cpus      int
	memTotal  string
	kernel    string
	disk      string // file system and device of the data directories
	java      string
	goVersion string
	loadStart string
	loadEnd   string
}

func readMachine(ctx context.Context, tmp string) machineInfo {
	m := machineInfo{date: time.Now().UTC(), cpus: runtime.NumCPU(), goVersion: runtime.Version(), loadStart: readLoadAvg()}
	m.cpuModel = procField("/proc/cpuinfo", "model name")
	m.memTotal = procField("/proc/meminfo", "MemTotal")
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	if out, err := runTool(ctx, 10*time.Second, nil, "df", "-hT", tmp); err == nil {
		m.disk = lastLine(string(out))
	}
	if out, err := runTool(ctx, 30*time.Second, nil, "java", "-version"); err == nil {
		m.java = firstLine(string(out))
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

// readLoadAvg returns the 1, 5 and 15 minute load averages.
func readLoadAvg() string {
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

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(strings.Fields(lines[len(lines)-1]), " ")
}
