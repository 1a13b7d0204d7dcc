package chaos

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// BuildVarve builds cmd/varve into dir and returns the binary's path.
// It must run inside the module (tests do).
func BuildVarve(dir string) (string, error) {
	bin := filepath.Join(dir, "varve")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/varve/varve/cmd/varve").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build cmd/varve: %w\n%s", err, out)
	}
	return bin, nil
}

// Proc is a `varve server` process with a fixed data directory and a
// fixed listener, so it comes back where clients and its own data
// expect it after a kill. It implements Node. A Proc is driven from one
// goroutine at a time.
type Proc struct {
	name, bin string
	args      []string
	Addr      string    // host:port of its Kafka listener
	Stderr    io.Writer // where the server's log goes; nil discards it

	cmd    *exec.Cmd
	exited chan struct{}
}

// NewVarveServer prepares a server with its data under dataDir,
// listening on a free loopback port, with Kafka properties given as
// key=value overrides. Start runs it.
func NewVarveServer(name, bin, dataDir string, overrides ...string) (*Proc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"server", "--log-level", "warn",
		"--override", "log.dirs=" + dataDir,
		"--override", "listeners=PLAINTEXT://" + addr,
		"--override", "varve.metrics.listener="}
	for _, o := range overrides {
		args = append(args, "--override", o)
	}
	return &Proc{name: name, bin: bin, args: args, Addr: addr}, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Name implements Node.
func (p *Proc) Name() string { return p.name }

// Start runs the server and returns once it accepts connections.
func (p *Proc) Start() error {
	if p.running() {
		return fmt.Errorf("%s: already running", p.name)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = p.Stderr, p.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: start: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	return p.waitServing(30 * time.Second)
}

func (p *Proc) waitServing(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if !p.running() {
			return fmt.Errorf("%s: exited during start-up: %v", p.name, p.cmd.ProcessState)
		}
		if c, err := net.DialTimeout("tcp", p.Addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not serving on %s after %v", p.name, p.Addr, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *Proc) running() bool {
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

// signal sends sig to the server's process group.
func (p *Proc) signal(sig syscall.Signal) error {
	if !p.running() {
		return fmt.Errorf("%s: not running", p.name)
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("%s: %v: %w", p.name, sig, err)
	}
	return nil
}

// Kill sends SIGKILL and waits for the process to go.
func (p *Proc) Kill() error {
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.exited
	return nil
}

// Pause stops the process with SIGSTOP.
func (p *Proc) Pause() error { return p.signal(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (p *Proc) Resume() error { return p.signal(syscall.SIGCONT) }

// Stop shuts the server down with SIGTERM (resuming it first, in case
// it is paused), and kills it after 30s.
func (p *Proc) Stop() error {
	if !p.running() {
		return nil
	}
	err := errors.Join(p.signal(syscall.SIGCONT), p.signal(syscall.SIGTERM))
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		return errors.Join(err, fmt.Errorf("%s: no exit 30s after SIGTERM", p.name), p.Kill())
	}
	return err
}
