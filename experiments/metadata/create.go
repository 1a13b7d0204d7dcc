package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// createCase is one topic-creation case: partitions per topic, and
// whether the topics go batchSize to a request or one at a time.
type createCase struct {
	partitions int
	batched    bool
	topics     int
}

func (c createCase) mode() string {
	if c.batched {
		return "batched"
	}
	return "sequential"
}

func (c createCase) String() string {
	return fmt.Sprintf("create %d topics of %d partitions, %s", c.topics, c.partitions, c.mode())
}

// createResult is what one creation case measured.
type createResult struct {
	c        createCase
	elapsed  time.Duration
	requests []time.Duration // each CreateTopics' round trip
}

func (r createResult) topicsPerSec() float64 { return float64(r.c.topics) / r.elapsed.Seconds() }

func (r createResult) partitionsPerSec() float64 {
	return float64(r.c.topics*r.c.partitions) / r.elapsed.Seconds()
}

// runCreate creates the case's topics on a fresh cluster, each request
// after the previous one answered (a broker answers once its own image
// shows the topics: cluster/controller_forward.go).
func (e *experiment) runCreate(ctx context.Context, c createCase) (createResult, error) {
	tb, err := startTestbed(ctx, e.cfg.dir, e.bin)
	if err != nil {
		return createResult{}, err
	}
	defer tb.close()
	per := 1
	if c.batched {
		per = batchSize
	}
	res := createResult{c: c}
	start := time.Now()
	for i := 0; i < c.topics; i += per {
		names := make([]string, 0, per)
		for j := i; j < min(i+per, c.topics); j++ {
			names = append(names, fmt.Sprintf("t%d-%05d", c.partitions, j))
		}
		t0 := time.Now()
		if err := tb.createTopics(ctx, int32(c.partitions), names...); err != nil {
			return res, err
		}
		res.requests = append(res.requests, time.Since(t0))
	}
	res.elapsed = time.Since(start)
	return res, nil
}

// percentile is the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
