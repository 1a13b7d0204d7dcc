// Package kafkadist is Apache Kafka for the experiments that run it
// beside Varve: it assembles a Kafka release's jars from Maven Central
// with Maven (once, into a cache directory a later run reuses), writes
// KRaft server.properties files, formats a node's storage with Kafka's
// own StorageTool, and gives the command line that starts a node with
// the JVM options Kafka's start scripts use.
//
// Nothing here starts or watches a process: each experiment runs the
// command line its own way (a single node, or a cluster whose nodes it
// kills and restarts). Every function is safe to call from any
// goroutine; Assemble must not run twice at once on one cache
// directory.
package kafkadist
