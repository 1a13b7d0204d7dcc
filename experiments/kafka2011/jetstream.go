package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// ackWait bounds the wait for one batch's acknowledgements and for one pull.
const ackWait = 30 * time.Second

// jetStreamSys is nats-server with JetStream on file storage.
type jetStreamSys struct {
	dir, store string
	url        string
	proc       *proc
	version    string
}

func (j *jetStreamSys) name() string    { return sysJetStream }
func (j *jetStreamSys) dataDir() string { return j.store }
func (j *jetStreamSys) pgid() int       { return pgidOf(j.proc) }
func (j *jetStreamSys) settings(e *env) string {
	return "nats-server " + j.version + " (Debian), JetStream file storage, one replica, default sync " +
		"(writes reach the OS at once; the file store fsyncs on its sync timer, 2 minutes by default, not per message)"
}

func (j *jetStreamSys) start(ctx context.Context, e *env) error {
	if err := ensureInstalled(ctx, e.cfg.install, natsServerBin); err != nil {
		return err
	}
	j.version = debianVersion(ctx, "nats-server")
	j.dir = filepath.Join(e.tmp, "jetstream")
	j.store = filepath.Join(j.dir, "store")
	if err := os.MkdirAll(j.store, 0o755); err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	j.url = "nats://" + loopback(port)
	argv := []string{natsServerBin, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-n", "kafka2011",
		"-js", "-sd", j.store}
	if j.proc, err = e.procs.start(procSpec{name: "nats-server", argv: argv, dir: j.dir, log: filepath.Join(j.dir, "nats.out")}); err != nil {
		return err
	}
	return waitReady(ctx, j.proc, time.Minute, func(context.Context) error {
		nc, err := nats.Connect(j.url, nats.Timeout(2*time.Second))
		if err != nil {
			return err
		}
		defer nc.Close()
		js, err := nc.JetStream()
		if err != nil {
			return err
		}
		_, err = js.AccountInfo()
		return err
	})
}

func (j *jetStreamSys) tests(e *env) []testCase {
	var tc []testCase
	for _, b := range e.cfg.batches {
		tc = append(tc, testCase{client: clientNats, test: testProduce, batch: b,
			run: func(ctx context.Context) (result, error) { return j.produce(ctx, e, b) }})
	}
	cb := e.cfg.consumeBatch()
	return append(tc, testCase{client: clientNats, test: testConsume, batch: cb,
		run: func(ctx context.Context) (result, error) { return j.consume(ctx, e, cb) }})
}

func jsNames(batch int) (stream, subject string) {
	return fmt.Sprintf("K2011_B%d", batch), fmt.Sprintf("k2011.b%d", batch)
}

// produce publishes batch messages asynchronously, waits for all their
// PubAcks, and repeats.
func (j *jetStreamSys) produce(ctx context.Context, e *env, batch int) (result, error) {
	nc, err := nats.Connect(j.url)
	if err != nil {
		return result{}, fmt.Errorf("jetstream connect: %w", err)
	}
	defer nc.Close()
	js, err := nc.JetStream(nats.PublishAsyncMaxPending(batch + 1))
	if err != nil {
		return result{}, fmt.Errorf("jetstream: %w", err)
	}
	stream, subj := jsNames(batch)
	_, err = js.AddStream(&nats.StreamConfig{Name: stream, Subjects: []string{subj}, Storage: nats.FileStorage, Replicas: 1})
	if err != nil {
		return result{}, fmt.Errorf("jetstream add stream %s: %w", stream, err)
	}
	payload := kafkabench.Payload(messageSize, 1)
	task := e.prog.Start(e.phase, e.cfg.records)
	defer task.Done()
	var hist kafkabench.Histogram
	futures := make([]nats.PubAckFuture, 0, batch)
	var sent int64
	start := time.Now()
	for sent < e.cfg.records {
		n := min(int64(batch), e.cfg.records-sent)
		t0 := time.Now()
		futures = futures[:0]
		for range n {
			f, err := js.PublishAsync(subj, payload)
			if err != nil {
				return moved(sent, sent*messageSize, start, &hist), fmt.Errorf("jetstream publish: %w", err)
			}
			futures = append(futures, f)
		}
		if err := waitPubAcks(ctx, js, futures); err != nil {
			return moved(sent, sent*messageSize, start, &hist), err
		}
		hist.Record(time.Since(t0))
		sent += n
		task.SetCurrent(sent)
	}
	return moved(sent, sent*messageSize, start, &hist), nil
}

// waitPubAcks waits until every future has its PubAck.
func waitPubAcks(ctx context.Context, js nats.JetStreamContext, futures []nats.PubAckFuture) error {
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(ackWait):
		return fmt.Errorf("jetstream: no PubAck within %s", ackWait)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("jetstream publish: %w", err)
		}
	}
	return nil
}

// consume reads the stream from its first message with a pull consumer,
// up to pullMessages per pull, acknowledging each pull's last message
// (AckAll: like committing an offset once per poll).
func (j *jetStreamSys) consume(ctx context.Context, e *env, batch int) (result, error) {
	nc, err := nats.Connect(j.url)
	if err != nil {
		return result{}, fmt.Errorf("jetstream connect: %w", err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		return result{}, fmt.Errorf("jetstream: %w", err)
	}
	stream, subj := jsNames(batch)
	task := e.prog.Start(e.phase, e.cfg.records)
	defer task.Done()
	var hist kafkabench.Histogram
	var got, bytes int64
	start := time.Now()
	sub, err := js.PullSubscribe(subj, "kafka2011", nats.BindStream(stream), nats.AckAll(), nats.DeliverAll(),
		nats.MaxAckPending(4*pullMessages))
	if err != nil {
		return result{}, fmt.Errorf("jetstream pull subscribe: %w", err)
	}
	defer sub.Unsubscribe()
	for got < e.cfg.records && ctx.Err() == nil {
		t0 := time.Now()
		msgs, err := sub.Fetch(int(min(pullMessages, e.cfg.records-got)), nats.MaxWait(ackWait))
		if err != nil && !(errors.Is(err, nats.ErrTimeout) && len(msgs) > 0) {
			return moved(got, bytes, start, &hist), fmt.Errorf("jetstream fetch after %d messages: %w", got, err)
		}
		if len(msgs) == 0 {
			return moved(got, bytes, start, &hist), fmt.Errorf("jetstream fetch after %d messages: empty pull", got)
		}
		hist.Record(time.Since(t0))
		for _, m := range msgs {
			bytes += int64(len(m.Data))
		}
		got += int64(len(msgs))
		if err := msgs[len(msgs)-1].Ack(); err != nil {
			return moved(got, bytes, start, &hist), fmt.Errorf("jetstream ack: %w", err)
		}
		task.SetCurrent(got)
	}
	return moved(got, bytes, start, &hist), ctx.Err()
}
