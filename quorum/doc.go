// Package quorum is the cluster's controller quorum: the metadata log
// replicated by etcd raft (go.etcd.io/raft/v3) over package raftlog,
// the raft transport on the controller listener, the replay of
// committed metadata records into a metadata.Publisher, snapshots, the
// active controller (package controller) serving Kafka's controller
// APIs, a Client that reaches the active controller, and a broker's
// Lifecycle (registration, heartbeats, controlled shutdown), as
// Kafka's KRaft does with its own Raft (KIP-595, KIP-631).
//
// # A node
//
// New opens the metadata log in <metadata.log.dir>/__cluster_metadata-0
// (bootstrapping an empty one with controller.quorum.voters as raft's
// voters, on a learner too), rebuilds the image of its snapshot, and starts a RawNode
// (PreVote and CheckQuorum on; raft's 0 is "no node", so a node's raft
// id is its node.id plus one). Start serves the controller listener
// and runs the loop; Stop stops cleanly, Kill as a crash would.
//
// # The loop
//
// One goroutine owns the RawNode, the image being built and the active
// controller. For each event (a tick every TickMs, a raft message, a
// peer's delivery report, a controller request) it steps raft, then
// handles every Ready as raft's doc.go requires: the snapshot, entries
// and hard state are written to raftlog.Storage (each write durable
// before it returns), then messages are queued to the peers, then the
// committed entries are applied in order, then Advance.
//
// Each entry holds one metadata record in Kafka's framing, as KRaft's
// __cluster_metadata-0 does, so Kafka's kafka-dump-log
// --cluster-metadata-decoder reads the log (entry.go has the layout). A
// change of several records is several entries proposed together and
// framed by BeginTransactionRecord and EndTransactionRecord (KIP-868);
// the change's last entry carries its proposal id in a record header.
// Applying buffers a transaction's records until its End, then replays
// them together with metadata.Apply (an AbortTransactionRecord drops
// them), and advances the metadata offset by their count: the offset
// counts the metadata records in the log (the framing records not
// counted) and is what broker epochs and heartbeats' metadata offsets
// are measured in.
// The new image is published once per Ready, after its entries are
// committed and durable here. Every SnapshotBytes of entries or every
// SnapshotIntervalMs, the image is written as a snapshot
// (metadata.SnapshotRecords, with the metadata offset) and the log is
// compacted to it, never inside a transaction (the snapshot data keeps
// its own layout, entry.go); a node restarting behind the compaction point is
// sent the snapshot by the leader.
//
// # Learners: broker-only nodes
//
// A node not in controller.quorum.voters (process.roles=broker) is an
// etcd raft learner, as Kafka's broker-only nodes are observers of the
// log (KIP-595): it bootstraps with the same voters, so it knows it is
// not one and never campaigns; it replays the committed log into its
// image like a voter, and its broker part runs unchanged; it counts
// towards no election and no commit.
//
// Raft's transport here pushes: the leader writes to each member at an
// address it knows, and the learner answers the same way. Kafka's
// observers fetch from the leader instead and need no listener; a
// learner here needs one, varve.quorum.learner.listener (a broker-only
// node in Kafka has no controller listener, so Varve's own property
// rather than one of controller.listener.names). Its address reaches
// the voters in the broker's BrokerRegistration, as an endpoint named
// LearnerEndpoint listed after the broker's listeners: in the metadata
// image it is replicated, kept in snapshots and known to whichever
// voter leads next, with no request or record of our own. A new
// internal request would have needed the address stored in the log
// anyway, for the next leader. Every tick, the active controller
// proposes ConfChangeAddLearnerNode for each registered broker with a
// learner endpoint that raft's configuration lacks (at most once per
// election timeout, since raft drops a conf change proposed while
// another is pending), and every voter keeps a sender to each learner
// of the configuration at its registered address. The leader then
// appends to it, or sends it a snapshot; a snapshot is taken after
// every membership change, because a learner refuses a snapshot whose
// configuration does not name it. DescribeQuorum lists the learners as
// observers. Learners are never removed (an unregistered broker's
// learner stays in the configuration, unreachable, at no cost to the
// quorum).
//
// A broker-only node may be given controller.quorum.bootstrap.servers
// instead of the voters (bootstrap.go): it asks a bootstrap server
// with DescribeQuorum, whose version 2 names every voter's controller
// listener, and runs with those voters. The voters themselves need
// controller.quorum.voters: KIP-853's dynamic quorum (voters added and
// removed at run time, kraft.version 1) is not supported, and a
// controller given the bootstrap servers alone is refused
// (ErrDynamicQuorum).
//
// # The active controller
//
// When this node leads and has applied its whole log, which ends with
// an entry of its own term (the empty entry raft appends on election),
// it starts controller.New over the committed image: every entry of an
// earlier term that will ever commit has been replayed. Requests run one
// at a time on the loop: first, if the committed log ends inside a
// transaction its writer will not end, an AbortTransactionRecord is
// proposed (Kafka's rule on controller failover); then the operation
// runs on the Controller, its records are proposed as one change
// tagged with a proposal id, and the answer is sent when that change
// applies (a request with no records
// waits for the newest entry proposed before it). The requests already
// queued when the loop takes one (up to maxOpsPerReady) run before the
// next Ready, so their entries are written with one fsync and reach the
// followers together: the commit rate grows with concurrent requests.
// On leadership loss,
// a dropped proposal or a controller error the Controller is dropped,
// every waiting request is answered NOT_CONTROLLER, and a new Controller
// starts from the committed image once the log is applied again. The
// controller's Tick runs every raft tick (fencing after
// broker.session.timeout.ms, the automatic leader rebalance).
//
// The first records a new cluster's first active controller proposes
// are its bootstrap features (controller.Bootstrap: metadata.version).
// Once an entry of the active controller applies, Config.OnElections
// is told of the partition leader elections among its records, for
// Kafka's ControllerStats metrics.
//
// # The controller listener
//
// A net.GoroutineServer (inline handlers) serves, on one port: raft
// messages under RaftMessageKey (an API key Kafka does not use; no
// response), Kafka's controller APIs (one file each, named after the
// key) at every version kmsg knows, and ApiVersions. Another key or an
// undecodable request closes the connection. A node that is not the
// active controller answers NOT_CONTROLLER (DescribeQuorum:
// NOT_LEADER_OR_FOLLOWER from a node that does not lead).
//
// The listener is secured as the caller configures it: Config.TLS
// serves it over TLS, Config.Authenticate sees each request first (a
// SASL exchange before anything else), and Config.Secure makes every
// connection this node dials to another member (the raft transport's,
// the Client's) one that member admits. The quorum itself knows nothing
// of certificates or mechanisms.
//
// Each peer has one outgoing connection, dialed from the host of this
// node's listener (so that on one machine each node's links are told
// apart by address), and a bounded queue: a message that does not fit
// or cannot be written is dropped and raft is told the peer is
// unreachable; a snapshot's outcome is reported with ReportSnapshot.
//
// # Goroutines
//
//   - the loop (run): everything in loopState, the RawNode, the
//     Controller; ends at Stop or Kill, or after a storage write fails
//     (Err says why).
//   - one sender per peer (peer.run): its connection and queue; a
//     voter's senders to learners start from the loop as they join.
//   - the server's accept loop and one goroutine per connection.
//   - a Lifecycle's loop, when one is started.
//
// Node's accessors (Leader, IsActive, MetadataOffset, Publisher) are
// safe from any goroutine. A Client is safe for concurrent use, with one
// request in flight per connection.
//
// # Invariants
//
//   - Nothing is sent to a peer before the entries and hard state of
//     the same Ready are durable.
//   - Entries apply in index order, each once; the published image is
//     always that of a committed prefix of the log ending outside a
//     transaction.
//   - A request is answered success only after its entry has applied on
//     the node that answers.
//   - Only the leader of the current term proposes, and only after
//     replaying every earlier entry.
//   - A learner never campaigns or proposes and counts towards no
//     election or commit; the voters are
//     controller.quorum.voters, fixed at bootstrap.
package quorum
