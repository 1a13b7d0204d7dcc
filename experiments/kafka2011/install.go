package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// Debian packages and the programs the experiment runs from them.
const (
	natsServerBin = "nats-server"
	rabbitBin     = "/usr/lib/rabbitmq/bin/rabbitmq-server" // the real script, not Debian's su wrapper
	epmdBin       = "epmd"
)

// debianPackage says which package provides a missing program.
var debianPackage = map[string]string{
	natsServerBin: "nats-server",
	rabbitBin:     "rabbitmq-server",
}

// ensureInstalled installs, with apt-get, the Debian packages behind the
// programs that are missing. It needs root; without it, it says which
// package to install. Installing rabbitmq-server may start the system's
// own service on the standard ports; the experiment never uses it.
func ensureInstalled(ctx context.Context, install bool, progs ...string) error {
	var missing []string
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			missing = append(missing, debianPackage[p])
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if !install || os.Geteuid() != 0 {
		return fmt.Errorf("missing Debian packages %s: install them (apt-get install %s) or run as root",
			strings.Join(missing, ", "), strings.Join(missing, " "))
	}
	env := []string{"DEBIAN_FRONTEND=noninteractive"}
	if out, err := harness.RunTool(ctx, 10*time.Minute, env, "apt-get", "update"); err != nil {
		return fmt.Errorf("apt-get update: %w\n%s", err, harness.Tail(out, 2000))
	}
	args := append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, missing...)
	if out, err := harness.RunTool(ctx, 15*time.Minute, env, args...); err != nil {
		return fmt.Errorf("apt-get install %s: %w\n%s", strings.Join(missing, " "), err, harness.Tail(out, 2000))
	}
	return nil
}

// debianVersion is an installed package's version, or "unknown".
func debianVersion(ctx context.Context, pkg string) string {
	out, err := harness.RunTool(ctx, 30*time.Second, nil, "dpkg-query", "-W", "-f=${Version}", pkg)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
