package chaos

import (
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"

	"github.com/varve/varve/internal/localcluster"
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
// expect it after a kill. It implements Node over
// localcluster.Process. A Proc is driven from one goroutine at a time.
type Proc struct {
	Addr   string    // host:port of its Kafka listener
	Stderr io.Writer // where the server's log goes; nil discards it

	p localcluster.Process
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
	return &Proc{Addr: addr, p: localcluster.Process{Name: name, Bin: bin, Args: args}}, nil
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
func (p *Proc) Name() string { return p.p.Name }

// Start runs the server and returns once it accepts connections.
func (p *Proc) Start() error {
	p.p.Addr, p.p.Out = p.Addr, p.Stderr
	return p.p.Start()
}

// Kill sends SIGKILL and waits for the process to go.
func (p *Proc) Kill() error { return p.p.Kill() }

// Pause stops the process with SIGSTOP.
func (p *Proc) Pause() error { return p.p.Pause() }

// Resume continues a paused process with SIGCONT.
func (p *Proc) Resume() error { return p.p.Resume() }

// Stop shuts the server down with SIGTERM (resuming it first, in case
// it is paused), and kills it after localcluster.StopTimeout.
func (p *Proc) Stop() error { return p.p.Stop() }
