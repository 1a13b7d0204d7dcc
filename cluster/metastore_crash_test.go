package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/varve/varve/metadata"
	"github.com/varve/varve/segment/segmenttest"
)

// The metadata file is written like every durable file (temp, fsync,
// rename, fsync the directory) through the file-system seam. A crash at
// every byte of the temporary file's write, at its fsync, at the rename
// and at the directory's fsync leaves a file that loads whole: the
// image before the change, or after it, never a torn one. Kafka keeps
// the same guarantee for its checkpoint files (CheckpointFile.write).
func TestMetadataFileCrashAtEveryStep(t *testing.T) {
	self := metadata.RegisterBrokerRecord{BrokerID: 1}
	addTopic := func(s *metaSource, name string, partitions int32) error {
		_, err := s.change(func(*metadata.Image) ([]metadata.Record, error) {
			return s.topicRecords(name, newTopicID(), 0, partitions, map[string]string{"cleanup.policy": "compact"}), nil
		})
		return err
	}
	// How many bytes one write of the file takes, to cut at each.
	probe := t.TempDir()
	ps, err := openMetaSource(probe, "crash-cluster", self, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := addTopic(ps, "before", 3); err != nil {
		t.Fatal(err)
	}
	if err := addTopic(ps, "after", 2); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(probe, MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	faults := []struct {
		name   string
		inject func(*segmenttest.FaultFS)
	}{
		{"sync fails", func(f *segmenttest.FaultFS) { f.FailSyncs(true) }},
		{"rename fails", func(f *segmenttest.FaultFS) { f.FailOpsAfter(0) }},
	}
	for cut := int64(0); cut <= fi.Size(); cut += max(1, fi.Size()/97) {
		faults = append(faults, struct {
			name   string
			inject func(*segmenttest.FaultFS)
		}{"write cut", func(f *segmenttest.FaultFS) { f.CutWritesAfter(cut) }})
	}
	for i, fault := range faults {
		dir := t.TempDir()
		fs := segmenttest.NewFaultFS()
		s, err := openMetaSource(dir, "crash-cluster", self, fs)
		if err != nil {
			t.Fatal(err)
		}
		if err := addTopic(s, "before", 3); err != nil {
			t.Fatal(err)
		}
		fault.inject(fs)
		changeErr := addTopic(s, "after", 2)
		if changeErr == nil {
			if _, ok := s.image().Topic("after"); !ok {
				t.Fatalf("%s #%d: change succeeded but the image lacks the topic", fault.name, i)
			}
		}
		if changeErr != nil {
			if _, ok := s.image().Topic("after"); ok {
				t.Fatalf("%s #%d: change failed (%v) but the image was published", fault.name, i, changeErr)
			}
		}
		if err := fs.Crash(); err != nil {
			t.Fatal(err)
		}
		r, err := openMetaSource(dir, "", self, nil)
		if err != nil {
			t.Fatalf("%s #%d: the metadata file does not load after the crash: %v", fault.name, i, err)
		}
		img := r.image()
		if img.ClusterID() != "crash-cluster" {
			t.Fatalf("%s #%d: cluster id %q after the crash", fault.name, i, img.ClusterID())
		}
		b, ok := img.Topic("before")
		if !ok || len(b.Partitions) != 3 || b.Configs["cleanup.policy"] != "compact" {
			t.Fatalf("%s #%d: the earlier topic came back as %+v", fault.name, i, b)
		}
		a, ok := img.Topic("after")
		if changeErr == nil && !ok {
			t.Fatalf("%s #%d: an acknowledged change was lost", fault.name, i)
		}
		if ok && (len(a.Partitions) != 2 || a.Configs["cleanup.policy"] != "compact") {
			t.Fatalf("%s #%d: a torn topic came back: %+v", fault.name, i, a)
		}
	}
	t.Logf("%d crash points", len(faults))
}
