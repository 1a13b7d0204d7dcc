// Package controller decides the cluster's metadata changes as Kafka's
// KRaft active controller does (QuorumController and its managers):
// broker registration, heartbeats and fencing, partition leader
// elections, AlterPartition, controlled shutdown, replica placement,
// preferred-leader elections and the automatic leader rebalance,
// partition reassignments, producer-id blocks, manual replica
// assignments (assignments.go), finalized features: the bootstrap
// metadata.version and UpdateFeatures (update_features.go), and ACLs
// (acls.go: CreateAcls and DeleteAcls as Kafka's AclControlManager,
// whose planning a single node's metadata file shares), and client
// quotas (client_quotas.go: AlterClientQuotas as Kafka's
// ClientQuotaControlManager, shared the same way). It is a
// deterministic state machine in the manner of etcd raft and of package
// group: no goroutines, no clock (time in ms is an argument of every
// event that depends on it), no I/O.
//
// It is top-level rather than cluster/controller (DESIGN.md's sketch) so
// that it depends on package metadata (and the leaf package acl, whose
// model the ACL operations validate with) alone: the node (cluster) drives it,
// and nothing in it knows a broker's network or logs.
//
// A Controller holds a *metadata.Image. Each operation validates against
// it and returns the KRaft-shaped records (package metadata's types) to
// commit, with the answer for the caller (errors are Kafka's, from
// kerr). The controller applies its records to its own image as it
// produces them, as Kafka's active controller replays what it writes,
// so that the next operation sees them; metadata.Apply of the same
// records over the committed image gives the same image.
//
// # The loop a caller runs
//
// On becoming the active controller (the Raft leader), with the image
// of every committed record and the log's end offset:
//
//	c := controller.New(cfg, img, endOffset, now)
//	for each event, in order:
//		resp, err := c.Register(now, req)  // or Heartbeat, AlterPartition, CreateTopics,
//		                                   // ElectLeaders, AlterPartitionReassignments,
//		                                   // AllocateProducerIds, ...
//		recs, err := c.Tick(now)           // on a timer, e.g. every broker.heartbeat.interval.ms
//		propose resp.Records (or recs) to the log as one batch;
//		answer the request once the batch is committed.
//	on losing leadership, or when a proposal fails: drop c; the next
//	active controller starts with New over the committed image.
//
// An error returned beside a response is a bug (the controller made
// records its own image refuses): the caller stops using c.
//
// # Soft state
//
// Heartbeat times, the metadata offsets brokers last reported, the
// offsets of controlled shutdowns, the placement cursor and the next
// rebalance check are not in the log. A new controller starts every
// broker's session at its own start (Kafka: heartbeat timestamps are
// not logged, so the timers start afresh) and learns the rest from the
// next heartbeats. Everything else is in the image.
//
// # Invariants
//
// The property test checks them over random events; builds with the
// invariants tag (or -race) check the first three after every
// operation (checkImage).
//
//   - A partition's leader is in its ISR, or the partition has no leader
//     (-1); every ISR member is a replica.
//   - A fenced broker leads nothing and is in no ISR, except as the last
//     member of the ISR of a partition without a leader: Kafka keeps the
//     last ISR member (KIP-841) so the partition comes back when that
//     broker does, rather than needing an unclean election.
//   - A broker in controlled shutdown leads nothing once its shutdown
//     records are produced.
//   - Leader epochs and partition epochs never decrease; the leader
//     epoch moves when, and only when, the leader changes.
//   - Producer id blocks never overlap, and a block handed out after a
//     broker registered with a producer-id floor (the highest producer
//     id its logs hold, plus one) starts at or above that floor.
//   - An unclean election (only with unclean.leader.election.enable, or
//     ElectLeaders UNCLEAN) leaves the leader alone in the ISR, its
//     recovery state RECOVERING until it reports its log recovered.
//
// Scripted scenarios under testdata/ (github.com/cockroachdb/datadriven;
// -rewrite regenerates them) print, for every event, the records
// produced, the answer and the cluster's state.
package controller
