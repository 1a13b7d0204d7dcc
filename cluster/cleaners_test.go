package cluster

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/config"
	"github.com/varve/varve/record"
	"github.com/varve/varve/retention"
	"github.com/varve/varve/segment"
)

// Kafka: retention.bytes=0 deletes every segment below the high
// watermark, the active one too once it is not empty (rolled first), so
// the log start offset reaches the log end. Checked through a topic
// config set by CreateTopics and the node's retention task.
func TestRetentionBytesZeroThroughTopicConfig(t *testing.T) {
	cfg, err := config.Parse(map[string]string{"log.dirs": t.TempDir(), "listeners": "PLAINTEXT://127.0.0.1:0",
		"varve.metrics.listener": "", "num.network.threads": "1", "num.io.threads": "2"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr().String()), kgo.DefaultProduceTopic("zero"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	zero, small := "0", "1024"
	if r, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.bytes": &zero, "segment.bytes": &small}, "zero"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	for i := range 20 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 200+i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.cleaners.retention.RunOnce(ctx); n < 2 {
		t.Fatalf("retention deleted %d segments; want every one of the topic's", n)
	}
	starts, err := adm.ListStartOffsets(ctx, "zero")
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, "zero")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := starts.Lookup("zero", 0)
	e, _ := ends.Lookup("zero", 0)
	if s.Err != nil || e.Err != nil || s.Offset != 20 || e.Offset != 20 {
		t.Fatalf("log start %d (%v), end %d (%v); want both 20: every record deleted", s.Offset, s.Err, e.Offset, e.Err)
	}
}

// Kafka: the cleaner threads apply retention to compacted logs after
// cleaning (LogCleanerManager.deletableLogs): compact,delete gets every
// rule, compact alone only the log-start-offset rule. The node composes
// this from package retention; compaction calls it back.
func TestRetainCompactedFollowsTheCleanupPolicy(t *testing.T) {
	b := &Broker{log: slog.New(slog.DiscardHandler)}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(48 * time.Hour)
	open := func() *segment.Log {
		c := segment.DefaultConfig()
		c.FileDeleteDelay = 0
		l, err := segment.Open(t.TempDir(), c)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 { // four sealed one-record segments, a day older than now
			bb := record.NewBatchBuilder(record.CompressionNone)
			bb.Append(record.Record{Key: []byte{byte(i)}, Value: []byte("v"), Timestamp: t0.UnixMilli()})
			batch, _ := bb.Build()
			if _, err := l.Append(batch); err != nil {
				t.Fatal(err)
			}
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		return l
	}
	both, only := open(), open()
	defer both.Close()
	defer only.Close()
	if err := only.SetStartOffset(2); err != nil {
		t.Fatal(err)
	}
	pol := retention.DefaultPolicy()
	pol.RetentionMs = time.Hour
	pol.CleanupPolicy = segment.CleanupCompact | segment.CleanupDelete
	if err := b.retainCompacted(pol)(both, both.EndOffset(), now); err != nil {
		t.Fatal(err)
	}
	pol.CleanupPolicy = segment.CleanupCompact
	if err := b.retainCompacted(pol)(only, only.EndOffset(), now); err != nil {
		t.Fatal(err)
	}
	if both.StartOffset() != 4 || len(both.Segments()) != 1 {
		t.Fatalf("compact,delete log starts at %d with %d segments; want 4 and 1 (all old segments deleted)", both.StartOffset(), len(both.Segments()))
	}
	if only.StartOffset() != 2 || only.Segments()[0].BaseOffset != 2 {
		t.Fatalf("compact log starts at %d, first segment %d; want 2 and 2 (start-offset rule only)", only.StartOffset(), only.Segments()[0].BaseOffset)
	}
}
