package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// varveSys is `varve server` built from this checkout.
type varveSys struct {
	kafkaProto
	dir     string
	proc    *proc
	version string
}

func (v *varveSys) name() string            { return sysVarve }
func (v *varveSys) dataDir() string         { return v.logDirs }
func (v *varveSys) pgid() int               { return pgidOf(v.proc) }
func (v *varveSys) tests(e *env) []testCase { return protoTests(&v.kafkaProto, e) }
func (v *varveSys) settings(e *env) string {
	return "varve server at commit " + v.version + ", Kafka's defaults (log.flush.interval.messages and " +
		".ms unset: no fsync on the produce path), 3 network and 8 I/O threads"
}

// start builds cmd/varve into the temp dir and runs `varve server` with
// its data in a fresh directory and its listeners on free loopback ports.
func (v *varveSys) start(ctx context.Context, e *env) error {
	v.dir = filepath.Join(e.tmp, "varve")
	v.logDirs = filepath.Join(v.dir, "data")
	if err := os.MkdirAll(v.logDirs, 0o755); err != nil {
		return fmt.Errorf("varve: %w", err)
	}
	bin := filepath.Join(v.dir, "varve")
	if out, err := harness.RunTool(ctx, 10*time.Minute, nil, "go", "build", "-o", bin, "github.com/varve/varve/cmd/varve"); err != nil {
		return fmt.Errorf("build varve: %w\n%s", err, harness.Tail(out, 2000))
	}
	v.version = gitCommit(ctx)
	port, err := freePort()
	if err != nil {
		return err
	}
	metrics, err := freePort()
	if err != nil {
		return err
	}
	v.addr = loopback(port)
	argv := []string{bin, "server", "--log-level", "warn",
		"--override", "log.dirs=" + v.logDirs,
		"--override", "listeners=PLAINTEXT://" + v.addr,
		"--override", "advertised.listeners=PLAINTEXT://" + v.addr,
		"--override", "varve.metrics.listener=" + loopback(metrics)}
	if v.proc, err = e.procs.start(procSpec{name: "varve", argv: argv, dir: v.dir, log: filepath.Join(v.dir, "varve.out")}); err != nil {
		return err
	}
	return waitReady(ctx, v.proc, time.Minute, metadataReady(v.addr))
}

// gitCommit is the checkout's short commit, with "+dirty" if it has
// uncommitted changes, or "unknown".
func gitCommit(ctx context.Context) string {
	out, err := harness.RunTool(ctx, 30*time.Second, nil, "git", "describe", "--always", "--dirty=+dirty")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
