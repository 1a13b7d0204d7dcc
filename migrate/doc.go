// Package migrate adopts a stopped single-node KRaft Kafka's log
// directory (`varve migrate from-kafka`): the partitions are already in
// Kafka's format, which Varve keeps; what a Varve node lacks is what
// Kafka keeps in its metadata log, __cluster_metadata-0: topic ids,
// topic configs (a compacted topic must stay compacted), the
// producer-id blocks, SCRAM credentials and ACLs. Without them a node
// would adopt the partitions with default configs and hand out producer
// ids Kafka's producers hold.
//
// Build reads, and writes nothing:
//
//  1. meta.properties: cluster.id and node.id, which the node keeps;
//  2. the newest snapshot (<end>-<epoch>.checkpoint), then the log's
//     batches from the snapshot's end offset on, skipping control
//     batches; a torn tail of the last segment is left out, as Kafka's
//     recovery truncates it;
//  3. each record decoded by package metadata and replayed, batch by
//     batch, metadata transactions (KIP-868) applied at their end and
//     dropped at their abort; feature levels are kept aside (the node
//     runs Varve's levels); dynamic broker configs (the cluster default
//     and this node's) are carried where Varve applies them live, the
//     rest left for server.properties; records of Kafka's controllers
//     and registrations are counted and ignored;
//  4. the partition directories against the image: each partition on
//     this node only, present, with its topic's id in partition.metadata,
//     and no partition directory the image does not know;
//  5. the producer-id block raised above every producer id of the
//     partitions' .snapshot files.
//
// What it cannot carry over becomes a refusal (Plan.Refusals): replicas
// on other nodes (a cluster migration), partitions missing (several
// log.dirs), stray or -future directories, delegation tokens, configs of other resources, records it does not know, a log
// dir whose .lock Kafka holds. Write then writes nothing. Otherwise
// Write writes the node's metadata file (cluster.WriteMetadataFile)
// into the log dir and touches no file of Kafka's.
//
// The package sits above cluster (whose metadata file it writes) and
// below cmd/varve. It has no goroutines; a Plan is not safe for
// concurrent use.
package migrate
