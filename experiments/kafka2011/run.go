package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// system is one broker under test.
type system interface {
	name() string
	// start brings the broker up on loopback, its data under e.tmp,
	// registering every child in e.procs.
	start(ctx context.Context, e *env) error
	dataDir() string
	pgid() int // process group of the broker, for its CPU time
	tests(e *env) []testCase
	// settings says what ran and with which durability, for the summary.
	settings(e *env) string
}

// testCase is one measured test of a system.
type testCase struct {
	client, test string
	batch        int
	topic        string // Kafka-protocol topic whose stored batches are counted, or ""
	run          func(ctx context.Context) (result, error)
}

// env is what the tests share: settings, children, output, progress.
type env struct {
	cfg     config
	procs   *procSet
	tmp     string
	libs    string // Kafka's assembled libs/ (for ProducerPerformance)
	prog    kafkabench.Progress
	phase   string // the current test's name, for the progress bar
	out     io.Writer
	results []result
	notes   []string // settings of each system, for the summary
}

// protoTests are the tests of a Kafka-protocol broker: kafkabench produce
// (acks=1, and acks=0 if asked), consume, and ProducerPerformance.
func protoTests(k *kafkaProto, e *env) []testCase {
	tc := []testCase{{client: clientKgo, test: testWarmUp, batch: 50,
		run: func(ctx context.Context) (result, error) { return result{}, k.warmUp(ctx, e) }}}
	acks := []string{"1"}
	if e.cfg.noAck {
		acks = append(acks, "0")
	}
	for _, a := range acks {
		for _, b := range e.cfg.batches {
			test := map[string]string{"1": testProduce, "0": testProduceNoAck}[a]
			tc = append(tc, testCase{client: clientKgo, test: test, batch: b, topic: topicName("kgo", test, b),
				run: func(ctx context.Context) (result, error) { return k.produce(ctx, e, b, a) }})
		}
	}
	cb := e.cfg.consumeBatch()
	tc = append(tc, testCase{client: clientKgo, test: testConsume, batch: cb,
		run: func(ctx context.Context) (result, error) { return k.consume(ctx, e, cb) }})
	if e.cfg.perfTool {
		for _, b := range e.cfg.batches {
			tc = append(tc, perfTest(k, e, b))
		}
	}
	return tc
}

func perfTest(k *kafkaProto, e *env, b int) testCase {
	topic := topicName("java", testProduce, b)
	return testCase{client: clientJava, test: testProduce, batch: b, topic: topic,
		run: func(ctx context.Context) (result, error) {
			if err := k.ensureTopic(ctx, topic); err != nil {
				return result{}, err
			}
			argv := perfArgs(e.libs, k.addr, topic, e.cfg.records, b)
			s, err := runPerf(ctx, e, argv, filepath.Join(e.tmp, strings.ReplaceAll(e.phase, " ", "-")+".log"), e.cfg.records)
			return perfResult(s, b), err
		}}
}

// runSystem starts s, runs its tests one after another and stops it. A
// failed test is recorded and the next one runs; a failed start records
// one row naming the error.
func (e *env) runSystem(ctx context.Context, s system) error {
	fmt.Fprintf(e.out, "== %s: starting\n", s.name())
	if err := s.start(ctx, e); err != nil {
		e.results = append(e.results, result{System: s.name(), Test: "start", Start: time.Now(), Err: err.Error()})
		fmt.Fprintf(e.out, "== %s: could not start: %v\n", s.name(), err)
		return err
	}
	e.notes = append(e.notes, s.name()+": "+s.settings(e))
	for _, tc := range s.tests(e) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r := e.runTest(ctx, s, tc)
		if tc.test == testWarmUp {
			if r.Err != "" {
				fmt.Fprintf(e.out, "   warm-up failed: %s\n", r.Err)
			}
			continue
		}
		e.results = append(e.results, r)
		fmt.Fprintln(e.out, describe(r))
	}
	return nil
}

// runTest measures one test: its own figures plus the broker's CPU time,
// the growth of the data directory, the stored batches and the load.
func (e *env) runTest(ctx context.Context, s system, tc testCase) result {
	e.phase = fmt.Sprintf("%s %s b%d %s", s.name(), tc.test, tc.batch, shortClient(tc.client))
	ctx, cancel := context.WithTimeout(ctx, e.cfg.testTimeout)
	defer cancel()
	diskBefore, _ := diskUsage(s.dataDir())
	cpuBefore := groupCPU(s.pgid())
	start := time.Now()
	r, err := tc.run(ctx)
	r.System, r.Client, r.Test, r.Batch, r.Start = s.name(), tc.client, tc.test, tc.batch, start
	r.BrokerCPU = groupCPU(s.pgid()) - cpuBefore
	r.Load1 = kafkabench.LoadAvg1()
	if err != nil {
		r.Err = err.Error()
	}
	if tc.topic != "" {
		e.countBatches(ctx, s, tc.topic, &r)
	}
	if tc.test != testConsume && tc.test != testWarmUp {
		if after, derr := diskUsage(s.dataDir()); derr == nil {
			r.DiskB = after - diskBefore
		}
	}
	return r
}

// countBatches reads the topic's .log files and records their batches.
// With acks=0 the client can finish before the broker has written what
// it sent, so it waits (up to settleWait) for every record to be stored.
func (e *env) countBatches(ctx context.Context, s system, topic string, r *result) {
	kp, ok := s.(interface{ proto() *kafkaProto })
	if !ok {
		return
	}
	deadline := time.Now().Add(settleWait)
	st, err := kp.proto().storedBatches(topic)
	for err == nil && st.records < r.Records && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		st, err = kp.proto().storedBatches(topic)
	}
	if err != nil {
		r.Err = errors.Join(errorOf(r.Err), fmt.Errorf("count stored batches: %w", err)).Error()
		return
	}
	r.Batches, r.Stored = st.batches, st.records
	if st.records != r.Records && r.Err == "" {
		r.Err = fmt.Sprintf("stored %d records, sent %d", st.records, r.Records)
	}
}

// settleWait bounds the wait for an acks=0 producer's records to land.
const settleWait = 30 * time.Second

func errorOf(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// describe is the line printed after each test.
func describe(r result) string {
	s := fmt.Sprintf("   %-9s %-13s b%-3d %-27s %9.0f msg/s %7.1f MiB/s  broker CPU %.1fs  load %.1f",
		r.System, r.Test, r.Batch, r.Client, r.msgsPerSec(), r.mbPerSec(), r.BrokerCPU, r.Load1)
	if r.Batches > 0 {
		s += fmt.Sprintf("  %.1f msg/batch", r.recordsPerBatch())
	}
	if r.Err != "" {
		s += "  ERROR: " + r.Err
	}
	return s
}

func shortClient(c string) string {
	switch c {
	case clientKgo:
		return "kgo"
	case clientJava:
		return "java"
	}
	return c
}

// makeTemp creates the run's temporary root outside the repository.
func makeTemp() (string, error) {
	return os.MkdirTemp("", "varve-kafka2011-")
}
