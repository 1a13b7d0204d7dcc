package main

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

// varveBinary builds cmd/varve unless a binary is given.
func varveBinary(given string) (string, func(), error) {
	if given != "" {
		return given, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "brokerbench-bin-")
	if err != nil {
		return "", nil, err
	}
	bin := filepath.Join(dir, "varve")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/varve")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build ./cmd/varve (run from the repository root): %w", err)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// server is a varve server child process on loopback.
type server struct {
	cmd     *exec.Cmd
	dir     string
	addr    string
	metrics string
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startServer runs `varve server` with its data in a fresh temp dir and
// the given overrides, and waits until it answers on both ports.
func startServer(bin string, overrides ...string) (*server, error) {
	dir, err := os.MkdirTemp("", "brokerbench-data-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	mport, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir, addr: fmt.Sprintf("127.0.0.1:%d", port), metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)}
	args := []string{"server", "--log-level", "warn",
		"--override", "log.dirs=" + filepath.Join(dir, "data"),
		"--override", "listeners=PLAINTEXT://" + s.addr,
		"--override", fmt.Sprintf("varve.metrics.listener=127.0.0.1:%d", mport)}
	for _, o := range overrides {
		args = append(args, "--override", o)
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stderr = os.Stderr
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			c.Close()
			if resp, err := http.Get(s.metrics); err == nil {
				resp.Body.Close()
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("varve server did not start on %s", s.addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop shuts the server down with SIGTERM (a clean shutdown), then
// removes its data.
func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	select {
	case <-done:
	case <-ctx.Done():
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	os.RemoveAll(s.dir)
}
