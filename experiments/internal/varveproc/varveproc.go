// Package varveproc runs `varve server` as a child process for the
// experiments that measure a whole broker: it builds the binary, starts a
// node on free loopback ports with its data in a fresh temporary
// directory, waits until it answers, and stops it.
package varveproc

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Binary builds cmd/varve (from the repository root) unless a binary is
// given; cleanup removes what it built.
func Binary(given string) (bin string, cleanup func(), err error) {
	if given != "" {
		return given, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "varve-bin-")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "varve")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/varve")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build ./cmd/varve (run from the repository root): %w", err)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// Server is a varve server child process on loopback.
type Server struct {
	Cmd     *exec.Cmd
	Dir     string // its temporary data directory, removed by Stop
	Addr    string // host:port of its Kafka listener
	Metrics string // URL of its Prometheus metrics
	exited  chan struct{}
}

// FreePort asks the kernel for an unused loopback port.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Options change how Start runs the server.
type Options struct {
	Overrides []string // --override key=value, Kafka property names
	Env       []string // added to the child's environment (e.g. GOMEMLIMIT=3GiB)
	LogLevel  string   // --log-level; default warn
}

// Start runs `varve server` with its data in a fresh temp dir and waits
// until it answers on its Kafka and metrics ports.
func Start(bin string, o Options) (*Server, error) {
	dir, err := os.MkdirTemp("", "varve-data-")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	mport, err := FreePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Addr: fmt.Sprintf("127.0.0.1:%d", port),
		Metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", mport), exited: make(chan struct{})}
	if o.LogLevel == "" {
		o.LogLevel = "warn"
	}
	args := []string{"server", "--log-level", o.LogLevel,
		"--override", "log.dirs=" + filepath.Join(dir, "data"),
		"--override", "listeners=PLAINTEXT://" + s.Addr,
		"--override", fmt.Sprintf("varve.metrics.listener=127.0.0.1:%d", mport)}
	for _, ov := range o.Overrides {
		args = append(args, "--override", ov)
	}
	s.Cmd = exec.Command(bin, args...)
	s.Cmd.Stderr = os.Stderr
	s.Cmd.Env = append(os.Environ(), o.Env...)
	s.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.Cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	go func() { s.Cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(30 * time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if !s.Alive() {
			return fmt.Errorf("varve server exited during start-up: %v", s.Cmd.ProcessState)
		}
		c, err := net.DialTimeout("tcp", s.Addr, time.Second)
		if err == nil {
			c.Close()
			if resp, err := http.Get(s.Metrics); err == nil {
				resp.Body.Close()
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("varve server did not start on %s", s.Addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.Cmd.Process.Pid }

// Alive says whether the process is still running.
func (s *Server) Alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Kill ends the server with SIGKILL at once.
func (s *Server) Kill() {
	syscall.Kill(-s.Cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
}

// Stop shuts the server down with SIGTERM (a clean shutdown), SIGKILL
// after a minute, then removes its data.
func (s *Server) Stop() {
	s.Cmd.Process.Signal(syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	select {
	case <-s.exited:
	case <-ctx.Done():
		s.Kill()
	}
	os.RemoveAll(s.Dir)
}
