package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	stdnet "net"
	"os"
	"runtime"
	"time"

	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/pagecache"
)

// serverMain is the server child: it serves the workload with one design
// (Kafka's default network settings) and measures itself on request.
func serverMain(cfg config, in io.Reader, out io.Writer) error {
	if _, err := raiseNofile(); err != nil {
		return err
	}
	h, closeFile, err := workloadHandler(cfg.workload, cfg.file)
	if err != nil {
		return err
	}
	defer closeFile()
	srv, err := newServer(cfg.design, h)
	if err != nil {
		return err
	}
	ln, err := stdnet.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintln(out, lineAddr, ln.Addr().String())
	cmdErr := serveCommands(srv, in, out)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shutErr := srv.Shutdown(ctx)
	if err := <-served; !errors.Is(err, vnet.ErrServerClosed) {
		return errors.Join(cmdErr, shutErr, err)
	}
	return errors.Join(cmdErr, shutErr)
}

func newServer(design string, h vnet.Handler) (vnet.Server, error) {
	if design == designGoroutine {
		return vnet.NewGoroutineServer(vnet.Config{}, h)
	}
	return vnet.NewReactor(vnet.Config{}, h)
}

// workloadHandler answers with 100 bytes, or with 64 KiB regions rotating
// over a file that the page cache holds.
func workloadHandler(workload, file string) (vnet.Handler, func(), error) {
	if workload != workloadRegion {
		body := make([]byte, smallResp)
		return vnet.HandlerFunc(func(_ *vnet.Request, respond func(vnet.Response)) {
			respond(vnet.Response{Parts: []vnet.Part{{Bytes: body}}})
		}), func() {}, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, fmt.Errorf("region file: %w", err)
	}
	slots := int64(regionFile / regionResp)
	h := vnet.HandlerFunc(func(req *vnet.Request, respond func(vnet.Response)) {
		off := (int64(uint32(req.CorrelationID)) % slots) * regionResp
		r := &pagecache.Region{File: f, Off: off, Len: regionResp}
		respond(vnet.Response{Parts: []vnet.Part{{Region: r}}})
	})
	return h, func() { f.Close() }, nil
}

// serveCommands answers mark and report until stdin closes.
func serveCommands(srv vnet.Server, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	var m mark
	for sc.Scan() {
		switch sc.Text() {
		case lineMark:
			m = takeMark(srv)
			fmt.Fprintln(out, lineOK)
		case lineReport:
			line, err := encodeLine(m.report(srv))
			if err != nil {
				return err
			}
			fmt.Fprintln(out, line)
		default:
			return fmt.Errorf("unknown command %q", sc.Text())
		}
	}
	return sc.Err()
}

// mark is the server's state at the start of the measured window.
type mark struct {
	at        time.Time
	user, sys time.Duration
	stats     vnet.Stats
}

func takeMark(srv vnet.Server) mark {
	u, s := cpuTime()
	return mark{at: time.Now(), user: u, sys: s, stats: srv.Stats()}
}

// report measures the window since m.
func (m mark) report(srv vnet.Server) serverReport {
	u, s := cpuTime()
	st := srv.Stats()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	ps := procStatus()
	return serverReport{
		WallSeconds:    time.Since(m.at).Seconds(),
		UserCPUSeconds: (u - m.user).Seconds(),
		SysCPUSeconds:  (s - m.sys).Seconds(),
		RSSBytes:       ps["VmRSS"],
		RSSPeakBytes:   ps["VmHWM"],
		HeapInuse:      ms.HeapInuse,
		StackInuse:     ms.StackInuse,
		GoSys:          ms.Sys,
		Goroutines:     runtime.NumGoroutine(),
		Threads:        ps["Threads"],
		Connections:    st.Connections,
		Requests:       st.Requests - m.stats.Requests,
		BytesOut:       st.BytesOut - m.stats.BytesOut,
		IdleRatio:      idleRatio(m.stats, st),
	}
}

// idleRatio is the processors' time in epoll_wait over their wall time
// during the window, averaged over processors; -1 without processors.
func idleRatio(before, after vnet.Stats) float64 {
	if len(after.Processors) == 0 || len(before.Processors) != len(after.Processors) {
		return -1
	}
	var idle, wall time.Duration
	for i, p := range after.Processors {
		idle += p.IdleTime - before.Processors[i].IdleTime
		wall += p.WallTime - before.Processors[i].WallTime
	}
	if wall <= 0 {
		return -1
	}
	return float64(idle) / float64(wall)
}
