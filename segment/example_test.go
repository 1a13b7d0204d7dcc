package segment_test

import (
	"fmt"
	"os"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// A log used as a library: open it, append records, read them back.
func Example() {
	dir, _ := os.MkdirTemp("", "orders-0")
	defer os.RemoveAll(dir)

	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 64 << 20
	cfg.FlushMessages = 1
	log, err := segment.Open(dir, cfg)
	if err != nil {
		panic(err)
	}
	defer log.Close()

	b := record.NewBatchBuilder(record.CompressionZstd)
	b.Append(record.Record{Key: []byte("order-1"), Value: []byte("created")})
	b.Append(record.Record{Key: []byte("order-1"), Value: []byte("paid")})
	batch, err := b.Build()
	if err != nil {
		panic(err)
	}
	info, err := log.Append(batch) // durable before it returns: flush.messages=1
	if err != nil {
		panic(err)
	}
	fmt.Println("appended offsets", info.FirstOffset, "to", info.LastOffset)

	buf, err := log.ReadBytes(0, 1<<20)
	if err != nil {
		panic(err)
	}
	for rec, err := range record.Records(buf) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d %s=%s\n", rec.Offset, rec.Key, rec.Value)
	}
	// Output:
	// appended offsets 0 to 1
	// 0 order-1=created
	// 1 order-1=paid
}
