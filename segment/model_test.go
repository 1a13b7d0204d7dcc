package segment_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// logModel is the simple in-memory log the property test compares the
// real one with: the stored batches in order, and the start offset.
type logModel struct {
	batches [][]byte
	start   int64
}

func (m *logModel) end() int64 {
	if len(m.batches) == 0 {
		return m.start
	}
	h, _ := record.ParseHeader(m.batches[len(m.batches)-1])
	return h.NextOffset()
}

// visible is the batches a reader from the start offset sees.
func (m *logModel) visible() [][]byte {
	var out [][]byte
	for _, b := range m.batches {
		if h, _ := record.ParseHeader(b); h.LastOffset() >= m.start {
			out = append(out, b)
		}
	}
	return out
}

// A property test of random append / read / roll / truncate / delete /
// reopen (clean and after a crash) sequences against logModel.
func TestLogMatchesModel(t *testing.T) {
	root := t.TempDir()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		dir := filepath.Join(root, fmt.Sprintf("model-%d", n))
		cfg := segment.DefaultConfig()
		cfg.SegmentBytes = rapid.Int64Range(2048, 8192).Draw(rt, "segment.bytes")
		cfg.IndexIntervalBytes = rapid.IntRange(0, 1024).Draw(rt, "index.interval.bytes")
		cfg.SegmentIndexBytes = rapid.IntRange(48, 1024).Draw(rt, "segment.index.bytes")
		cfg.FS, cfg.Logger = noSyncFS(), slog.New(slog.DiscardHandler)
		l, err := segment.Open(dir, cfg)
		if err != nil {
			rt.Fatal(err)
		}
		defer func() { l.Close() }()
		m := &logModel{}
		seed := int64(0)
		rt.Repeat(map[string]func(*rapid.T){
			"append": func(rt *rapid.T) {
				seed++
				b, err := segmenttest.MakeBatch(rapid.IntRange(1, 5).Draw(rt, "records"), rapid.IntRange(0, 300).Draw(rt, "value"), seed, fixedTs+seed)
				if err != nil {
					rt.Fatal(err)
				}
				info, err := l.Append(b)
				if err != nil {
					rt.Fatal(err)
				}
				if info.FirstOffset != m.end() {
					rt.Fatalf("append got offset %d, model end %d", info.FirstOffset, m.end())
				}
				m.batches = append(m.batches, segmenttest.WithBase(b, info.FirstOffset))
			},
			"read": func(rt *rapid.T) {
				off := rapid.Int64Range(m.start, m.end()).Draw(rt, "offset")
				got, err := l.ReadBytes(off, rapid.IntRange(1, 4096).Draw(rt, "max"))
				if err != nil {
					rt.Fatal(err)
				}
				for _, b := range m.batches {
					if h, _ := record.ParseHeader(b); h.LastOffset() >= off {
						if !bytes.HasPrefix(got, b) {
							rt.Fatalf("read at %d does not start with the batch at %d", off, h.BaseOffset)
						}
						return
					}
				}
				if len(got) != 0 {
					rt.Fatalf("read at the end returned %d bytes", len(got))
				}
			},
			"roll": func(rt *rapid.T) {
				if err := l.Roll(); err != nil {
					rt.Fatal(err)
				}
			},
			"truncate": func(rt *rapid.T) {
				off := rapid.Int64Range(m.start, m.end()).Draw(rt, "offset")
				if err := l.TruncateTo(off); err != nil {
					rt.Fatal(err)
				}
				keep := m.batches[:0:0]
				for _, b := range m.batches {
					if h, _ := record.ParseHeader(b); h.LastOffset() < off {
						keep = append(keep, b)
					}
				}
				m.batches = keep
			},
			"delete": func(rt *rapid.T) {
				off := rapid.Int64Range(m.start, m.end()).Draw(rt, "offset")
				if _, err := l.DeleteSegmentsBefore(off); err != nil {
					rt.Fatal(err)
				}
				if l.StartOffset() < m.start || l.StartOffset() > off {
					rt.Fatalf("start offset %d after deleting before %d (was %d)", l.StartOffset(), off, m.start)
				}
				m.start = l.StartOffset()
				keep := m.batches[:0:0]
				for _, b := range m.batches {
					if h, _ := record.ParseHeader(b); h.LastOffset() >= m.start {
						keep = append(keep, b)
					}
				}
				m.batches = keep
			},
			"reopen": func(rt *rapid.T) {
				if err := l.Close(); err != nil {
					rt.Fatal(err)
				}
				if l, err = segment.Open(dir, cfg); err != nil {
					rt.Fatal(err)
				}
				if !l.Recovery().CleanShutdown {
					rt.Fatal("clean close reopened unclean")
				}
			},
			"crash": func(rt *rapid.T) {
				l.Abandon()
				if l, err = segment.Open(dir, cfg); err != nil {
					rt.Fatal(err)
				}
				if l.Recovery().Dropped() {
					rt.Fatalf("recovery dropped data after a process crash: %+v", l.Recovery())
				}
			},
			"": func(rt *rapid.T) {
				if l.EndOffset() != m.end() || l.StartOffset() != m.start {
					rt.Fatalf("log [%d, %d), model [%d, %d)", l.StartOffset(), l.EndOffset(), m.start, m.end())
				}
				got := readAll(t, l)
				want := m.visible()
				if len(got) != len(want) {
					rt.Fatalf("log has %d batches, model %d", len(got), len(want))
				}
				for i := range want {
					if !bytes.Equal(got[i], want[i]) {
						rt.Fatalf("batch %d differs from the model", i)
					}
				}
			},
		})
	})
}
