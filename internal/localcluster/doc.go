// Package localcluster runs a Varve cluster of N nodes on one machine,
// each a separate `varve server` process, the way an operator would run
// N machines: for `varve cluster up`, for the fault tests (package
// chaos) and for experiments.
//
// # Layout
//
// New lays the nodes out; Write writes each node's server.properties
// with Kafka's KRaft names (node.id, process.roles=broker,controller,
// listeners, advertised.listeners, controller.listener.names,
// inter.broker.listener.name, listener.security.protocol.map,
// controller.quorum.voters, log.dirs, one shared cluster.id) and
// formats its log directory with a meta.properties, as
// `kafka-storage.sh format` does; Start runs them. With
// Options.Controllers, nodes 1 to Controllers are dedicated controllers
// (process.roles=controller, the CONTROLLER listener alone, the only
// voters) and the Nodes after them broker-only nodes (process.roles=
// broker, PLAINTEXT alone, varve.quorum.learner.listener on their
// controller port).
//
// Node i (from 1) binds every listener to its own loopback address,
// 127.0.0.i, so that on one machine a node's connections are told apart
// by address and link faults can cut them by source and destination
// (Linux routes all of 127.0.0.0/8 to the loopback interface). With
// Options.SharedHost every node is on 127.0.0.1 instead, on distinct
// ports, for systems without the extra loopback addresses.
//
//	Dir/node-<i>/server.properties
//	Dir/node-<i>/data/            log.dirs, with meta.properties
//	Dir/node-<i>/server.log       the process's output, across restarts
//
// # Process control
//
// A Process is a child process signalled as a process group: Start
// (waits until it accepts connections), Stop (SIGTERM, then SIGKILL
// after StopTimeout), Kill (SIGKILL), Pause (SIGSTOP), Resume (SIGCONT),
// Restart. A Node's methods have the shapes of chaos.Node.
//
// # Concurrency
//
// A Cluster, a Node and a Process are driven from one goroutine at a
// time. Each Process owns one goroutine that waits for its child to
// exit, from Start until the exit. Cluster.Start, Stop and Kill act on
// the nodes in parallel and return once every node is done.
//
// # Invariants
//
// A node's command line, properties file, log directory and addresses
// never change after New, so a node killed and started again comes back
// with its data where its peers and clients expect it. A log directory
// formatted for one cluster.id and node.id is never formatted again for
// another.
package localcluster
