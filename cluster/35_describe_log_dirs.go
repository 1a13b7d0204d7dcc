package cluster

// DescribeLogDirs, versions 1-4 (v0 went with Kafka 4.0, KIP-896).
//
// Every configured log directory of this node, by its absolute path:
// each partition replica it holds (all of them when Topics is null, else
// the partitions named), with the size of its segments, its offset lag
// and IsFuture: a current replica's lag is max(high watermark - log end
// offset, 0), which is 0 here; a future replica (the copy of a move to
// this directory, AlterReplicaLogDirs) has IsFuture true and lags by the
// current replica's log end offset less its own (-1 while the current
// one is offline), as Kafka's ReplicaManager.getLogEndOffsetLag; v4 adds
// the volume's total and usable bytes. An offline directory answers
// KAFKA_STORAGE_ERROR with no partitions and -1 for both byte counts,
// as Kafka's ReplicaManager.describeLogDirs does. kafka-reassign-
// partitions asks every replica's broker for this before it generates
// or executes a plan.

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/segment"
)

func init() {
	register(&api{key: kmsg.DescribeLogDirs.Int16(), min: 1, max: 4, serve: serveDescribeLogDirs})
}

// unknownVolumeBytes is Kafka's DescribeLogDirsResponse.UNKNOWN_VOLUME_BYTES.
const unknownVolumeBytes = -1

func serveDescribeLogDirs(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DescribeLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if err := b.clusterAuthError(r, acl.OpDescribe); err != nil { // Kafka: no directory, the error from v3
		resp.ErrorCode = errorCode(err)
		return resp
	}
	offline := map[string]bool{}
	for _, d := range b.parts.OfflineDirs() {
		offline[absDir(d)] = true
	}
	for _, d := range b.cfg.LogDirs {
		dir := kmsg.NewDescribeLogDirsResponseDir()
		dir.Dir = absDir(d)
		dir.TotalBytes, dir.UsableBytes = unknownVolumeBytes, unknownVolumeBytes
		if offline[dir.Dir] {
			dir.ErrorCode = kerr.KafkaStorageError.Code
			resp.Dirs = append(resp.Dirs, dir)
			continue
		}
		dir.Topics = b.logDirTopics(dir.Dir, req)
		var st unix.Statfs_t
		err := unix.Statfs(dir.Dir, &st)
		if err == nil {
			dir.TotalBytes = int64(st.Blocks) * st.Bsize
			dir.UsableBytes = int64(st.Bavail) * st.Bsize
		}
		resp.Dirs = append(resp.Dirs, dir)
	}
	return resp
}

// logDirTopics are the replicas in log directory dir that req asks for,
// grouped by topic in name order, the current replica of a partition
// before its future one.
func (b *Broker) logDirTopics(dir string, req *kmsg.DescribeLogDirsRequest) []kmsg.DescribeLogDirsResponseDirTopic {
	var out []kmsg.DescribeLogDirsResponseDirTopic
	for _, r := range b.replicasIn(dir) {
		if !wantedPartition(req, r.tp.Topic, r.tp.Partition) {
			continue
		}
		if len(out) == 0 || out[len(out)-1].Topic != r.tp.Topic {
			t := kmsg.NewDescribeLogDirsResponseDirTopic()
			t.Topic = r.tp.Topic
			out = append(out, t)
		}
		rp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		rp.Partition, rp.Size, rp.OffsetLag, rp.IsFuture = r.tp.Partition, r.size, r.lag, r.future
		t := &out[len(out)-1]
		t.Partitions = append(t.Partitions, rp)
	}
	return out
}

// dirReplica is one replica DescribeLogDirs reports.
type dirReplica struct {
	tp     segment.TopicPartition
	size   int64
	lag    int64
	future bool
}

// replicasIn lists the current and future replicas in log dir dir,
// sorted by partition, current first.
func (b *Broker) replicasIn(dir string) []dirReplica {
	sizes := map[string]int64{}
	for _, l := range b.parts.Logs() {
		sizes[absDir(l.Dir())] = l.Size()
	}
	var out []dirReplica
	for _, p := range b.parts.Partitions() {
		pdir := b.parts.Dir(p.TP)
		if pdir == "" {
			continue
		}
		if pdir = absDir(pdir); filepath.Dir(pdir) == dir {
			out = append(out, dirReplica{tp: p.TP, size: sizes[pdir]})
		}
	}
	for _, f := range b.parts.LogDirs().Futures() {
		if absDir(f.LogDir) != dir {
			continue
		}
		lag := int64(-1) // Kafka's INVALID_OFFSET_LAG: no current replica online
		if p, ok := b.parts.Partition(f.TP); ok && p.Online() {
			lag = p.EndOffset() - f.EndOffset
		}
		out = append(out, dirReplica{tp: f.TP, size: f.Size, lag: lag, future: true})
	}
	slices.SortStableFunc(out, func(a, b dirReplica) int {
		if c := strings.Compare(a.tp.Topic, b.tp.Topic); c != 0 {
			return c
		}
		return int(a.tp.Partition) - int(b.tp.Partition)
	})
	return out
}

// wantedPartition says whether req (Topics null: every partition) asks
// for partition p of topic.
func wantedPartition(req *kmsg.DescribeLogDirsRequest, topic string, p int32) bool {
	if req.Topics == nil {
		return true
	}
	for _, t := range req.Topics {
		if t.Topic == topic && slices.Contains(t.Partitions, p) {
			return true
		}
	}
	return false
}

// absDir is dir made absolute and clean ("" stays as it is when the
// working directory is unknown).
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return filepath.Clean(dir)
}
