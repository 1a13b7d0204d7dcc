package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/varve/varve/experiments/internal/varveproc"
	"github.com/varve/varve/internal/localcluster"
)

// startVarve runs three `varve server` nodes in combined mode on
// 127.0.0.1-3 (internal/localcluster) with the test profile, and waits
// until all three brokers are registered and unfenced.
func startVarve(ctx context.Context, cfg config, dir string) (*system, func(), error) {
	bin, cleanup, err := varveproc.Binary(cfg.varveBin)
	if err != nil {
		return nil, nil, err
	}
	c, err := localcluster.New(localcluster.Options{Nodes: 3, Dir: filepath.Join(dir, sysVarve),
		Props: cfg.profile.props(), Binary: bin, LogLevel: "info"})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	s := &system{name: sysVarve, nodes: map[int32]node{}, addrs: map[int32]string{}, logs: map[int32]string{},
		settings: "`varve server` built from this tree, three combined nodes (process.roles=broker,controller) " +
			"on 127.0.0.1-3, written and formatted by internal/localcluster"}
	for _, n := range c.Nodes() {
		id := int32(n.ID)
		s.nodes[id], s.addrs[id], s.logs[id] = n, n.Addr(), n.LogFile()
	}
	if err := c.Write(); err != nil {
		cleanup()
		return nil, nil, err
	}
	stop := func() { c.Stop(); c.Kill(); cleanup() }
	if err := s.startAll(); err != nil {
		stop()
		return nil, nil, fmt.Errorf("varve: %w", err)
	}
	if err := waitBrokers(ctx, s, cfg.trialTimeout); err != nil {
		stop()
		return nil, nil, fmt.Errorf("varve: the three nodes did not form a cluster: %w", err)
	}
	return s, stop, nil
}
