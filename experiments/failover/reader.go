package main

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// read is one record a consumer received: when, and the partition
// leader epoch of the batch it came in (who appended it).
type read struct {
	at    time.Time
	epoch int32
}

// reader is one consumer assigned partition 0 of the topic from its end
// for the whole run of a system (no group: nothing to rebalance across
// the faults), recording when each record reached it. One goroutine
// polls; stop returns what it read.
type reader struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	reads []read
}

// startReader starts the consumer with the producer's client settings
// (metadata refresh and backoff after errors), fetches waiting at most
// 100 ms for data so that a record is handed over as it becomes
// readable.
func startReader(bootstrap []string, topic string, timeout time.Duration) (*reader, error) {
	opts := append(clientOpts(bootstrap, timeout), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtEnd()}}))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &reader{cl: cl, cancel: cancel, done: make(chan struct{})}
	go r.loop(ctx)
	return r, nil
}

func (r *reader) loop(ctx context.Context) {
	defer close(r.done)
	for ctx.Err() == nil {
		fs := r.cl.PollFetches(ctx)
		now := time.Now()
		r.mu.Lock()
		fs.EachRecord(func(rec *kgo.Record) { r.reads = append(r.reads, read{at: now, epoch: rec.LeaderEpoch}) })
		r.mu.Unlock()
	}
}

// stop ends the consumer and returns every record it read, in order.
func (r *reader) stop() []read {
	r.cancel()
	<-r.done
	r.cl.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

// firstNewLeaderReads fills each data trial's Read: the time from its
// fault to the first record the consumer received that a leader of a
// later epoch than the trial's old one appended, that is the first
// read past the fault. A trial with none keeps Read -1.
func firstNewLeaderReads(trials []trial, reads []read) {
	for i := range trials {
		t := &trials[i]
		if t.Scenario == scnController || t.Err != "" {
			continue
		}
		t.Read = -1
		for _, rd := range reads {
			if !rd.at.Before(t.Start) && rd.epoch > t.OldEpoch {
				t.Read = rd.at.Sub(t.Start)
				break
			}
		}
	}
}
