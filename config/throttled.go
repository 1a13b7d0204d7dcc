package config

import (
	"errors"
	"strconv"
	"strings"
)

// The throttled replica lists (KIP-73): leader.replication.throttled.replicas
// and follower.replication.throttled.replicas name, per topic, the
// replicas whose replication traffic the leader's or the follower's
// replication quota bounds: "*" (every replica of the topic) or
// "partition:broker" pairs separated by commas, as Kafka's
// ThrottledReplicaListValidator accepts them. Kafka's validator lets
// ids past Java's int through and fails later, applying them; Varve
// refuses them here.

// throttledReplicas is ThrottledReplicaListValidator for property name.
func throttledReplicas(name string) check {
	return func(v any) error {
		items := v.([]string)
		if len(items) == 1 && items[0] == "*" {
			return nil
		}
		for _, it := range items {
			if it == "" {
				continue // Kafka's pattern makes each pair optional
			}
			p, b, ok := strings.Cut(it, ":")
			if !ok || !isID(p) || !isID(b) {
				return errors.New(name + " must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
			}
		}
		return nil
	}
}

// isID says whether s is digits only, within an int32.
func isID(s string) bool {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 32)
	return err == nil
}

// ThrottledReplicas is Kafka's parseThrottledPartitions for this
// topic's throttled replica list name (leader.replication.throttled.replicas
// or follower.replication.throttled.replicas) on broker: all for "*",
// else the partitions listed with that broker; none when the list is
// empty or names only other brokers.
func (t Topic) ThrottledReplicas(name string, broker int32) (all bool, partitions []int32) {
	t = t.resolved()
	items := t.leaderThrottledReplicas
	if name == "follower.replication.throttled.replicas" {
		items = t.followerThrottledReplicas
	}
	if len(items) == 1 && items[0] == "*" {
		return true, nil
	}
	for _, it := range items {
		p, b, ok := strings.Cut(it, ":")
		if !ok {
			continue
		}
		pid, err1 := strconv.ParseInt(p, 10, 32)
		bid, err2 := strconv.ParseInt(b, 10, 32)
		if err1 == nil && err2 == nil && int32(bid) == broker {
			partitions = append(partitions, int32(pid))
		}
	}
	return false, partitions
}
