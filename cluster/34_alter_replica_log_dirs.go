package cluster

// AlterReplicaLogDirs, versions 1-2 (v0 went with Kafka 4.0, KIP-896).
//
// Moves this node's replicas between its log dirs (KIP-113), as Kafka's
// ReplicaManager.alterReplicaLogDirs: Alter on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED for every partition. Per partition:
//
//   - INVALID_TOPIC_EXCEPTION when <topic>-<partition>.<uniqueId>-future
//     would not fit in a file name (255 bytes);
//   - LOG_DIR_NOT_FOUND when the directory is not one of log.dirs
//     (absolute paths compared as strings, as Kafka does);
//   - KAFKA_STORAGE_ERROR when it, or any log dir, is offline (Kafka
//     makes no future log then), or the partition's own dir is;
//   - REPLICA_NOT_AVAILABLE when the node holds no replica of the
//     partition: the directory is remembered, and a replica created
//     later is created there (Kafka's preferred log dir);
//   - NONE otherwise: nothing to do when the replica is already there or
//     already moving there; a move to another dir is cancelled first;
//     else the move starts in the background (logdir.Manager.AlterLogDir:
//     a -future copy fed from the serving log, then a crash-safe swap).
//
// A partition named twice is moved to the last directory naming it,
// and answered once. DescribeLogDirs reports a move under way.
//
// The copies of all moves together read at most
// replica.alter.log.dirs.io.max.bytes.per.second (Kafka's ALTER_LOG_DIRS
// replication quota, measured over alter.log.dirs.replication.quota.window.num
// windows of .window.size.seconds); a dynamic change reaches the copies
// under way. Reads of the partition during the swap wait for it and are
// served from the moved log. The log cleaner leaves a moving partition
// alone (Kafka's abortAndPauseCleaning), and the swap carries its entry
// of cleaner-offset-checkpoint to the new dir.
//
// Not done: the controller is not told of the replica's new directory
// (Kafka 3.7+'s AssignReplicasToDirs, KIP-858; Varve's metadata carries
// no directory ids).

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/logdir"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/segment"
)

func init() {
	register(&api{key: kmsg.AlterReplicaLogDirs.Int16(), min: 1, max: 2, serve: serveAlterReplicaLogDirs})
}

// maxFileNameBytes is the longest file name Kafka allows for a future
// log's directory (KAFKA-4893).
const maxFileNameBytes = 255

// futureDirNameBytes is the length of <tp>.<32 hex>-future.
func futureDirNameBytes(tp segment.TopicPartition) int {
	return len(tp.String()) + 1 + 32 + len(logdir.FutureDirSuffix)
}

func serveAlterReplicaLogDirs(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.AlterReplicaLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	order, dirs := requestedDirs(req)
	authErr := b.clusterAuthError(r, acl.OpAlter)
	for _, tp := range order {
		code := errorCode(authErr)
		if authErr == nil {
			code = alterLogDirCode(b.alterLogDir(tp, dirs[tp]))
		}
		appendLogDirResult(resp, tp, code)
	}
	return resp
}

// requestedDirs lists the partitions of req in the order first named,
// each with the last directory naming it.
func requestedDirs(req *kmsg.AlterReplicaLogDirsRequest) ([]segment.TopicPartition, map[segment.TopicPartition]string) {
	var order []segment.TopicPartition
	dirs := map[segment.TopicPartition]string{}
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			for _, p := range t.Partitions {
				tp := segment.TopicPartition{Topic: t.Topic, Partition: p}
				if _, seen := dirs[tp]; !seen {
					order = append(order, tp)
				}
				dirs[tp] = d.Dir
			}
		}
	}
	return order, dirs
}

// alterLogDir moves tp's replica to dir.
func (b *Broker) alterLogDir(tp segment.TopicPartition, dir string) error {
	if futureDirNameBytes(tp) > maxFileNameBytes {
		return kerr.InvalidTopicException
	}
	return b.parts.LogDirs().AlterLogDir(tp, dir)
}

// alterLogDirCode is Kafka's error code for an AlterLogDir error.
func alterLogDirCode(err error) int16 {
	switch {
	case errors.Is(err, logdir.ErrLogDirNotFound):
		return kerr.LogDirNotFound.Code
	case errors.Is(err, logdir.ErrUnknownPartition):
		return kerr.ReplicaNotAvailable.Code // Kafka keeps this code for the API
	default:
		return errorCode(err) // ErrOffline: KAFKA_STORAGE_ERROR
	}
}

// appendLogDirResult adds tp's code to resp, under its topic's entry.
func appendLogDirResult(resp *kmsg.AlterReplicaLogDirsResponse, tp segment.TopicPartition, code int16) {
	i := len(resp.Topics) - 1
	for ; i >= 0 && resp.Topics[i].Topic != tp.Topic; i-- {
	}
	if i < 0 {
		t := kmsg.NewAlterReplicaLogDirsResponseTopic()
		t.Topic = tp.Topic
		resp.Topics = append(resp.Topics, t)
		i = len(resp.Topics) - 1
	}
	p := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
	p.Partition, p.ErrorCode = tp.Partition, code
	resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, p)
}
