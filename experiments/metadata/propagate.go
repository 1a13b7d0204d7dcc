package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// propagateCase is one cluster size at which changes are probed; skip,
// when set, says why the machine cannot hold it.
type propagateCase struct {
	size int
	skip string
}

func (c propagateCase) String() string { return fmt.Sprintf("propagation at %d partitions", c.size) }

// probeResult is one probe seen by one broker.
type probeResult struct {
	size       int
	kind       string // "create" or "config"
	probe      int
	node       int32
	controller bool          // the node runs the active controller
	answer     time.Duration // the controller's round trip
	fromAnswer time.Duration // controller's answer received -> the broker's first answer showing the change
	fromSend   time.Duration // request sent -> the same
}

// probeTimeout bounds one probe, from sending the change to the last
// broker showing it.
const probeTimeout = 60 * time.Second

// runPropagate fills a fresh cluster with size partitions and probes it
// with topic creations and configuration changes, alternately.
func (e *experiment) runPropagate(ctx context.Context, c propagateCase) ([]probeResult, error) {
	tb, err := startTestbed(ctx, e.cfg.dir, e.bin)
	if err != nil {
		return nil, err
	}
	defer tb.close()
	base, err := fill(ctx, tb, c.size)
	if err != nil {
		return nil, fmt.Errorf("fill to %d partitions: %w", c.size, err)
	}
	ctrl, err := tb.activeController(ctx)
	if err != nil {
		return nil, err
	}
	tb.preferController(ctrl)
	var out []probeResult
	for i := range e.cfg.probes {
		for _, kind := range []string{"create", "config"} {
			rs, err := probe(ctx, tb, kind, base, c.size, i)
			if err != nil {
				return out, fmt.Errorf("%s probe %d: %w", kind, i, err)
			}
			for j := range rs {
				rs[j].controller = rs[j].node == ctrl
			}
			out = append(out, rs...)
		}
	}
	return out, nil
}

// fill creates topics of replication factor 3 holding size partitions
// in all: one topic when size is at most 100, else topics of 100
// partitions, ten to a CreateTopics. It returns the first topic's name.
func fill(ctx context.Context, tb *testbed, size int) (string, error) {
	if size <= 100 {
		return "base-0000", tb.createTopics(ctx, int32(size), "base-0000")
	}
	topics := size / 100
	for i := 0; i < topics; i += 10 {
		var names []string
		for j := i; j < min(i+10, topics); j++ {
			names = append(names, fmt.Sprintf("base-%04d", j))
		}
		if err := tb.createTopics(ctx, 100, names...); err != nil {
			return "", err
		}
	}
	return "base-0000", nil
}

// probe makes one change at the active controller while every broker
// is polled for it, and returns what each broker took to show it. A
// created probe topic is deleted afterwards, so the cluster keeps its
// size.
func probe(ctx context.Context, tb *testbed, kind, base string, size, i int) ([]probeResult, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	topic := fmt.Sprintf("probe-%d-%d", size, i)
	retention := strconv.Itoa(86_400_000 + i)
	shows := func(node int) (bool, error) { return tb.showsTopic(ctx, node, topic) }
	req := kmsg.Request(createRequest(topic))
	if kind == "config" {
		shows = func(node int) (bool, error) { return tb.showsRetention(ctx, node, base, retention) }
		req = alterRequest(base, retention)
	}
	seen, ready, wait := pollAll(ctx, len(tb.polls), shows)
	<-ready
	sent := time.Now()
	resp, err := tb.ctrl.Do(ctx, req)
	answered := time.Now()
	if err == nil {
		err = changeError(resp)
	}
	if err != nil {
		cancel()
		wait()
		return nil, err
	}
	if err := wait(); err != nil {
		return nil, err
	}
	out := make([]probeResult, len(seen))
	for n, at := range seen {
		out[n] = probeResult{size: size, kind: kind, probe: i, node: int32(n + 1), answer: answered.Sub(sent),
			fromAnswer: at.Sub(answered), fromSend: at.Sub(sent)}
	}
	if kind == "create" {
		_, err = tb.adm.DeleteTopics(ctx, topic)
	}
	return out, err
}

// pollAll runs one poller per node until each has seen the change:
// seen[n] is when node n+1 first answered showing it. ready closes once
// every poller has had one answer (which must not show it yet); wait
// waits for all and returns the first error.
func pollAll(ctx context.Context, nodes int, shows func(node int) (bool, error)) (seen []time.Time, ready <-chan struct{}, wait func() error) {
	seen = make([]time.Time, nodes)
	errs := make([]error, nodes)
	var first, all sync.WaitGroup
	first.Add(nodes)
	for n := range nodes {
		all.Go(func() { seen[n], errs[n] = pollOne(ctx, n, shows, first.Done) })
	}
	r := make(chan struct{})
	go func() { first.Wait(); close(r) }()
	return seen, r, func() error {
		all.Wait()
		for n, err := range errs {
			if err != nil {
				return fmt.Errorf("node %d: %w", n+1, err)
			}
		}
		return nil
	}
}

// pollOne asks node n, back to back, until it shows the change.
func pollOne(ctx context.Context, n int, shows func(int) (bool, error), firstDone func()) (time.Time, error) {
	ok, err := shows(n)
	firstDone()
	switch {
	case err != nil:
		return time.Time{}, err
	case ok:
		return time.Time{}, fmt.Errorf("the change showed before it was sent")
	}
	for {
		ok, err := shows(n)
		at := time.Now()
		if err != nil || ok {
			return at, err
		}
	}
}

// showsTopic: node n's Metadata has topic with a leader for its
// partition.
func (tb *testbed) showsTopic(ctx context.Context, n int, topic string) (bool, error) {
	resp, err := tb.metadata(ctx, n, []string{topic})
	if err != nil {
		return false, err
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		return false, nil
	}
	ps := resp.Topics[0].Partitions
	return len(ps) == 1 && ps[0].ErrorCode == 0 && ps[0].Leader >= 0, nil
}

// showsRetention: node n's DescribeConfigs gives topic's retention.ms
// as want.
func (tb *testbed) showsRetention(ctx context.Context, n int, topic, want string) (bool, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = kmsg.ConfigResourceTypeTopic, topic, []string{"retention.ms"}
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, tb.polls[n].SeedBrokers()[0])
	if err != nil {
		return false, err
	}
	for _, res := range resp.Resources {
		if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
			return false, err
		}
		for _, c := range res.Configs {
			if c.Name == "retention.ms" && c.Value != nil && *c.Value == want {
				return true, nil
			}
		}
	}
	return false, nil
}

func createRequest(topic string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = int32(probeTimeout / time.Millisecond)
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, 1, 3
	req.Topics = append(req.Topics, t)
	return req
}

func alterRequest(topic, retention string) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(retention)
	r.Configs = append(r.Configs, c)
	req.Resources = append(req.Resources, r)
	return req
}

// changeError is the controller's verdict on a probe's change.
func changeError(resp kmsg.Response) error {
	switch r := resp.(type) {
	case *kmsg.CreateTopicsResponse:
		for _, t := range r.Topics {
			if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
				return fmt.Errorf("CreateTopics %s: %w", t.Topic, err)
			}
		}
	case *kmsg.IncrementalAlterConfigsResponse:
		for _, res := range r.Resources {
			if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
				return fmt.Errorf("IncrementalAlterConfigs %s: %w", res.ResourceName, err)
			}
		}
	}
	return nil
}
