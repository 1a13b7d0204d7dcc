package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// WorkloadConfig shapes the clients of a run.
type WorkloadConfig struct {
	Brokers    []string
	Topic      string // must exist, with Partitions partitions
	Partitions int32
	Producers  int // idempotent, acks=all, one append at a time each
	// GroupConsumers share one consumer group (Group); AssignedConsumers
	// each read every partition from its start.
	GroupConsumers, AssignedConsumers int
	Group                             string
	// AppendTimeout is how long an append may take before it is given up
	// (its outcome is then Unknown).
	AppendTimeout time.Duration
	// Interval is the pause between one producer's appends.
	Interval time.Duration
	// ClientOpts are added to every client (e.g. a logger).
	ClientOpts []kgo.Opt
}

// Workload is the running clients of one run. Each producer and
// consumer is one goroutine recording into the History.
type Workload struct {
	cfg    WorkloadConfig
	h      *History
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartWorkload starts the producers and consumers.
func StartWorkload(h *History, cfg WorkloadConfig) (*Workload, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Workload{cfg: cfg, h: h, cancel: cancel}
	for i := range cfg.Producers {
		cl, err := w.client(kgo.DefaultProduceTopic(cfg.Topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerLinger(0), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(cfg.AppendTimeout))
		if err != nil {
			w.Stop()
			return nil, err
		}
		w.spawn(cl, func() { w.produce(ctx, cl, fmt.Sprintf("producer%d", i), int32(i)) })
	}
	for i := range cfg.AssignedConsumers {
		if err := w.startAssigned(ctx, fmt.Sprintf("assigned%d", i)); err != nil {
			w.Stop()
			return nil, err
		}
	}
	for i := range cfg.GroupConsumers {
		if err := w.startGroupMember(ctx, fmt.Sprintf("group%d", i)); err != nil {
			w.Stop()
			return nil, err
		}
	}
	return w, nil
}

func (w *Workload) client(opts ...kgo.Opt) (*kgo.Client, error) {
	// A short metadata age and backoff, so that windows of unavailability
	// measure the brokers rather than the client's default 5s metadata
	// refresh floor.
	opts = append([]kgo.Opt{kgo.SeedBrokers(w.cfg.Brokers...), kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })}, opts...)
	cl, err := kgo.NewClient(append(opts, w.cfg.ClientOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	return cl, nil
}

func (w *Workload) spawn(cl *kgo.Client, run func()) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer cl.Close()
		run()
	}()
}

// produce appends unique values round-robin over the partitions, one at
// a time, until ctx ends.
func (w *Workload) produce(ctx context.Context, cl *kgo.Client, name string, first int32) {
	for n := 0; ctx.Err() == nil; n++ {
		p := (first + int32(n)) % w.cfg.Partitions
		v := fmt.Sprintf("%s-%d", name, n)
		id := w.h.Invoke(name, p, v)
		r, err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(v)}).First()
		var off int64
		if err == nil {
			off = r.Offset
		}
		w.h.Complete(id, off, err)
		if w.cfg.Interval > 0 {
			time.Sleep(w.cfg.Interval)
		}
	}
}

// startAssigned starts a consumer that reads every partition from its
// start.
func (w *Workload) startAssigned(ctx context.Context, name string) error {
	parts := map[int32]kgo.Offset{}
	var all []int32
	for p := range w.cfg.Partitions {
		parts[p], all = kgo.NewOffset().AtStart(), append(all, p)
	}
	w.h.AddPoll(Poll{Consumer: name, Assigned: all, FromStart: true, Complete: w.h.Now()})
	cl, err := w.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{w.cfg.Topic: parts}))
	if err != nil {
		return err
	}
	w.spawn(cl, func() { w.consume(ctx, cl, name) })
	return nil
}

// startGroupMember starts a member of the workload's consumer group.
// Rebalances happen only between its polls, and each assignment is
// recorded before the polls that read from it.
func (w *Workload) startGroupMember(ctx context.Context, name string) error {
	assigned := func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
		if ps := m[w.cfg.Topic]; len(ps) > 0 {
			w.h.AddPoll(Poll{Consumer: name, Assigned: ps, Complete: w.h.Now()})
		}
	}
	cl, err := w.client(kgo.ConsumerGroup(w.cfg.Group), kgo.ConsumeTopics(w.cfg.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(assigned), kgo.SessionTimeout(6*time.Second))
	if err != nil {
		return err
	}
	w.spawn(cl, func() { w.consume(ctx, cl, name) })
	return nil
}

// consume records each poll with what it returned until ctx ends.
func (w *Workload) consume(ctx context.Context, cl *kgo.Client, name string) {
	for ctx.Err() == nil {
		p := Poll{Consumer: name, Invoke: w.h.Now()}
		fs := cl.PollRecords(ctx, 500)
		p.Complete = w.h.Now()
		fs.EachRecord(func(r *kgo.Record) {
			p.Records = append(p.Records, Rec{r.Partition, r.Offset, string(r.Value)})
		})
		var errs []error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.Canceled) {
				errs = append(errs, err)
			}
		})
		if err := errors.Join(errs...); err != nil {
			p.Err = err.Error()
		}
		if len(p.Records) > 0 || p.Err != "" {
			w.h.AddPoll(p)
		}
		cl.AllowRebalance()
	}
}

// Stop ends every client and waits for their goroutines.
func (w *Workload) Stop() {
	w.cancel()
	w.wg.Wait()
}
