package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/varve/varve/benchmarks/kafkabench"
	"github.com/varve/varve/internal/localcluster"
)

// profileRun takes a CPU profile of the leader and a follower over cfg.profile seconds while producers keep a replicated
// topic busy, and writes each profile and its top functions (go tool
// pprof -top) to the results folder.
func (e *experiment) profileRun(ctx context.Context, bin string) error {
	const topic = "profile"
	leader, followers, err := e.tb.createTopic(ctx, topic, 3, nil)
	if err != nil {
		return err
	}
	pctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for pctx.Err() == nil {
			kafkabench.Produce(pctx, kafkabench.ProduceConfig{Brokers: e.tb.brokers(), Topic: topic, Records: e.cfg.records / 4,
				RecordSize: 1024, Producers: e.cfg.producers, Producer: kafkabench.ProducerConfig{Acks: "all", Compression: "none"}})
		}
	})
	errs := make([]error, 2)
	var pw sync.WaitGroup
	for i, role := range []string{"leader", "follower"} {
		n := e.tb.c.Node(int([]int32{leader, followers[0]}[i]))
		pw.Go(func() { errs[i] = e.profileNode(ctx, bin, n, role) })
	}
	pw.Wait()
	stop()
	wg.Wait()
	if errs[0] != nil {
		return errs[0]
	}
	return errs[1]
}

func (e *experiment) profileNode(ctx context.Context, bin string, n *localcluster.Node, role string) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", net.JoinHostPort(n.Host, strconv.Itoa(n.MetricsPort)), e.cfg.profile)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", n.Name(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", n.Name(), resp.Status)
	}
	path := filepath.Join(e.s.Out, "cpu_"+role+".pprof")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=30", bin, path).Output()
	if err != nil {
		return fmt.Errorf("go tool pprof %s: %w", path, err)
	}
	cum, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-cum", "-nodecount=40", bin, path).Output()
	if err != nil {
		return fmt.Errorf("go tool pprof -cum %s: %w", path, err)
	}
	return os.WriteFile(filepath.Join(e.s.Out, "cpu_"+role+".txt"), append(append(top, "\n--- by cumulative time ---\n"...), cum...), 0o644)
}
