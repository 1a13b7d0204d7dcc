package main

import (
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// figures are the run's medians beside their models: what summary.md,
// the plot and the write-up report.
type figures struct {
	RF1, RF3      float64 // MB/s, median over repetitions
	TputModel     float64 // MB/s: min(RF1, loopback/2, follower append)
	TputBound     string  // which term of the minimum binds
	Lat, LatFlush latencyFigures
	CatchUp       float64 // MB/s from the follower serving again to its return to the ISR
	CatchUpBehind float64 // bytes
	CatchUpStart  float64 // seconds the restarted process took to serve
	// CatchUpModel is the follower's serial limit, MB/s: one fetch loop
	// reads each byte from its socket (a copy, at the loopback rate)
	// and then appends it (a copy into the page cache, at the follower
	// append rate), one after the other; the leader's sendfile overlaps
	// with them through the socket buffers.
	CatchUpModel float64
	// CatchUpThrottled is the same catch-up under
	// follower.replication.throttled.rate (-throttle), MB/s, and
	// Throttle that rate in MB/s; both 0 without -throttle.
	CatchUpThrottled, Throttle float64
	CPULeader                  float64 // CPU s/MB on the leader, RF3
	CPUFollower                float64 // CPU s/MB on a follower, RF3 (median over both followers)
	CPULeaderRF1               float64 // CPU s/MB on the leader, RF1
	CPUClient                  float64 // CPU s/MB of the producers, RF3
	CPUCeiling                 float64 // MB/s: the machine's cores over the CPU every process spends per MB, RF3
	CPUShareRatio              float64 // RF3/RF1 predicted when both runs get the same CPU: CPU per MB of RF1 over that of RF3, every process counted
	CPUClientRF1               float64 // CPU s/MB of the producers, RF1
	RTORetransRF3              float64 // TCP retransmissions after a timeout during an RF3 run (median)
	RTORetransRF1              float64
	CatchUpRTO                 float64 // the same during the catch-up
	TputP99RF1                 float64 // ms, acks=all with RF1
	TputP99RF3                 float64 // ms
	cal                        calibration
}

// latencyFigures is one latency case: acks=1 and acks=all medians and
// the model of acks=all.
type latencyFigures struct {
	Acks1P50, Acks1P99     float64 // ms
	AcksAllP50, AcksAllP99 float64 // ms
	Extra                  float64 // ms: the model of what acks=all adds (one round trip and the follower's append)
	Model                  float64 // ms: Acks1P50 + Extra
	// ModelRequest replaces the raw ping-pong by a Kafka request's round
	// trip through the broker (the acks=1 median without flush): the
	// follower's fetch is such a request, not a bare echo.
	ModelRequest float64
}

// Ratio is measured over model; 0 without a model.
func ratio(measured, model float64) float64 {
	if model <= 0 {
		return 0
	}
	return measured / model
}

func (s samples) median(c, variant, metric string) float64 {
	var v []float64
	for _, x := range s {
		if x.Case == c && x.Variant == variant && x.Metric == metric {
			v = append(v, x.Value)
		}
	}
	return harness.Median(v)
}

// medianPrefix is the median over every sample of case c whose variant
// is variant, whatever its metric (the per-node CPU samples of a role).
func (s samples) medianOver(c, variant string) float64 {
	var v []float64
	for _, x := range s {
		if x.Case == c && x.Variant == variant {
			v = append(v, x.Value)
		}
	}
	return harness.Median(v)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// compute derives the figures and their models from the samples.
func compute(s samples, cal calibration) figures {
	f := figures{cal: cal, RF1: s.median("throughput", "rf1", "mb_per_s"), RF3: s.median("throughput", "rf3", "mb_per_s")}
	f.TputP99RF1, f.TputP99RF3 = s.median("throughput", "rf1", "p99_ms"), s.median("throughput", "rf3", "p99_ms")
	f.TputModel, f.TputBound = f.RF1, "the leader's append rate (RF1)"
	if net := cal.LoopbackBps / 2 / 1e6; net > 0 && net < f.TputModel {
		f.TputModel, f.TputBound = net, "loopback bandwidth / 2 followers"
	}
	if app := cal.AppendBps / 1e6; app > 0 && app < f.TputModel {
		f.TputModel, f.TputBound = app, "a follower's append rate"
	}
	f.Lat = latency(s, "rf3", ms(cal.RTT)+ms(cal.Append))
	f.LatFlush = latency(s, "rf3-flush", ms(cal.RTT)+ms(cal.Append)+ms(cal.DiskFsync4K))
	f.Lat.ModelRequest = f.Lat.Acks1P50 + f.Lat.Acks1P50 + ms(cal.Append)
	f.LatFlush.ModelRequest = f.LatFlush.Acks1P50 + f.Lat.Acks1P50 + ms(cal.Append) + ms(cal.DiskFsync4K)
	f.CatchUp = s.median("catchup", "rf3", "mb_per_s")
	f.CatchUpBehind = s.median("catchup", "rf3", "bytes_behind")
	f.CatchUpStart = s.median("catchup", "rf3", "start_s")
	f.CatchUpThrottled = s.median("catchup_throttled", "rf3", "mb_per_s")
	f.Throttle = s.median("catchup_throttled", "rf3", "throttle_mb_per_s")
	if cal.LoopbackBps > 0 && cal.AppendBps > 0 {
		f.CatchUpModel = 1 / (1e6/cal.LoopbackBps + 1e6/cal.AppendBps)
	}
	f.CPULeader = s.medianOver("cpu", "rf3-leader")
	f.CPUFollower = s.medianOver("cpu", "rf3-follower")
	f.CPULeaderRF1 = s.medianOver("cpu", "rf1-leader")
	f.CPUClient = s.medianOver("cpu", "rf3-client")
	f.CPUClientRF1 = s.medianOver("cpu", "rf1-client")
	if per := f.CPULeader + 2*f.CPUFollower + f.CPUClient; per > 0 {
		f.CPUCeiling = float64(cal.Cores) / per
		f.CPUShareRatio = (f.CPULeaderRF1 + f.CPUClientRF1) / per
	}
	f.RTORetransRF3 = s.median("throughput", "rf3", "tcp_rto_retransmits")
	f.RTORetransRF1 = s.median("throughput", "rf1", "tcp_rto_retransmits")
	f.CatchUpRTO = s.median("catchup", "rf3", "tcp_rto_retransmits")
	return f
}

func latency(s samples, variant string, extra float64) latencyFigures {
	l := latencyFigures{Acks1P50: s.median("latency", variant, "acks1_p50_ms"), Acks1P99: s.median("latency", variant, "acks1_p99_ms"),
		AcksAllP50: s.median("latency", variant, "acksall_p50_ms"), AcksAllP99: s.median("latency", variant, "acksall_p99_ms"), Extra: extra}
	l.Model = l.Acks1P50 + extra
	return l
}
