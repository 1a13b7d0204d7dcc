package main

import (
	"fmt"
	"strings"

	"github.com/varve/varve/experiments/internal/harness"
)

// summary is summary.md: the figures beside their models, in the
// order of the brief of the benchmark: throughput, latency, catch-up, CPU.
func (e *experiment) summary(f figures, plots []string) string {
	var b strings.Builder
	e.s.WriteHeader(&b, "Replication: three processes on loopback", "replication", nil)
	fmt.Fprintf(&b, "- Three `varve server` nodes (combined mode), each on its own loopback address; %d repetitions of each throughput and latency case, medians shown.\n\n", e.cfg.reps)
	e.s.WriteModel(&b)
	c := f.cal
	b.WriteString("## Calibration of this run (network and follower append)\n\n")
	b.WriteString("| TCP round trip, 100 B, two processes | loopback TCP copy | sendfile to a loopback socket | follower append (1 MiB fetches) | follower append, one small batch | same with fsync |\n|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %.1f µs | %.0f MB/s | %.0f MB/s | %.0f MB/s | %.1f µs | %.0f µs |\n\n",
		float64(c.RTT)/1e3, c.LoopbackBps/1e6, c.SendfileBps/1e6, c.AppendBps/1e6, float64(c.Append)/1e3, float64(c.AppendFlush)/1e3)

	fmt.Fprintf(&b, "## 1. Throughput: 1 KiB records, acks=all, %d producers, one partition\n\n", e.cfg.producers)
	b.WriteString("| RF1 | RF3 | RF3 / RF1 | model of RF3 | RF3 / model | binding term | p99 RF1 | p99 RF3 |\n|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %.1f MB/s | %.1f MB/s | **%.2f** | %.1f MB/s | %.2f | %s | %.1f ms | %.1f ms |\n\n",
		f.RF1, f.RF3, ratio(f.RF3, f.RF1), f.TputModel, ratio(f.RF3, f.TputModel), f.TputBound, f.TputP99RF1, f.TputP99RF3)
	fmt.Fprintf(&b, "Model: min(leader append rate = RF1 on the same cluster %.1f MB/s, loopback / 2 followers %.0f MB/s, follower append %.0f MB/s).\n\n",
		f.RF1, c.LoopbackBps/2e6, c.AppendBps/1e6)
	fmt.Fprintf(&b, "CPU ceiling of RF3 on this machine: %d CPUs / (leader %.4f + 2 x follower %.4f + producers %.4f CPU s/MB) = %.0f MB/s (RF3 / ceiling %.2f). ",
		c.Cores, f.CPULeader, f.CPUFollower, f.CPUClient, f.CPUCeiling, ratio(f.RF3, f.CPUCeiling))
	fmt.Fprintf(&b, "CPU-share model of the ratio: when RF1 and RF3 get the same share of a busy machine's CPUs, RF3/RF1 = CPU per MB of RF1 (leader %.4f + producers %.4f) / CPU per MB of RF3 (%.4f) = **%.2f** (measured %.2f). ",
		f.CPULeaderRF1, f.CPUClientRF1, f.CPULeader+2*f.CPUFollower+f.CPUClient, f.CPUShareRatio, ratio(f.RF3, f.RF1))
	fmt.Fprintf(&b, "TCP retransmissions after a timeout (machine-wide, median a run): %.0f during RF1, %.0f during RF3.\n\n", f.RTORetransRF1, f.RTORetransRF3)

	b.WriteString("## 2. acks=all latency, one 100-byte record at a time, one partition on three nodes\n\n")
	b.WriteString("| topic | acks=1 p50 | acks=1 p99 | acks=all p50 | acks=all p99 | model extra | model of acks=all p50 | p50 / model |\n|---|---|---|---|---|---|---|---|\n")
	for _, l := range []struct {
		name string
		f    latencyFigures
		note string
	}{{"no flush", f.Lat, "RTT + append"}, {"flush.messages=1", f.LatFlush, "RTT + append + diskmodel fsync 4 KiB"}} {
		fmt.Fprintf(&b, "| %s | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %.3f ms (%s) | %.3f ms | **%.2f** |\n", l.name,
			l.f.Acks1P50, l.f.Acks1P99, l.f.AcksAllP50, l.f.AcksAllP99, l.f.Extra, l.note, l.f.Model, ratio(l.f.AcksAllP50, l.f.Model))
	}
	fmt.Fprintf(&b, "\nWith the fetch round trip taken as a Kafka request's round trip through the broker (the acks=1 p50 without flush) instead of the bare ping-pong: model %.3f ms, p50 / model **%.2f**; with flush.messages=1 %.3f ms, **%.2f**.\n",
		f.Lat.ModelRequest, ratio(f.Lat.AcksAllP50, f.Lat.ModelRequest), f.LatFlush.ModelRequest, ratio(f.LatFlush.AcksAllP50, f.LatFlush.ModelRequest))
	fmt.Fprintf(&b, "\nModel: the acks=1 round trip measured on the same topic, plus one fetch round trip (the ping-pong, %.1f µs) and the follower's append (%.1f µs; with flush.messages=1 also diskmodel's fsync of 4 KiB, %.0f µs; the follower's append with its own fsync measured here: %.0f µs).\n\n",
		float64(c.RTT)/1e3, float64(c.Append)/1e3, float64(c.DiskFsync4K)/1e3, float64(c.AppendFlush)/1e3)

	b.WriteString("## 3. Follower catch-up\n\n")
	b.WriteString("| behind | restart until serving | rate to the ISR | sendfile limit | rate / limit | follower's serial limit | rate / that |\n|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %s | %.2f s | %.0f MB/s | %.0f MB/s | **%.2f** | %.0f MB/s | %.2f |\n\n", harness.BytesName(f.CatchUpBehind), f.CatchUpStart,
		f.CatchUp, c.SendfileBps/1e6, ratio(f.CatchUp, c.SendfileBps/1e6), f.CatchUpModel, ratio(f.CatchUp, f.CatchUpModel))
	b.WriteString("The follower's serial limit: 1 / (1 / loopback copy + 1 / follower append): its fetch loop reads each byte from the socket, then appends it, one after the other.\n\n")
	fmt.Fprintf(&b, "The rate counts from the restarted node serving again until the controller lists it in the ISR. TCP retransmissions after a timeout meanwhile (machine-wide): %.0f.\n\n", f.CatchUpRTO)
	if f.Throttle > 0 {
		b.WriteString("The same catch-up under a replication throttle (KIP-73: the topic's follower.replication.throttled.replicas `*`, the cluster default follower.replication.throttled.rate):\n\n")
		b.WriteString("| throttle | rate to the ISR | rate / throttle | unthrottled rate / throttled |\n|---|---|---|---|\n")
		fmt.Fprintf(&b, "| %.1f MB/s | %.1f MB/s | **%.2f** | %.2f |\n\n", f.Throttle, f.CatchUpThrottled, ratio(f.CatchUpThrottled, f.Throttle), ratio(f.CatchUp, f.CatchUpThrottled))
	}

	b.WriteString("## 4. CPU per replicated MB (RF3 throughput runs; /proc/<pid>/stat)\n\n")
	b.WriteString("| leader, RF3 | follower, RF3 | leader, RF1 | producers, RF3 |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %.4f CPU s/MB | %.4f CPU s/MB | %.4f CPU s/MB | %.4f CPU s/MB |\n\n", f.CPULeader, f.CPUFollower, f.CPULeaderRF1, f.CPUClient)
	if e.cfg.profile > 0 {
		fmt.Fprintf(&b, "CPU profiles of %d s during a replicated run: cpu_leader.pprof, cpu_follower.pprof (top functions in cpu_leader.txt, cpu_follower.txt).\n\n", e.cfg.profile)
	}
	harness.WritePlots(&b, plots)
	return b.String()
}
