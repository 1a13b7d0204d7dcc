package compaction_test

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// quiet discards the logs of the log and the cleaner in tests.
var quiet = slog.New(slog.DiscardHandler)

// tb is what the helpers need of a test: *testing.T, *testing.B and
// *rapid.T all have it.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// t0 is the clock the tests start from.
var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// logConfig is the tests' log configuration: Kafka's defaults, except
// that a removed segment's files go after 1 ms instead of 60 s.
func logConfig() segment.Config {
	c := segment.DefaultConfig()
	c.FileDeleteDelay = time.Millisecond
	return c
}

func openLog(t tb, dir string, cfg segment.Config) *segment.Log {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	l, err := segment.Open(dir, cfg)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return l
}

// kv is one record to write: Value nil is a tombstone, Key nil a keyless
// record.
type kv struct {
	Key, Value []byte
}

func rec(k, v string) kv { return kv{Key: []byte(k), Value: []byte(v)} }
func tomb(k string) kv   { return kv{Key: []byte(k)} }

// appendKV appends one batch of records with codec c and timestamp ts and
// returns its first offset.
func appendKV(t tb, l *segment.Log, c record.Compression, ts time.Time, recs ...kv) int64 {
	t.Helper()
	b := record.NewBatchBuilder(c)
	for _, r := range recs {
		b.Append(record.Record{Key: r.Key, Value: r.Value, Timestamp: ts.UnixMilli()})
	}
	batch, err := b.Build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	info, err := l.Append(batch)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return info.FirstOffset
}

func roll(t tb, l *segment.Log) {
	t.Helper()
	if err := l.Roll(); err != nil {
		t.Fatalf("roll: %v", err)
	}
}

// stored is one record read back, with its batch's header.
type stored struct {
	record.Record
	Batch record.BatchHeader
}

// readAll reads every record from the log start to the end, checking that
// offsets increase strictly.
func readAll(t tb, l *segment.Log) []stored {
	t.Helper()
	out, err := readAllErr(l)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readAllErr(l *segment.Log) ([]stored, error) {
	var out []stored
	prev := int64(-1)
	for off := l.StartOffset(); off < l.EndOffset(); {
		buf, err := l.ReadBytes(off, 1<<20)
		if err != nil {
			return out, fmt.Errorf("read at %d: %w", off, err)
		}
		if len(buf) == 0 {
			return out, fmt.Errorf("read at %d below end %d returned nothing", off, l.EndOffset())
		}
		for p := 0; p < len(buf); {
			_, n, err := record.NextBatch(buf[p:], 0)
			if err != nil {
				return out, err
			}
			h, _ := record.ParseHeader(buf[p:])
			recs, err := record.DecodeBatch(buf[p:p+n], nil)
			if err != nil {
				return out, fmt.Errorf("decode batch at %d: %w", h.BaseOffset, err)
			}
			for _, r := range recs {
				if r.Offset <= prev {
					return out, fmt.Errorf("offset %d after %d", r.Offset, prev)
				}
				prev = r.Offset
				if r.Offset >= off {
					out = append(out, stored{Record: r, Batch: h})
				}
			}
			off = max(off, h.NextOffset())
			p += n
		}
	}
	return out, nil
}

// latest maps each key to its last record.
func latest(recs []stored) map[string]stored {
	m := map[string]stored{}
	for _, r := range recs {
		if r.Key != nil {
			m[string(r.Key)] = r
		}
	}
	return m
}

func must[T any](t tb) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
