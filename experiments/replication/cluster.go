package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/experiments/internal/varveproc"
	"github.com/varve/varve/internal/localcluster"
)

// testbed is the three-node cluster every case runs on, with an admin
// client.
type testbed struct {
	c     *localcluster.Cluster
	admin *kgo.Client
}

// startCluster runs three combined-mode nodes, each on its own loopback
// address with a metrics listener (and /debug/pprof).
func startCluster(bin, dir string) (*testbed, error) {
	mport, err := varveproc.FreePort()
	if err != nil {
		return nil, err
	}
	c, err := localcluster.Up(localcluster.Options{Dir: dir, Binary: bin, MetricsPort: mport, LogLevel: "warn"})
	if err != nil {
		return nil, fmt.Errorf("cluster up: %w", err)
	}
	admin, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.BootstrapServers(), ",")...))
	if err != nil {
		c.Kill()
		return nil, err
	}
	return &testbed{c: c, admin: admin}, nil
}

func (t *testbed) close() error {
	t.admin.Close()
	return t.c.Stop()
}

func (t *testbed) brokers() []string { return strings.Split(t.c.BootstrapServers(), ",") }

// createTopic creates topic with one partition of rf replicas, placed
// by the controller, and the given topic configs, then waits until every
// node sees its leader and a full ISR. It returns the partition's
// leader and its other replicas.
func (t *testbed) createTopic(ctx context.Context, topic string, rf int16, configs map[string]string) (leader int32, followers []int32, err error) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30_000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, rf
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, t.admin)
	if err != nil {
		return 0, nil, fmt.Errorf("create topic %s: %w", topic, err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		return 0, nil, fmt.Errorf("create topic %s: %w", topic, err)
	}
	if err := t.waitISR(ctx, topic, int(rf), 30*time.Second); err != nil {
		return 0, nil, err
	}
	ps, err := t.state(ctx, topic)
	if err != nil {
		return 0, nil, err
	}
	for _, id := range ps[0].isr {
		if id != ps[0].leader {
			followers = append(followers, id)
		}
	}
	return ps[0].leader, followers, nil
}

// partitionState is one partition as the metadata answers it.
type partitionState struct {
	leader int32
	isr    []int32
}

// state asks node 1 for topic's partitions.
func (t *testbed) state(ctx context.Context, topic string) ([]partitionState, error) {
	return t.stateAt(ctx, 1, topic)
}

// stateAt asks node for topic's partitions, as its metadata image has
// them.
func (t *testbed) stateAt(ctx context.Context, node int32, topic string) ([]partitionState, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, t.admin.Broker(int(node)))
	if err != nil {
		return nil, err
	}
	if len(resp.Topics) != 1 {
		return nil, fmt.Errorf("metadata of %s: %d topics", topic, len(resp.Topics))
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		return nil, err
	}
	out := make([]partitionState, len(resp.Topics[0].Partitions))
	for _, p := range resp.Topics[0].Partitions {
		if int(p.Partition) < len(out) {
			out[p.Partition] = partitionState{leader: p.Leader, isr: p.ISR}
		}
	}
	return out, nil
}

// waitISR waits until every node's metadata has every partition of
// topic with a leader and n replicas in its ISR.
func (t *testbed) waitISR(ctx context.Context, topic string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var ps []partitionState
		var err error
		ok := true
		for _, node := range t.c.Nodes() {
			ps, err = t.stateAt(ctx, int32(node.ID), topic)
			ok = ok && err == nil && len(ps) > 0 && all(ps, func(p partitionState) bool { return p.leader >= 0 && len(p.isr) == n })
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s: no leader and %d in-sync replicas after %v (last %v, %v)", topic, n, timeout, ps, err)
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// waitInISR waits until node is in the ISR of every partition of topic,
// polling every 10 ms, and returns when it saw it.
func (t *testbed) waitInISR(ctx context.Context, topic string, node int32, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		ps, err := t.state(ctx, topic)
		if err == nil && len(ps) > 0 && all(ps, func(p partitionState) bool { return slices.Contains(p.isr, node) }) {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("topic %s: node %d not in the ISR after %v (last %v, %v)", topic, node, timeout, ps, err)
		}
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return time.Time{}, err
		}
	}
}

func all[T any](xs []T, f func(T) bool) bool {
	for _, x := range xs {
		if !f(x) {
			return false
		}
	}
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// logBytes is the size of topic's .log segment files in node's log
// directory: what a follower has to copy to hold the same log.
func logBytes(n *localcluster.Node, topic string) (int64, error) {
	var total int64
	dirs, err := filepath.Glob(filepath.Join(n.LogDir(), topic+"-*"))
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(path, ".log") {
				return err
			}
			info, err := e.Info()
			if err == nil {
				total += info.Size()
			}
			return err
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
	}
	return total, nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go runs on.
const clockTicks = 100

// cpuSeconds is the user plus system CPU time of process pid so far.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line; the command name, in parentheses, may hold
// spaces, so fields are counted after its closing parenthesis.
func parseStatCPU(line string) (float64, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no command name")
	}
	f := strings.Fields(line[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields", len(f)+2)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc stat: %w", err)
	}
	return float64(utime+stime) / clockTicks, nil
}

// cpuOf samples the CPU seconds of each node (by id).
func (t *testbed) cpuOf() map[int32]float64 {
	out := map[int32]float64{}
	for _, n := range t.c.Nodes() {
		if s, err := cpuSeconds(n.Pid()); err == nil {
			out[int32(n.ID)] = s
		}
	}
	return out
}
