package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/kafkadist"
	"github.com/varve/varve/experiments/internal/varveproc"
	"github.com/varve/varve/internal/localcluster"
)

// outcome is one step's record in the results.
type outcome struct {
	Tool     string
	Title    string
	Command  string
	Exit     int
	Output   string
	Expected string
	Seen     string
	OK       bool
	Took     time.Duration
}

// exp is one run: the cluster, the tools, and the outcomes so far.
type exp struct {
	cfg       config
	tools     *javaTools
	cluster   *localcluster.Cluster
	bootstrap string
	tmp       string
	outcomes  []outcome
}

func run(ctx context.Context, cfg config) (string, error) {
	s, err := harness.Start(cfg.out, cfg.quick)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "varve-kafkatools-")
	if err != nil {
		return "", err
	}
	if !cfg.keep {
		defer os.RemoveAll(tmp)
	}
	fmt.Fprintln(os.Stderr, "== assembling Apache Kafka", cfg.kafkaVersion, "with Maven (cached after the first run)")
	libs, err := kafkadist.Assemble(ctx, cfg.cacheDir, cfg.kafkaVersion)
	if err != nil {
		return "", err
	}
	bin, cleanup, err := varveproc.Binary(cfg.varveBin)
	if err != nil {
		return "", err
	}
	defer cleanup()
	e := &exp{cfg: cfg, tmp: tmp}
	if e.tools, err = newJavaTools(libs, tmp, cfg.toolTimeout, e.sanitize); err != nil {
		return "", err
	}
	err = e.startCluster(ctx, bin)
	defer func() {
		if e.cluster == nil {
			return
		}
		if err := e.cluster.Stop(); err != nil {
			e.cluster.Kill()
		}
	}()
	if err != nil {
		return "", err
	}
	e.steps(ctx)
	s.End()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	return s.Out, e.write(s)
}

// startCluster lays out, formats and starts three nodes, and waits
// until all three brokers are in the metadata.
func (e *exp) startCluster(ctx context.Context, bin string) error {
	c, err := localcluster.New(localcluster.Options{Nodes: 3, Dir: filepath.Join(e.tmp, "cluster"),
		SharedHost: e.cfg.sharedHost, Binary: bin, LogLevel: "info"})
	if err != nil {
		return err
	}
	e.cluster, e.bootstrap = c, c.BootstrapServers()
	if err := c.Write(); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "== starting three varve nodes:", e.bootstrap)
	if err := c.Start(); err != nil {
		return err
	}
	return e.waitFor(ctx, 60*time.Second, func(ctx context.Context, adm *kadm.Client) error {
		md, err := adm.BrokerMetadata(ctx)
		if err != nil {
			return err
		}
		if len(md.Brokers) != 3 {
			return fmt.Errorf("%d brokers in the metadata: %v", len(md.Brokers), md.Brokers.NodeIDs())
		}
		return nil
	})
}

// waitFor calls check with an admin client every 250 ms until it
// succeeds or timeout passes; each call is bounded to 5 s.
func (e *exp) waitFor(ctx context.Context, timeout time.Duration, check func(context.Context, *kadm.Client) error) error {
	deadline := time.Now().Add(timeout)
	for {
		// A new client each time: a failed attempt leaves nothing cached.
		cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(e.bootstrap, ",")...))
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = check(cctx, kadm.NewClient(cl))
		cancel()
		cl.Close()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.Join(fmt.Errorf("not after %s", timeout), err, ctx.Err())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// leaderOf is the leader of topic's partition p, from a metadata
// request.
func (e *exp) leaderOf(ctx context.Context, topic string, p int32) (int32, error) {
	var leader int32 = -1
	err := e.waitFor(ctx, 30*time.Second, func(ctx context.Context, adm *kadm.Client) error {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return err
		}
		pd, ok := td[topic].Partitions[p]
		if !ok || pd.Leader < 0 {
			return fmt.Errorf("%s-%d has no leader", topic, p)
		}
		leader = pd.Leader
		return nil
	})
	return leader, err
}

// step runs one tool against the cluster and records its outcome: check
// says what was seen in the output and whether it is what Kafka's tool
// prints against Kafka.
func (e *exp) step(ctx context.Context, title, expected string, check func(out string, exit int) (string, bool), tool string, args ...string) (string, bool) {
	args = append([]string{"--bootstrap-server", e.bootstrap}, args...)
	fmt.Fprintf(os.Stderr, "== %s: %s\n", tool, title)
	start := time.Now()
	out, exit, err := e.tools.run(ctx, tool, args...)
	o := outcome{Tool: tool, Title: title, Command: e.tools.commandLine(tool, args...), Exit: exit,
		Output: e.sanitize(out), Expected: expected, Took: time.Since(start)}
	if exit == -1 {
		o.Seen = "the tool did not finish: " + e.sanitize(err.Error())
	} else {
		o.Seen, o.OK = check(out, exit)
	}
	e.record(o)
	return out, o.OK
}

func (e *exp) record(o outcome) {
	verdict := "PASS"
	if !o.OK {
		verdict = "FAIL"
	}
	fmt.Fprintf(os.Stderr, "   %s (exit %d, %s): %s\n", verdict, o.Exit, o.Took.Round(time.Millisecond), o.Seen)
	e.outcomes = append(e.outcomes, o)
}

// sanitize replaces this machine's temporary and cache paths.
func (e *exp) sanitize(s string) string {
	s = strings.ReplaceAll(s, e.tmp, "$TMPDIR")
	return strings.ReplaceAll(s, e.cfg.cacheDir, "$CACHE")
}

// exitedZero wraps a check that applies only to a successful run.
func exitedZero(check func(out string) (string, bool)) func(string, int) (string, bool) {
	return func(out string, exit int) (string, bool) {
		if exit != 0 {
			return fmt.Sprintf("exit status %d: %s", exit, lastLine(out)), false
		}
		return check(out)
	}
}

// lastLine is the last line of out that is not empty, for short reports.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "at ") {
			return l
		}
	}
	return ""
}
