package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a child gets after SIGTERM before its process
// group is killed.
const stopGrace = 30 * time.Second

// proc is one child process the experiment started, leading its own
// process group so that a signal reaches everything it forked.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string // file holding the child's stdout and stderr
	done chan struct{}
	err  error // set before done is closed
}

// procSpec describes a child to start.
type procSpec struct {
	name string
	argv []string
	env  []string // added to this process's environment
	dir  string
	log  string
}

// startProc starts spec in a new process group; its output goes to spec.log.
func startProc(spec procSpec) (*proc, error) {
	out, err := os.Create(spec.log)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.name, err)
	}
	cmd := exec.Command(spec.argv[0], spec.argv[1:]...)
	cmd.Env = append(os.Environ(), spec.env...)
	cmd.Dir = spec.dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("start %s (%s): %w", spec.name, spec.argv[0], err)
	}
	p := &proc{name: spec.name, cmd: cmd, log: spec.log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the child has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the child's group, waits up to grace, then sends
// SIGKILL to the group and waits for the child to be reaped.
func (p *proc) stop(grace time.Duration) error {
	pgid := p.cmd.Process.Pid
	if !p.exited() {
		syscall.Kill(-pgid, syscall.SIGTERM)
	}
	select {
	case <-p.done:
	case <-time.After(grace):
		syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("stop %s (pid %d): still running after SIGKILL", p.name, pgid)
		}
		return fmt.Errorf("stop %s: killed after %s without exiting on SIGTERM", p.name, grace)
	}
	syscall.Kill(-pgid, syscall.SIGKILL) // stragglers the leader left behind
	return nil
}

// procSet is every child the experiment started, stopped in reverse order.
type procSet struct {
	mu    sync.Mutex
	procs []*proc
}

func (s *procSet) add(p *proc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.procs = append(s.procs, p)
}

// stopAll stops every child still running, the newest first.
func (s *procSet) stopAll() error {
	s.mu.Lock()
	procs := s.procs
	s.procs = nil
	s.mu.Unlock()
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		errs = append(errs, procs[i].stop(stopGrace))
	}
	return errors.Join(errs...)
}

// start starts spec and records it in s.
func (s *procSet) start(spec procSpec) (*proc, error) {
	p, err := startProc(spec)
	if err != nil {
		return nil, err
	}
	s.add(p)
	return p, nil
}

// freePort asks the kernel for a free loopback TCP port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// loopback returns "127.0.0.1:port".
func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// waitReady calls ready every 250 ms until it succeeds, the child exits,
// ctx ends or timeout passes.
func waitReady(ctx context.Context, p *proc, timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if p.exited() {
			return fmt.Errorf("%s exited before it was ready (%v); see %s", p.name, p.err, p.log)
		}
		tctx, tcancel := context.WithTimeout(ctx, 5*time.Second)
		last = ready(tctx)
		tcancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %w (last: %v); see %s", p.name, timeout, ctx.Err(), last, p.log)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// dialReady is a readiness check that a TCP connection to addr succeeds.
func dialReady(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
}
