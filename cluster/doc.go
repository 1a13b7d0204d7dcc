// Package cluster is a Varve node: the Kafka APIs over the node's
// partitions, served by the network layer, plus the node's background
// work (retention, compaction, checkpoints) and its metrics.
//
// Each API lives in a file named after its key (00_produce.go,
// 01_fetch.go, ...) that opens with the versions it serves, what it does,
// and what it leaves out; api.go registers them and ApiVersions lists
// exactly what is registered. Requests are decoded and responses encoded
// with franz-go's kmsg, generated from Kafka's own message definitions,
// except the Fetch response, which is written by hand around file regions
// so that records reach the socket through sendfile.
//
// A key or version that is not served closes the connection, as Kafka's
// SocketServer does; ApiVersions at an unknown version is answered at v0
// with UNSUPPORTED_VERSION so the client can retry. A body that does not
// decode closes the connection. Nothing a client sends can make the
// broker panic or allocate beyond socket.request.max.bytes.
//
// Today a node is a single broker and its own controller: topic metadata
// (names, ids, partition counts, configuration overrides, producer-id
// blocks) is kept in varve-metadata.json in the first log dir, written
// atomically. Every partition has one replica, on this node.
//
// # Concurrency
//
// Broker.Serve is called by the network layer's handler goroutines
// (num.io.threads) concurrently. A Fetch that must wait, and an acks=all
// Produce whose high watermark lags, wait in the broker's purgatory
// (replica.Purgatory) without a goroutine: the goroutine of the event
// that satisfies one (an append, a high-watermark advance, a deletion)
// answers it, or the purgatory's reaper at its timeout. The broker's
// other goroutines: the purgatory's reaper, the listeners' accept loops, the retention
// scheduler, the log cleaner's workers, the replica manager's checkpoint
// loop, the group coordinators' timer and their loader of
// __consumer_offsets at start, and the metrics HTTP server.
package cluster
