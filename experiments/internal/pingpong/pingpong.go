// Package pingpong measures bare TCP round trips on loopback: the ceiling
// for one request at a time on this machine, with no Kafka code in the
// way. Experiments report their request rates and latencies beside it.
//
// A round trip sends size bytes and reads them back. The echo server runs
// in this process (as a benchmark and an in-process fake broker share
// one) or in a child process: the experiment's own binary, which must
// call MaybeServe first thing in main, as a broker is a separate process
// from its clients.
package pingpong

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// childFlag is the argument that makes an experiment's binary the echo
// server child.
const childFlag = "-pingpong-echo-server"

// MaybeServe runs the echo server and exits if this process was started
// as the child of a Child measurement; otherwise it returns at once.
// Experiments call it before parsing their flags.
func MaybeServe() {
	if len(os.Args) != 3 || os.Args[1] != childFlag {
		return
	}
	size, err := strconv.Atoi(os.Args[2])
	if err != nil || size < 1 {
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(2)
	}
	fmt.Println(ln.Addr().String())
	echo(ln, size)
	os.Exit(0)
}

// Result is one measurement: the round trips made and how long each took.
type Result struct {
	Trips   []time.Duration
	Elapsed time.Duration
}

// PerSecond is the rate of round trips over the measurement.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(len(r.Trips)) / r.Elapsed.Seconds()
}

// Median is the median round trip, 0 if none was made.
func (r Result) Median() time.Duration {
	if len(r.Trips) == 0 {
		return 0
	}
	s := slices.Clone(r.Trips)
	slices.Sort(s)
	return s[len(s)/2]
}

// InProcess measures round trips of size-byte messages for d between two
// goroutines of this process.
func InProcess(ctx context.Context, size int, d time.Duration) (Result, error) {
	if size < 1 {
		return Result{}, fmt.Errorf("pingpong: message size %d", size)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Result{}, err
	}
	defer ln.Close()
	go echo(ln, size)
	return measure(ctx, ln.Addr().String(), size, d)
}

// Child measures round trips of size-byte messages for d against an echo
// server in a child process (this binary, which must call MaybeServe).
func Child(ctx context.Context, size int, d time.Duration) (Result, error) {
	if size < 1 {
		return Result{}, fmt.Errorf("pingpong: message size %d", size)
	}
	exe, err := os.Executable()
	if err != nil {
		return Result{}, err
	}
	cmd := exec.CommandContext(ctx, exe, childFlag, strconv.Itoa(size))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return Result{}, fmt.Errorf("pingpong: echo server child: %w", err)
	}
	return measure(ctx, strings.TrimSpace(addr), size, d)
}

// echo serves one connection: it reads size bytes and writes them back
// until the peer closes.
func echo(ln net.Listener, size int) {
	c, err := ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	buf := make([]byte, size)
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		if _, err := c.Write(buf); err != nil {
			return
		}
	}
}

func measure(ctx context.Context, addr string, size int, d time.Duration) (Result, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return Result{}, err
	}
	defer c.Close()
	buf := make([]byte, size)
	var r Result
	start := time.Now()
	for time.Since(start) < d && ctx.Err() == nil {
		t := time.Now()
		if _, err := c.Write(buf); err != nil {
			return Result{}, err
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return Result{}, err
		}
		r.Trips = append(r.Trips, time.Since(t))
	}
	r.Elapsed = time.Since(start)
	return r, nil
}
