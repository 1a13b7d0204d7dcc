package migrate

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/logdir"
	"github.com/varve/varve/metadata"
	"github.com/varve/varve/segment"
)

// ErrRefused is the error of Write for a plan with refusals.
var ErrRefused = errors.New("migration refused")

// Plan is what a migration of one Kafka log directory writes, and what
// it found that it cannot carry over.
type Plan struct {
	LogDir      string // Kafka's log dir, which becomes the Varve node's (only) log dir
	MetadataDir string // Kafka's metadata.log.dir, holding __cluster_metadata-0
	ClusterID   string // from meta.properties
	NodeID      int32  // from meta.properties

	// Image holds what the Varve node will serve: Kafka's topics with
	// their ids and configs, the producer-id block, SCRAM credentials
	// and ACLs, at Varve's feature levels.
	Image *metadata.Image
	// KafkaNextProducerID is the end of the producer-id blocks Kafka's
	// controller handed out; SnapshotProducerIDFloor is one above the
	// highest producer id of the partitions' .snapshot files. The
	// node's block starts at the larger.
	KafkaNextProducerID     int64
	SnapshotProducerIDFloor int64
	Features                []FeatureChange
	// BrokerConfigs are the dynamic broker configs of Kafka's by
	// resource name ("" the cluster default) that are not carried
	// over: those Varve changes only at start-up, and other nodes'.
	// They belong in the node's server.properties.
	BrokerConfigs map[string]map[string]string
	Ignored       map[string]int // records of no use to a single node, by type
	Snapshot      string         // the snapshot replayed, "" if none
	Segments      []string       // the metadata log segments replayed
	TornBytes     int64          // a torn tail of the metadata log, not replayed (as Kafka truncates it)
	Partitions    int            // partition directories adopted
	Removed       []string       // *-delete directories: deleted topics' data, which the node removes at start
	Refusals      []string       // why the migration cannot run; empty when it can
}

// Build reads logDir (Kafka's log dir: meta.properties and the
// partition directories) and metadataDir's __cluster_metadata-0
// (metadataDir "" is logDir) and makes the plan. It writes nothing.
// An error is a file it could not read; what it can read but not carry
// over is in Plan.Refusals.
func Build(logDir, metadataDir string) (*Plan, error) {
	if metadataDir == "" {
		metadataDir = logDir
	}
	p := &Plan{LogDir: logDir, MetadataDir: metadataDir}
	if err := p.readMetaProperties(); err != nil {
		return nil, err
	}
	p.checkNotRunning(logDir)
	if metadataDir != logDir {
		p.checkNotRunning(metadataDir)
		if err := p.checkSameNode(metadataDir); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(logDir, cluster.MetadataFile)); err == nil {
		p.refuse("%s already holds Varve's %s: it is a Varve log dir already", logDir, cluster.MetadataFile)
	}
	src, err := readMetadataLog(filepath.Join(metadataDir, MetadataLogDir))
	if err != nil {
		return nil, err
	}
	p.Snapshot, p.Segments, p.TornBytes = src.snapshot, src.segments, src.tornBytes
	r := newReplayer(p.ClusterID)
	for _, e := range src.entries {
		r.batch(e)
	}
	if r.inTxn {
		r.pending = nil // an unfinished metadata transaction: Kafka drops it too
	}
	p.Features = r.finalizeFeatures()
	p.Image, p.BrokerConfigs, p.Ignored = r.img, r.brokers, r.ignored
	p.Refusals = append(p.Refusals, r.refusals...)
	if err := p.carryBrokerConfigs(); err != nil {
		p.refuse("Kafka's dynamic broker configs: %v", err)
	}
	if err := p.checkPartitions(); err != nil {
		return nil, err
	}
	return p, p.raiseProducerIDs()
}

func (p *Plan) refuse(format string, args ...any) {
	p.Refusals = append(p.Refusals, fmt.Sprintf(format, args...))
}

func (p *Plan) readMetaProperties() error {
	data, err := os.ReadFile(filepath.Join(p.LogDir, logdir.MetaPropertiesFile))
	if err != nil {
		return fmt.Errorf("%s is no Kafka log dir: %w", p.LogDir, err)
	}
	mp, err := logdir.ParseMetaProperties(data)
	if err != nil {
		return fmt.Errorf("%s: %w", p.LogDir, err)
	}
	p.ClusterID, p.NodeID = mp.ClusterID, mp.NodeID
	return nil
}

// checkSameNode refuses a metadata dir whose meta.properties names
// another cluster or node than the log dir's: the log would describe
// other partitions.
func (p *Plan) checkSameNode(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, logdir.MetaPropertiesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	mp, err := logdir.ParseMetaProperties(data)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if mp.ClusterID != p.ClusterID || mp.NodeID != p.NodeID {
		p.refuse("%s is the metadata dir of cluster %s node %d, %s of cluster %s node %d", dir, mp.ClusterID, mp.NodeID, p.LogDir, p.ClusterID, p.NodeID)
	}
	return nil
}

// checkNotRunning refuses a directory whose .lock a process holds: Kafka
// locks it (a POSIX record lock, Java's FileChannel.tryLock) for as long
// as it runs. The test takes no lock and changes nothing.
func (p *Plan) checkNotRunning(dir string) {
	f, err := os.Open(filepath.Join(dir, ".lock"))
	if err != nil {
		return // no lock file: no Kafka has it
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err == nil && lk.Type != unix.F_UNLCK {
		p.refuse("%s is locked by process %d: stop Kafka first", dir, lk.Pid)
	}
}

// checkPartitions compares the image's partitions and the log dir's
// directories: every partition must be here, on this node only, with
// its topic's id; every partition directory must be in the image.
func (p *Plan) checkPartitions() error {
	onDisk, err := p.partitionDirs()
	if err != nil {
		return err
	}
	for t := range p.Image.Topics() {
		for i, part := range t.Partitions {
			name := segment.TopicPartition{Topic: t.Name, Partition: int32(i)}.String()
			if !slices.Equal(part.Replicas, []int32{p.NodeID}) {
				p.refuse("%s has replicas %v: a partition with replicas on other nodes needs a cluster migration, which this command does not do", name, part.Replicas)
			}
			if _, ok := onDisk[name]; !ok {
				p.refuse("%s is missing from %s: with several log.dirs, Varve adopts one; move the partition directories into it first", name, p.LogDir)
				continue
			}
			delete(onDisk, name)
			if err := p.checkTopicID(name, t.ID); err != nil {
				return err
			}
			p.Partitions++
		}
	}
	for _, name := range slices.Sorted(maps.Keys(onDisk)) {
		p.refuse("%s is a partition directory of no topic in Kafka's metadata (a stray or a -future log): move it out of %s first", name, p.LogDir)
	}
	return nil
}

func (p *Plan) checkTopicID(name string, want metadata.TopicID) error {
	data, err := os.ReadFile(filepath.Join(p.LogDir, name, "partition.metadata"))
	if errors.Is(err, os.ErrNotExist) {
		return nil // Kafka writes it lazily; Varve then writes the image's
	}
	if err != nil {
		return err
	}
	id, err := logdir.ParsePartitionMetadata(data)
	if err != nil {
		p.refuse("%s: %v", name, err)
		return nil
	}
	if metadata.TopicID(id) != want {
		p.refuse("%s: partition.metadata names topic id %s, Kafka's metadata %s", name, id, logdir.TopicID(want))
	}
	return nil
}

// partitionDirs lists the directories of the log dir that hold
// partitions (and the names of the *-delete ones in p.Removed).
func (p *Plan) partitionDirs() (map[string]struct{}, error) {
	ents, err := os.ReadDir(p.LogDir)
	if err != nil {
		return nil, err
	}
	out := map[string]struct{}{}
	for _, e := range ents {
		name := e.Name()
		switch {
		case !e.IsDir() || name == MetadataLogDir:
		case strings.HasSuffix(name, "-delete"):
			p.Removed = append(p.Removed, name)
		case strings.HasSuffix(name, "-future") || strings.HasSuffix(name, "-stray"):
			out[name] = struct{}{}
		default:
			if tp := segment.ParseTopicPartition(name); tp.String() == name {
				out[name] = struct{}{}
			}
		}
	}
	return out, nil
}

// raiseProducerIDs sets the node's producer-id block above Kafka's and
// above every producer id of the partitions' snapshots.
func (p *Plan) raiseProducerIDs() error {
	p.KafkaNextProducerID = p.Image.ProducerIDs().NextProducerID
	for t := range p.Image.Topics() {
		for i := range t.Partitions {
			dir := filepath.Join(p.LogDir, segment.TopicPartition{Topic: t.Name, Partition: int32(i)}.String())
			floor, err := snapshotFloor(dir)
			if err != nil {
				return err
			}
			p.SnapshotProducerIDFloor = max(p.SnapshotProducerIDFloor, floor)
		}
	}
	if p.SnapshotProducerIDFloor <= p.KafkaNextProducerID {
		return nil
	}
	next, err := metadata.Apply(p.Image, metadata.ProducerIdsRecord{BrokerID: p.NodeID, NextProducerID: p.SnapshotProducerIDFloor})
	if err != nil {
		return err
	}
	p.Image = next
	return nil
}

// snapshotFloor is one above the highest producer id of dir's
// .snapshot files (0 for none, or a missing dir).
func snapshotFloor(dir string) (int64, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.snapshot"))
	if err != nil {
		return 0, err
	}
	var floor int64
	for _, path := range paths {
		states, err := segment.ReadProducerSnapshot(nil, path)
		if err != nil {
			return 0, err
		}
		for _, s := range states {
			floor = max(floor, s.ProducerID+1)
		}
	}
	return floor, nil
}

// Write writes the Varve node's metadata file into the log dir. It
// refuses a plan with refusals. It writes nothing else: Kafka's files
// stay as they are.
func (p *Plan) Write() error {
	if len(p.Refusals) > 0 {
		return fmt.Errorf("%w: %s", ErrRefused, strings.Join(p.Refusals, "; "))
	}
	return cluster.WriteMetadataFile(p.LogDir, p.NodeID, p.Image)
}
