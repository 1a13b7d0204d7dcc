package compaction_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// model is what was written: every record by offset.
type model struct {
	recs map[int64]kv
	ts   map[int64]int64
	next int64
}

// lastOf returns each key's last record offset.
func (m *model) lastOf() map[string]int64 {
	out := map[string]int64{}
	for off := int64(0); off < m.next; off++ {
		if r, ok := m.recs[off]; ok {
			out[string(r.Key)] = off
		}
	}
	return out
}

// Kafka's cleaner contract (C1-C3, KAFKA-REFERENCE §4) against a model:
// random keyed writes with duplicate keys across segments, tombstones and
// mixed codecs, interleaved with compactions (with small offset maps, so
// passes stop early), clock jumps past delete horizons, rolls and
// reopenings. After every step, every record read is the record written
// at its offset (offsets and content unchanged), offsets strictly
// increase, and every key reads exactly its last value: its last record
// is there, or, for a tombstone written at least delete.retention.ms ago,
// the key may be gone entirely.
func TestCompactionAgainstModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		root, err := os.MkdirTemp("", "compaction-model")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(root)
		dir := filepath.Join(root, "model-0")
		segCfg := logConfig()
		segCfg.SegmentBytes = int64(rapid.IntRange(300, 3000).Draw(rt, "segment.bytes"))
		l := openLog(rt, dir, segCfg)
		defer func() { l.Close() }()
		m := &model{recs: map[int64]kv{}, ts: map[int64]int64{}}
		clock := t0
		steps := rapid.IntRange(1, 25).Draw(rt, "steps")
		for i := range steps {
			switch op := rapid.IntRange(0, 9).Draw(rt, fmt.Sprint("op", i)); {
			case op <= 4:
				appendRandom(rt, l, m, clock)
			case op == 5:
				roll(rt, l)
			case op <= 7:
				cleanRandom(rt, l, clock)
			case op == 8:
				if err := l.Close(); err != nil {
					rt.Fatal(err)
				}
				l = openLog(rt, dir, segCfg)
			case op == 9:
				clock = clock.Add(time.Duration(rapid.IntRange(1, 90).Draw(rt, "minutes")) * time.Minute)
			}
			checkModel(rt, l, m, clock)
		}
	})
}

func appendRandom(rt *rapid.T, l *segment.Log, m *model, clock time.Time) {
	n := rapid.IntRange(1, 6).Draw(rt, "records")
	codec := rapid.SampledFrom([]record.Compression{record.CompressionNone, record.CompressionGzip,
		record.CompressionSnappy, record.CompressionLZ4, record.CompressionZstd}).Draw(rt, "codec")
	var recs []kv
	for range n {
		k := fmt.Sprint("k", rapid.IntRange(0, 9).Draw(rt, "key"))
		if rapid.IntRange(0, 4).Draw(rt, "tombstone?") == 0 {
			recs = append(recs, tomb(k))
		} else {
			recs = append(recs, rec(k, fmt.Sprint("v", m.next, "-", len(recs))))
		}
	}
	first := appendKV(rt, l, codec, clock, recs...)
	if first != m.next {
		rt.Fatalf("append at %d, model expects %d", first, m.next)
	}
	for i, r := range recs {
		m.recs[first+int64(i)] = r
		m.ts[first+int64(i)] = clock.UnixMilli()
	}
	m.next = first + int64(n)
}

func cleanRandom(rt *rapid.T, l *segment.Log, clock time.Time) {
	cfg := compaction.DefaultConfig()
	cfg.DeleteRetention = propRetention
	cfg.DedupeBufferSize = int64(rapid.IntRange(4, 64).Draw(rt, "map slots")) * 16
	cfg.Logger = quiet
	if _, err := compaction.Clean(l, cfg, clock); err != nil {
		rt.Fatalf("clean: %v", err)
	}
}

// propRetention is delete.retention.ms in the property test.
const propRetention = 30 * time.Minute

func checkModel(rt *rapid.T, l *segment.Log, m *model, clock time.Time) {
	if l.EndOffset() != m.next {
		rt.Fatalf("log end offset %d, model %d", l.EndOffset(), m.next)
	}
	got, err := readAllErr(l) // also checks offsets strictly increase
	if err != nil {
		rt.Fatal(err)
	}
	for _, r := range got {
		w, ok := m.recs[r.Offset]
		if !ok || string(w.Key) != string(r.Key) || string(w.Value) != string(r.Value) ||
			(w.Value == nil) != (r.Value == nil) || m.ts[r.Offset] != r.Timestamp {
			rt.Fatalf("offset %d reads %q=%q at %d, model has %q=%q at %d", r.Offset, r.Key, r.Value, r.Timestamp, w.Key, w.Value, m.ts[r.Offset])
		}
	}
	have := latest(got)
	for key, off := range m.lastOf() {
		h, ok := have[key]
		tombstone := m.recs[off].Value == nil
		switch {
		case ok && h.Offset == off:
		case !ok && tombstone && clock.UnixMilli()-m.ts[off] >= propRetention.Milliseconds():
			// The tombstone passed its horizon, which is at least
			// delete.retention.ms after it was written: the key is gone.
		default:
			rt.Fatalf("key %s reads offset %d (present %v), model's last is %d (tombstone %v)", key, h.Offset, ok, off, tombstone)
		}
	}
}
