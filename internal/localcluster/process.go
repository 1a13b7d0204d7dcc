package localcluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"syscall"
	"time"
)

// StartTimeout bounds how long Start waits for a process to accept
// connections on its address.
const StartTimeout = 30 * time.Second

// StopTimeout bounds how long Stop waits after SIGTERM before it sends
// SIGKILL (Kafka's kafka-server-stop.sh only signals; a controlled
// shutdown that hangs must not hang a test).
const StopTimeout = 30 * time.Second

// Process is one server child process: started with a fixed command
// line, so it comes back with the same data and addresses after a
// kill, and signalled as a process group (so a wrapper script and its
// server go together). It is driven from one goroutine at a time.
type Process struct {
	Name string    // for errors: "node1"
	Bin  string    // the executable
	Args []string  // its arguments
	Addr string    // host:port it serves on; Start waits for it to accept
	Out  io.Writer // its stdout and stderr; nil discards them

	cmd    *exec.Cmd
	exited chan struct{}
}

// Start runs the process and returns once it accepts TCP connections
// on Addr. A process that exits during start-up is an error, with its
// exit status.
func (p *Process) Start() error {
	if err := p.launch(); err != nil {
		return err
	}
	return p.waitServing(StartTimeout)
}

// launch starts the process without waiting for it to serve.
func (p *Process) launch() error {
	if p.Running() {
		return fmt.Errorf("%s: already running (pid %d)", p.Name, p.Pid())
	}
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Stdout, cmd.Stderr = p.Out, p.Out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: start %s: %w", p.Name, p.Bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	return nil
}

func (p *Process) waitServing(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if !p.Running() {
			return fmt.Errorf("%s: exited during start-up: %v", p.Name, p.cmd.ProcessState)
		}
		if c, err := net.DialTimeout("tcp", p.Addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not serving on %s after %v", p.Name, p.Addr, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Running reports whether the process was started and has not exited.
func (p *Process) Running() bool {
	if p.exited == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Pid is the running process's id, or 0.
func (p *Process) Pid() int {
	if !p.Running() {
		return 0
	}
	return p.cmd.Process.Pid
}

// Exited is closed when the process started last has exited (nil
// before the first Start).
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Signal sends sig to the process's group.
func (p *Process) Signal(sig syscall.Signal) error {
	if !p.Running() {
		return fmt.Errorf("%s: not running", p.Name)
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("%s: %v: %w", p.Name, sig, err)
	}
	return nil
}

// Kill sends SIGKILL and returns once the process has gone.
func (p *Process) Kill() error {
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.exited
	return nil
}

// Pause stops the process with SIGSTOP: it keeps its sockets, and the
// kernel still completes TCP handshakes on its listeners, but it
// answers nothing until Resume.
func (p *Process) Pause() error { return p.Signal(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (p *Process) Resume() error { return p.Signal(syscall.SIGCONT) }

// Stop shuts the process down with SIGTERM (resuming it first, in case
// it is paused) and waits for it to exit; after StopTimeout it kills
// it and reports that. A non-zero exit status is an error (the
// shutdown failed). Stopping a process that is not running does
// nothing.
func (p *Process) Stop() error {
	if !p.Running() {
		return nil
	}
	err := errors.Join(p.Signal(syscall.SIGCONT), p.Signal(syscall.SIGTERM))
	select {
	case <-p.exited:
	case <-time.After(StopTimeout):
		return errors.Join(err, fmt.Errorf("%s: no exit %v after SIGTERM", p.Name, StopTimeout), p.Kill())
	}
	if st := p.cmd.ProcessState; !st.Success() {
		err = errors.Join(err, fmt.Errorf("%s: shut down with %v", p.Name, st))
	}
	return err
}

// Restart stops the process cleanly and starts it again.
func (p *Process) Restart() error {
	if err := p.Stop(); err != nil {
		return err
	}
	return p.Start()
}
