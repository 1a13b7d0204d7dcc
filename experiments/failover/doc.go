// Command failover measures how long a three-node cluster stops
// acknowledging acks=all produces when a node fails, for Varve and for
// Apache Kafka run the same way beside it:
//
//	varve   three `varve server` nodes, process.roles=broker,controller,
//	        on 127.0.0.1-3 (internal/localcluster), built from this tree
//	kafka   Apache Kafka 4.x as three KRaft combined nodes on the same
//	        addresses, assembled from Maven Central (experiments/internal/kafkadist)
//
// Both run one test profile, Kafka's property names scaled down the same
// way (-session-timeout, -heartbeat-interval, -election-timeout,
// -fetch-timeout), with automatic preferred-leader rebalancing off so
// leadership moves only because of a fault. Run it from the repository
// root with `go run ./experiments/failover` (-quick: 3 trials per
// scenario instead of 20; -systems kafka for one system; -help).
//
// # The trials
//
// A topic with one partition, replication factor 3 and
// min.insync.replicas=2 takes records from one franz-go producer
// (acks=all, idempotent) that sends one 16-byte record at a time, each
// value unique, for the whole run. Before every trial the partition's
// ISR is full, every quorum voter has caught up and the producer has
// been acknowledged through a settle period. Then:
//
//	kill-leader      SIGKILL the partition leader's node. Measured: the
//	                 time to a new leader in Metadata (polled every 10 ms
//	                 on the survivors), to the first produce
//	                 acknowledged by a new leader, and to the first
//	                 record of a new leader a consumer read.
//	shutdown-leader  SIGTERM (a controlled shutdown) of the leader's
//	                 node: the same three times, and until it exited.
//	kill-controller  SIGKILL the node DescribeQuorum (API 55) names as
//	                 the metadata quorum's leader: the time until a
//	                 survivor's DescribeQuorum names another leader in a
//	                 later epoch.
//
// After each fault the node is started again on the same data. "A new
// leader acknowledged it" is decided after the run from the full read
// of the partition: the first acknowledgement after the fault of a
// record whose batch carries a partition leader epoch above the one
// before the fault (Kafka stamps each batch with the epoch of the
// leader that appended it), so an acknowledgement the old leader sent
// just before it died, or while it was still shutting down, never
// counts. A consumer assigned the partition from its end (no group)
// reads through the whole run; its first record past a fault is the
// first it received from a batch of a later leader epoch. The same
// read checks that every acknowledged record is there,
// once, at the offset it was acknowledged at.
//
// # Output
//
// results/<YYYY-MM-DD>/ (-quick: results/quick/): trials.csv (one row
// per trial), summary.csv (p50 and p99 per system, scenario and figure),
// failover.png/.svg (the distributions side by side) and summary.md.
// The write-up is papers/failover.md.
// -client-log FILE writes the producer's franz-go debug log to
// FILE.<system>, to see what the client did around a fault.
//
// # Concurrency
//
// The trials run one at a time from the main goroutine. The producer
// owns one goroutine for the whole run of a system (its acknowledgements
// are read under its mutex); a controlled shutdown's wait runs in a
// goroutine of its own until the process exits; localcluster owns one
// goroutine per child process. Every wait is bounded by -trial-timeout,
// and every node is stopped (SIGTERM, then SIGKILL) on every exit path.
package main
