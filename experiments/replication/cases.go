package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// sample is one figure measured: the CSV's row.
type sample struct {
	Case, Variant string
	Rep           int
	Metric        string
	Value         float64
	Unit          string
}

// samples collects a run's figures and prints each as it comes.
type samples []sample

func (s *samples) add(c, variant string, rep int, metric string, v float64, unit string) {
	*s = append(*s, sample{c, variant, rep, metric, v, unit})
	fmt.Printf("%-10s %-14s rep %d  %-22s %12.4g %s\n", c, variant, rep, metric, v, unit)
}

// throughputRun produces cfg.records 1 KiB records with acks=all from
// cfg.producers clients to a new one-partition topic of replication
// factor rf, and records MB/s and the CPU every node spent per MB
// produced, by its role.
func (e *experiment) throughputRun(ctx context.Context, variant string, rf int16, rep int) error {
	topic := fmt.Sprintf("tput-%s-%d", variant, rep)
	leader, followers, err := e.tb.createTopic(ctx, topic, rf, nil)
	if err != nil {
		return err
	}
	before, tcp := e.tb.cpuOf(), readTCPCounters()
	res, err := kafkabench.Produce(ctx, kafkabench.ProduceConfig{Brokers: e.tb.brokers(), Topic: topic, Records: e.cfg.records,
		RecordSize: 1024, Producers: e.cfg.producers, Producer: kafkabench.ProducerConfig{Acks: "all", Compression: "none"}})
	if err != nil {
		return err
	}
	after, retrans := e.tb.cpuOf(), readTCPCounters().sub(tcp)
	mb := float64(res.Bytes) / 1e6
	e.out.add("throughput", variant, rep, "mb_per_s", mb/res.ElapsedSec, "MB/s")
	e.out.add("throughput", variant, rep, "p99_ms", res.Latency.P99, "ms")
	e.out.add("throughput", variant, rep, "tcp_rto_retransmits", float64(retrans.Timeouts), "count")
	e.out.add("cpu", variant+"-client", rep, "client_cpu_s_per_mb", res.ProcessCPUSec/mb, "CPU s/MB")
	for id := range before {
		role := "follower"
		switch {
		case id == leader:
			role = "leader"
		case !contains(followers, id):
			role = "idle"
		}
		e.out.add("cpu", variant+"-"+role, rep, fmt.Sprintf("node%d_cpu_s_per_mb", id), (after[id]-before[id])/mb, "CPU s/MB")
	}
	return nil
}

func contains(xs []int32, x int32) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// latencyRun sends cfg.syncN records of 100 bytes one at a time (each
// waits for its acknowledgement) to a one-partition topic replicated on
// all three nodes, with acks=1 and then acks=all: the difference is what
// replication adds to one record's round trip.
func (e *experiment) latencyRun(ctx context.Context, variant string, configs map[string]string, rep int) error {
	topic := fmt.Sprintf("lat-%s-%d", variant, rep)
	if _, _, err := e.tb.createTopic(ctx, topic, 3, configs); err != nil {
		return err
	}
	for _, acks := range []string{"1", "all"} {
		tcp := readTCPCounters()
		res, err := kafkabench.Produce(ctx, kafkabench.ProduceConfig{Brokers: e.tb.brokers(), Topic: topic, Records: e.cfg.syncN,
			RecordSize: 100, Producers: 1, Sync: true, Producer: kafkabench.ProducerConfig{Acks: acks, Compression: "none"}})
		if err != nil {
			return err
		}
		e.out.add("latency", variant, rep, "acks"+acks+"_p50_ms", res.Latency.P50, "ms")
		e.out.add("latency", variant, rep, "acks"+acks+"_p99_ms", res.Latency.P99, "ms")
		e.out.add("latency", variant, rep, "acks"+acks+"_tcp_rto_retransmits", float64(readTCPCounters().sub(tcp).Timeouts), "count")
	}
	return nil
}

// catchUpRun stops a follower of a partition replicated on all three
// nodes (a controlled shutdown: it leaves the ISR at once), produces
// cfg.catchUp bytes with acks=1 to its leader, starts the follower again
// and times it until the controller has it back in the ISR. With a
// throttle, the topic's follower.replication.throttled.replicas is "*"
// and the cluster default follower.replication.throttled.rate is
// throttle (KIP-73) while the follower catches up.
func (e *experiment) catchUpRun(ctx context.Context, topic string, throttle int64) error {
	var configs map[string]string
	if throttle > 0 {
		configs = map[string]string{"follower.replication.throttled.replicas": "*"}
	}
	leader, followers, err := e.tb.createTopic(ctx, topic, 3, configs)
	if err != nil {
		return err
	}
	down := e.tb.c.Node(int(followers[len(followers)-1]))
	if err := down.Stop(); err != nil {
		return fmt.Errorf("stop %s: %w", down.Name(), err)
	}
	behind0, err := logBytes(down, topic)
	if err != nil {
		return err
	}
	var up []string
	for _, n := range e.tb.c.Nodes() {
		if n != down {
			up = append(up, n.Addr())
		}
	}
	_, err = kafkabench.Produce(ctx, kafkabench.ProduceConfig{Brokers: up, Topic: topic, Records: e.cfg.catchUp / 1024,
		RecordSize: 1024, Producers: 2, Producer: kafkabench.ProducerConfig{Acks: "1", Compression: "none"}})
	if err != nil {
		return err
	}
	leaderBytes, err := logBytes(e.tb.c.Node(int(leader)), topic)
	if err != nil {
		return err
	}
	behind := leaderBytes - behind0
	// The sendfile limit again, now: the machine's load may have changed
	// since the calibration, and the limit is the best seen.
	sf, err := best(3, func() (float64, error) { return sendfileBandwidth(ctx, e.cfg.common.Dir, 256<<20, time.Second) })
	if err != nil {
		return err
	}
	e.cal.SendfileBps = max(e.cal.SendfileBps, sf)
	e.out.add(topic, "rf3", 0, "sendfile_now_mb_per_s", sf/1e6, "MB/s")
	if err := e.setFollowerThrottle(ctx, throttle); err != nil {
		return err
	}
	tcp := readTCPCounters()
	launched := time.Now()
	if err := down.Start(); err != nil {
		return fmt.Errorf("start %s: %w", down.Name(), err)
	}
	serving := time.Now()
	back, err := e.tb.waitInISR(ctx, topic, int32(down.ID), 10*time.Minute)
	if err != nil {
		return err
	}
	if err := e.setFollowerThrottle(ctx, 0); err != nil {
		return err
	}
	took := back.Sub(serving).Seconds()
	e.out.add(topic, "rf3", 0, "bytes_behind", float64(behind), "B")
	e.out.add(topic, "rf3", 0, "tcp_rto_retransmits", float64(readTCPCounters().sub(tcp).Timeouts), "count")
	e.out.add(topic, "rf3", 0, "start_s", serving.Sub(launched).Seconds(), "s")
	e.out.add(topic, "rf3", 0, "to_isr_s", took, "s")
	e.out.add(topic, "rf3", 0, "mb_per_s", float64(behind)/1e6/took, "MB/s")
	if throttle > 0 {
		e.out.add(topic, "rf3", 0, "throttle_mb_per_s", float64(throttle)/1e6, "MB/s")
		e.out.add(topic, "rf3", 0, "rate_over_throttle", float64(behind)/took/float64(throttle), "ratio")
	}
	return nil
}

// setFollowerThrottle sets the cluster default
// follower.replication.throttled.rate to bytesPerSecond, or deletes it
// (0).
func (e *experiment) setFollowerThrottle(ctx context.Context, bytesPerSecond int64) error {
	op := kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "follower.replication.throttled.rate"}
	if bytesPerSecond > 0 {
		op = kadm.AlterConfig{Op: kadm.SetConfig, Name: op.Name, Value: kadm.StringPtr(strconv.FormatInt(bytesPerSecond, 10))}
	}
	resps, err := kadm.NewClient(e.tb.admin).AlterBrokerConfigs(ctx, []kadm.AlterConfig{op})
	if err == nil {
		err = resps[0].Err
	}
	if err != nil {
		return fmt.Errorf("set follower.replication.throttled.rate: %w", err)
	}
	return nil
}
