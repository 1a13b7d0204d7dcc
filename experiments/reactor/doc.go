// Command reactor compares Varve's two network designs, the Reactor (Kafka's
// SocketServer: acceptor, epoll processors, request channel, handler
// goroutines) and a goroutine-per-connection server, behind the same
// net.Handler, on loopback.
//
//	go run ./experiments/reactor            # full run (about 20 minutes, needs an idle machine)
//	go run ./experiments/reactor -quick     # short run, results/quick/
//
// For every workload (a 100-byte request answered with 100 bytes; the same
// request answered with a 64 KiB file region sent with sendfile), every
// connection count (10, 100, 1,000, 10,000) and both designs, it starts two
// child processes of itself: a server (-role server) and a load generator
// (-role loadgen). Separate processes give each side its own descriptor
// budget (10,000 connections need 10,000 descriptors on each side) and let
// the server's CPU time (getrusage) and memory (VmRSS, Go heap and stacks) be
// measured alone. The load generator opens the connections, runs a warm-up,
// then a measured window in which every connection is a closed loop with
// one request outstanding (Kafka serves one request per connection at a
// time). It records throughput and a latency histogram (p50, p99, p99.9).
//
// The load generator is bounded in time (-warmup + -duration, plus a
// connect deadline) and in count (-max-requests), and only ever connects to
// 127.0.0.1.
//
// Outputs, under -out (default results/<YYYY-MM-DD>/, or results/quick/ with -quick):
// results.csv (one row per run), summary.md (medians over repetitions,
// machine, load average, command), and plots as PNG and SVG.
//
// Children speak to the orchestrator in lines on stdin/stdout (see
// protocol.go). Everything the experiment measures is reported as measured;
// the machine it runs on is named in the summary, with its load average,
// because other work on the machine shifts every figure.
package main
