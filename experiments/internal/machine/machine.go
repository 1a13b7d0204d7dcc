// Package machine describes the machine an experiment runs on (CPU,
// memory, kernel, Go, load average), for the results' summaries: every
// figure Varve reports is only meaningful beside where and under what load
// it was measured.
package machine

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Info describes where the figures were measured.
type Info struct {
	CPUModel  string
	CPUs      int
	Kernel    string
	GoVersion string
	MemTotal  string
	LoadStart string // 1, 5 and 15 minute load averages when Read was called
	LoadEnd   string // set by the experiment when it ends
}

// Read describes this machine now.
func Read() Info {
	m := Info{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadStart: LoadAvg()}
	m.CPUModel = ProcField("/proc/cpuinfo", "model name")
	m.MemTotal = ProcField("/proc/meminfo", "MemTotal")
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	return m
}

// ProcField returns the value of the first "key: value" line naming key
// in a /proc file, or "unknown".
func ProcField(path, key string) string {
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

// LoadAvg returns the 1, 5 and 15 minute load averages, or "unknown".
func LoadAvg() string {
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

// Load1 is the 1-minute load average, or -1 when unknown.
func Load1() float64 {
	f := strings.Fields(LoadAvg())
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}
