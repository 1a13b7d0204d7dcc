package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on
// every Linux architecture Go supports).
const clockTicks = 100

// groupCPU is the CPU seconds used so far by the live processes of
// process group pgid (their own time plus that of children they reaped).
// Unreadable entries (processes that just ended) are skipped.
func groupCPU(pgid int) float64 {
	if pgid <= 0 {
		return 0
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if g, t, ok := parseProcStat(string(b)); ok && g == pgid {
			ticks += t
		}
	}
	return float64(ticks) / clockTicks
}

// parseProcStat returns the process group and utime+stime+cutime+cstime
// (in clock ticks) of one /proc/<pid>/stat line. The command name is in
// parentheses and may hold spaces, so fields are counted after the last
// ')': state is field 3 of proc(5), pgrp 5, utime 14 .. cstime 17.
func parseProcStat(s string) (pgrp int, ticks int64, ok bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, false
	}
	for _, k := range f[11:15] {
		v, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		ticks += v
	}
	return pgrp, ticks, true
}

// pgidOf is the process group a started child leads (0 if none).
func pgidOf(p *proc) int {
	if p == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}
