package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	stdnet "net"
	"sync"
	"sync/atomic"
	"time"

	vnet "github.com/varve/varve/net"
)

const (
	dialParallel = 128              // dials in flight while connecting
	dialAttempts = 3                // per connection
	dialDeadline = 60 * time.Second // for all connections
	closeWait    = 30 * time.Second // longest wait for "close" after the window
)

// Load generator phases.
const (
	phaseWarmup = iota
	phaseMeasure
	phaseStop
)

// loadgen drives closed-loop connections: each sends a request, waits for
// the response, and repeats, so one request per connection is outstanding.
type loadgen struct {
	respSize  int
	max       int64
	phase     atomic.Int32
	hist      histogram
	responses atomic.Int64
	bytes     atomic.Int64
	errs      atomic.Int64
	firstErr  atomic.Pointer[string]
}

// loadgenMain is the load generator child. It only connects to 127.0.0.1.
func loadgenMain(cfg config, in io.Reader, out io.Writer) error {
	if host, _, err := stdnet.SplitHostPort(cfg.addr); err != nil || host != "127.0.0.1" {
		return fmt.Errorf("-addr %q: the load generator only targets 127.0.0.1", cfg.addr)
	}
	if len(cfg.conns) != 1 {
		return errors.New("-conns: the load generator takes one count")
	}
	if _, err := raiseNofile(); err != nil {
		return err
	}
	t0 := time.Now()
	conns, dialErr := dialAll(cfg.addr, cfg.conns[0])
	rep := loadReport{Connected: len(conns), DialSeconds: time.Since(t0).Seconds()}
	if dialErr != nil {
		rep.DialError = dialErr.Error()
	}
	fmt.Fprintln(out, lineConnected, len(conns))
	lg := &loadgen{respSize: responseSize(cfg.workload), max: cfg.maxRequests}
	lg.run(conns, cfg, in, out, &rep)
	line, err := encodeLine(rep)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, line)
	return nil
}

// dialAll opens n connections, dialParallel at a time, and returns those
// that succeeded with the first error.
func dialAll(addr string, n int) ([]stdnet.Conn, error) {
	var (
		mu       sync.Mutex
		conns    []stdnet.Conn
		firstErr error
		wg       sync.WaitGroup
	)
	deadline := time.Now().Add(dialDeadline)
	sem := make(chan struct{}, dialParallel)
	for range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			c, err := dialRetry(addr, deadline)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if err == nil {
				conns = append(conns, c)
			}
		}()
	}
	wg.Wait()
	return conns, firstErr
}

func dialRetry(addr string, deadline time.Time) (stdnet.Conn, error) {
	var err error
	for range dialAttempts {
		var c stdnet.Conn
		d := stdnet.Dialer{Deadline: deadline}
		if c, err = d.Dial("tcp", addr); err == nil {
			return c, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, err
}

// run warms up, measures one window, then closes the connections.
func (lg *loadgen) run(conns []stdnet.Conn, cfg config, in io.Reader, out io.Writer, rep *loadReport) {
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lg.connLoop(i, c)
		}()
	}
	time.Sleep(cfg.warmup)
	u0, s0 := cpuTime()
	start := time.Now()
	lg.phase.Store(phaseMeasure)
	fmt.Fprintln(out, lineStart)
	for time.Since(start) < cfg.duration && lg.responses.Load() < lg.max {
		time.Sleep(min(10*time.Millisecond, cfg.duration))
	}
	lg.phase.Store(phaseStop)
	window := time.Since(start)
	u1, s1 := cpuTime()
	fmt.Fprintln(out, lineStop)
	waitForClose(in) // the server reports with every connection still open
	for _, c := range conns {
		if tc, ok := c.(*stdnet.TCPConn); ok {
			tc.SetLinger(0) // no TIME_WAIT pile-up across runs
		}
		c.Close()
	}
	wg.Wait()
	lg.fill(rep, window, u1-u0, s1-s0)
}

// fill copies the window's measurements into rep.
func (lg *loadgen) fill(rep *loadReport, window, user, sys time.Duration) {
	counts := lg.hist.counts()
	rep.WindowSeconds = window.Seconds()
	rep.Responses = lg.responses.Load()
	rep.ResponseBytes = lg.bytes.Load()
	rep.Errors = lg.errs.Load()
	if p := lg.firstErr.Load(); p != nil {
		rep.FirstError = *p
	}
	rep.P50us = micros(quantile(counts, 0.50))
	rep.P99us = micros(quantile(counts, 0.99))
	rep.P999us = micros(quantile(counts, 0.999))
	rep.UserCPUSeconds, rep.SysCPUSeconds = user.Seconds(), sys.Seconds()
}

// connLoop is one connection's closed loop.
func (lg *loadgen) connLoop(i int, c stdnet.Conn) {
	req := requestFrame(int32(i))
	var hdr [8]byte
	small := make([]byte, smallResp)
	for lg.phase.Load() != phaseStop {
		t0 := time.Now()
		err := lg.roundTrip(c, req, hdr[:], small)
		if lg.phase.Load() == phaseStop {
			return // errors from closing are not the server's
		}
		if err != nil {
			lg.fail(err)
			return
		}
		if lg.phase.Load() == phaseMeasure {
			lg.hist.record(i, time.Since(t0))
			lg.responses.Add(1)
			lg.bytes.Add(int64(lg.respSize))
		}
	}
}

// roundTrip writes the request and reads the whole response.
func (lg *loadgen) roundTrip(c stdnet.Conn, req, hdr, small []byte) error {
	if _, err := c.Write(req); err != nil {
		return err
	}
	if _, err := io.ReadFull(c, hdr); err != nil {
		return err
	}
	if size := binary.BigEndian.Uint32(hdr); size != uint32(4+lg.respSize) {
		return fmt.Errorf("response size %d, want %d", size, 4+lg.respSize)
	}
	if lg.respSize == smallResp {
		_, err := io.ReadFull(c, small)
		return err
	}
	_, err := io.CopyN(io.Discard, c, int64(lg.respSize))
	return err
}

// waitForClose waits for the orchestrator's "close" line, or at most
// closeWait, or for stdin to end.
func waitForClose(in io.Reader) {
	got := make(chan struct{})
	go func() {
		bufio.NewScanner(in).Scan()
		close(got)
	}()
	select {
	case <-got:
	case <-time.After(closeWait):
	}
}

func (lg *loadgen) fail(err error) {
	lg.errs.Add(1)
	s := err.Error()
	lg.firstErr.CompareAndSwap(nil, &s)
}

// requestFrame is a Produce v3 request (header v1) with a 100-byte body.
func requestFrame(corr int32) []byte {
	b := vnet.AppendRequestHeader(make([]byte, 4), vnet.RequestHeader{Key: 0, Version: 3, CorrelationID: corr, ClientID: "loadgen"})
	b = append(b, make([]byte, requestBody)...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}
