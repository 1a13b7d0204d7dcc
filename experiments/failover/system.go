package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// node is one process of a three-node cluster, as a trial acts on it.
// localcluster's Node (Varve) and Process (Kafka's JVM) both are one.
type node interface {
	Start() error // start and wait until it accepts connections
	Stop() error  // SIGTERM (controlled shutdown) and wait for the exit
	Kill() error  // SIGKILL and wait for the exit
	Running() bool
}

// system is a started three-node cluster of one system.
type system struct {
	name     string
	settings string           // how it runs, for the summary
	nodes    map[int32]node   // by node.id
	addrs    map[int32]string // each node's broker listener, host:port
	logs     map[int32]string // each node's output file
}

// ids are the node ids, ascending.
func (s *system) ids() []int32 { return slices.Sorted(maps.Keys(s.nodes)) }

// bootstrap is every node's broker address.
func (s *system) bootstrap() []string {
	var out []string
	for _, id := range s.ids() {
		out = append(out, s.addrs[id])
	}
	return out
}

// others are the ids of every node but id.
func (s *system) others(id int32) []int32 {
	return slices.DeleteFunc(s.ids(), func(x int32) bool { return x == id })
}

// startAll starts every node at once (a quorum serves only once a
// majority runs, so no node can be waited for alone) and waits for all.
func (s *system) startAll() error {
	errs := make([]error, 0, len(s.nodes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range s.ids() {
		wg.Go(func() {
			err := s.nodes[id].Start()
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stopAll shuts every running node down cleanly, in parallel, killing
// those that do not exit in time.
func (s *system) stopAll() error {
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range s.ids() {
		if !s.nodes[id].Running() {
			continue
		}
		wg.Go(func() {
			err := s.nodes[id].Stop()
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// restart starts node id again after a fault, within timeout.
func (s *system) restart(ctx context.Context, id int32, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- s.nodes[id].Start() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("restart node %d: %w (see %s)", id, err, s.logs[id])
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("restart node %d: not serving after %v (see %s)", id, timeout, s.logs[id])
	case <-ctx.Done():
		return ctx.Err()
	}
}
