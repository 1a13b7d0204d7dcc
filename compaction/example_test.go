package compaction_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// Keep the last value of every key of a log used as a library.
func ExampleClean() {
	root, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(root)
	l, err := segment.Open(filepath.Join(root, "users-0"), segment.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer l.Close()
	b := record.NewBatchBuilder(record.CompressionZstd)
	for _, kv := range [][2]string{{"user-1", "alice"}, {"user-2", "bob"}, {"user-1", "alicia"}, {"user-2", ""}} {
		var value []byte // "" below writes a tombstone (null value)
		if kv[1] != "" {
			value = []byte(kv[1])
		}
		b.Append(record.Record{Key: []byte(kv[0]), Value: value, Timestamp: 1_700_000_000_000})
	}
	batch, _ := b.Build()
	l.Append(batch)
	l.Roll() // the active segment is never cleaned

	st, err := compaction.Clean(l, compaction.DefaultConfig(), time.Now())
	if err != nil {
		panic(err)
	}
	buf, _ := l.ReadBytes(0, 1<<20)
	for r := range record.Records(buf) {
		fmt.Printf("offset %d: %s = %q (tombstone: %v)\n", r.Offset, r.Key, r.Value, r.Value == nil)
	}
	fmt.Printf("kept %d of %d records\n", st.RecordsKept, st.RecordsRead)
	// Output:
	// offset 2: user-1 = "alicia" (tombstone: false)
	// offset 3: user-2 = "" (tombstone: true)
	// kept 2 of 4 records
}

// Clean many logs in the background, the way a broker does. (A broker
// also sets each Target's Retain to apply retention after cleaning; see
// the package documentation.)
func ExampleCleaner() {
	root, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(root)
	l, _ := segment.Open(filepath.Join(root, "prices-0"), segment.DefaultConfig())
	defer l.Close()
	for _, v := range []string{"10", "11", "12"} {
		b := record.NewBatchBuilder(record.CompressionNone)
		b.Append(record.Record{Key: []byte("EURUSD"), Value: []byte(v)})
		batch, _ := b.Build()
		l.Append(batch)
		l.Roll()
	}

	c, err := compaction.NewCleaner(compaction.DefaultConfig(), func() []compaction.Target {
		return []compaction.Target{{Log: l}}
	})
	if err != nil {
		panic(err)
	}
	c.Start(context.Background())
	defer c.Stop()
	for len(l.Segments()) > 2 { // the three segments become one, plus the active one
		time.Sleep(10 * time.Millisecond)
	}
	buf, _ := l.ReadBytes(l.StartOffset(), 1<<20)
	for r := range record.Records(buf) {
		fmt.Printf("%s = %s\n", r.Key, r.Value)
	}
	// Output: EURUSD = 12
}
