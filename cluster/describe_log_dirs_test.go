package cluster_test

import (
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka: ReplicaManager.describeLogDirs answers every live log
// directory by its absolute path, with each replica it holds (Topics
// null: all; else the partitions named), its size in bytes, offset lag
// 0 and IsFuture false, and (v4, KIP-827) the volume's total and usable
// bytes. kafka-reassign-partitions --generate and --execute call it on
// every replica's broker and stop with UNSUPPORTED_VERSION without it.
func TestDescribeLogDirs(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, nil)
	createTopic(t, b.addr, "ld", 2, nil)
	// Straight to the one broker: kgo's client-level sharding would
	// merge the answers and drop the v4 byte counts.
	seed := client(t, b.addr).SeedBrokers()[0]
	produceSync(t, client(t, b.addr, kgo.RecordPartitioner(kgo.ManualPartitioner())), &kgo.Record{Topic: "ld", Partition: 1, Value: make([]byte, 1000)})

	all := kmsg.NewPtrDescribeLogDirsRequest()
	all.Version = 4
	kr, err := seed.Request(ctx(t), all)
	if err != nil {
		t.Fatal(err)
	}
	resp := kr.(*kmsg.DescribeLogDirsResponse)
	if len(resp.Dirs) != 1 {
		t.Fatalf("%d dirs, want the one log dir", len(resp.Dirs))
	}
	d := resp.Dirs[0]
	abs, _ := filepath.Abs(dir)
	if d.ErrorCode != 0 || d.Dir != abs {
		t.Errorf("dir %q error %d, want %q and no error", d.Dir, d.ErrorCode, abs)
	}
	if d.TotalBytes <= 0 || d.UsableBytes <= 0 || d.UsableBytes > d.TotalBytes {
		t.Errorf("total %d usable %d bytes", d.TotalBytes, d.UsableBytes)
	}
	sizes := map[int32]int64{}
	for _, tp := range d.Topics {
		if tp.Topic != "ld" {
			continue
		}
		for _, p := range tp.Partitions {
			if p.IsFuture || p.OffsetLag != 0 {
				t.Errorf("partition %d: future %v lag %d", p.Partition, p.IsFuture, p.OffsetLag)
			}
			sizes[p.Partition] = p.Size
		}
	}
	if len(sizes) != 2 || sizes[0] != 0 || sizes[1] <= 0 {
		t.Errorf("sizes %v: want partition 0 empty and partition 1 holding the record", sizes)
	}

	one := kmsg.NewPtrDescribeLogDirsRequest()
	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic, rt.Partitions = "ld", []int32{1}
	one.Topics = append(one.Topics, rt)
	if kr, err = seed.Request(ctx(t), one); err != nil {
		t.Fatal(err)
	}
	resp = kr.(*kmsg.DescribeLogDirsResponse)
	if n := len(resp.Dirs); n != 1 || len(resp.Dirs[0].Topics) != 1 || len(resp.Dirs[0].Topics[0].Partitions) != 1 ||
		resp.Dirs[0].Topics[0].Partitions[0].Partition != 1 {
		t.Errorf("asked for ld-1 only, got %+v", resp.Dirs)
	}
}
