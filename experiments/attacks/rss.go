package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// rssOf is a process's resident set (VmRSS) in bytes.
func rssOf(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return parseKB(v)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// parseKB reads "  123456 kB".
func parseKB(v string) (int64, error) {
	f := strings.Fields(v)
	if len(f) != 2 || f[1] != "kB" {
		return 0, fmt.Errorf("bad memory field %q", v)
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	return n << 10, err
}

// watch samples a process's RSS every 20 ms, keeps the peak, and calls
// kill once when it passes killAt (the stand-in for a memory limit).
type watch struct {
	peak   atomic.Int64
	killed atomic.Bool
	stop   chan struct{}
	done   chan struct{}
}

func watchRSS(pid int, killAt int64, kill func()) *watch {
	w := &watch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, err := rssOf(pid); err == nil {
				w.observe(rss)
				if rss > killAt && !w.killed.Swap(true) {
					kill()
					return
				}
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *watch) observe(rss int64) {
	for {
		cur := w.peak.Load()
		if rss <= cur || w.peak.CompareAndSwap(cur, rss) {
			return
		}
	}
}

// end stops sampling and returns the peak.
func (w *watch) end() int64 {
	close(w.stop)
	<-w.done
	return w.peak.Load()
}
