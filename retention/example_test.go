package retention_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/retention"
	"github.com/varve/varve/segment"
)

// Delete segments older than one hour from a log used as a library.
func ExampleEnforce() {
	dir, _ := os.MkdirTemp("", "orders-0")
	defer os.RemoveAll(dir)
	l, err := segment.Open(dir, segment.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer l.Close()
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 { // three segments, written an hour apart
		b := record.NewBatchBuilder(record.CompressionNone)
		b.Append(record.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: start.Add(time.Duration(i) * time.Hour).UnixMilli()})
		batch, _ := b.Build()
		l.Append(batch)
		l.Roll()
	}

	p := retention.DefaultPolicy()
	p.RetentionMs = time.Hour
	p.RetentionBytes = retention.Unlimited
	res, err := retention.Enforce(l, p, l.EndOffset(), start.Add(150*time.Minute))
	if err != nil {
		panic(err)
	}
	fmt.Println("deleted by retention.ms:", res.ByRule[retention.RuleTime])
	fmt.Println("log start offset:", l.StartOffset())
	// Output:
	// deleted by retention.ms: 2
	// log start offset: 2
}

// Run retention over many logs every log.retention.check.interval.ms.
func ExampleScheduler() {
	dir, _ := os.MkdirTemp("", "events-0")
	defer os.RemoveAll(dir)
	l, _ := segment.Open(dir, segment.DefaultConfig())
	defer l.Close()

	s, err := retention.NewScheduler(retention.SchedulerConfig{
		CheckInterval: 5 * time.Minute,
		Logs:          func() []*segment.Log { return []*segment.Log{l} },
		Policy: func(*segment.Log) retention.Policy {
			p := retention.DefaultPolicy()
			p.RetentionMs = 24 * time.Hour
			return p
		},
	})
	if err != nil {
		panic(err)
	}
	s.Start(context.Background())
	defer s.Stop()
	fmt.Println("segments deleted now:", s.RunOnce(context.Background()))
	// Output: segments deleted now: 0
}
