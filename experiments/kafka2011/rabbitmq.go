package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// rabbitSys is RabbitMQ run in the foreground with every path and port of
// its own (never the system's service), and an epmd of its own.
type rabbitSys struct {
	dir     string
	url     string
	epmd    *proc
	proc    *proc
	version string
}

func (r *rabbitSys) name() string    { return sysRabbitMQ }
func (r *rabbitSys) dataDir() string { return filepath.Join(r.dir, "mnesia") }
func (r *rabbitSys) pgid() int       { return pgidOf(r.proc) }
func (r *rabbitSys) settings(e *env) string {
	return "rabbitmq-server " + r.version + " (Debian), durable classic queue, persistent messages " +
		"(delivery mode 2), publisher confirms: a confirm is sent once the message is written and fsynced " +
		"by the queue's store, which batches fsyncs over many messages"
}

// rabbitPorts are the loopback ports of one RabbitMQ node.
type rabbitPorts struct{ amqp, dist, epmd int }

// rabbitEnv is the environment that points a foreground rabbitmq-server at
// dir and ports, so it touches neither the system's node nor its files.
func rabbitEnv(dir string, p rabbitPorts) []string {
	return []string{
		"HOME=" + filepath.Join(dir, "home"), // the Erlang cookie goes here
		"RABBITMQ_NODENAME=kafka2011@localhost",
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT=" + strconv.Itoa(p.amqp),
		"RABBITMQ_DIST_PORT=" + strconv.Itoa(p.dist),
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"ERL_EPMD_PORT=" + strconv.Itoa(p.epmd),
		"RABBITMQ_MNESIA_BASE=" + filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE=" + filepath.Join(dir, "log"),
		"RABBITMQ_LOGS=-",
		"RABBITMQ_CONFIG_FILE=" + filepath.Join(dir, "rabbitmq.conf"),
		"RABBITMQ_CONF_ENV_FILE=" + filepath.Join(dir, "rabbitmq-env.conf"),
		"RABBITMQ_ENABLED_PLUGINS_FILE=" + filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_PID_FILE=" + filepath.Join(dir, "rabbitmq.pid"),
	}
}

// rabbitFiles are the files rabbitEnv names, with their contents: the AMQP
// listener on loopback only, no plugins, and an empty env file.
func rabbitFiles(p rabbitPorts) map[string]string {
	return map[string]string{
		"rabbitmq.conf":     "listeners.tcp.default = 127.0.0.1:" + strconv.Itoa(p.amqp) + "\n",
		"rabbitmq-env.conf": "",
		"enabled_plugins":   "[].\n",
	}
}

func (r *rabbitSys) start(ctx context.Context, e *env) error {
	if err := ensureInstalled(ctx, e.cfg.install, rabbitBin, epmdBin); err != nil {
		return err
	}
	r.version = debianVersion(ctx, "rabbitmq-server")
	r.dir = filepath.Join(e.tmp, "rabbitmq")
	var p rabbitPorts
	for _, port := range []*int{&p.amqp, &p.dist, &p.epmd} {
		var err error
		if *port, err = freePort(); err != nil {
			return err
		}
	}
	if err := r.writeFiles(p); err != nil {
		return err
	}
	env := rabbitEnv(r.dir, p)
	var err error
	epmd := procSpec{name: "epmd", argv: []string{epmdBin, "-address", "127.0.0.1", "-port", strconv.Itoa(p.epmd)},
		dir: r.dir, log: filepath.Join(r.dir, "epmd.out")}
	if r.epmd, err = e.procs.start(epmd); err != nil {
		return err
	}
	if err := waitReady(ctx, r.epmd, 30*time.Second, dialReady(loopback(p.epmd))); err != nil {
		return err
	}
	spec := procSpec{name: "rabbitmq-server", argv: []string{rabbitBin}, env: env, dir: r.dir,
		log: filepath.Join(r.dir, "rabbitmq.out")}
	if r.proc, err = e.procs.start(spec); err != nil {
		return err
	}
	r.url = "amqp://guest:guest@" + loopback(p.amqp) + "/"
	return waitReady(ctx, r.proc, 3*time.Minute, func(context.Context) error {
		c, err := amqp.Dial(r.url)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

func (r *rabbitSys) writeFiles(p rabbitPorts) error {
	for _, d := range []string{"home", "mnesia", "log"} {
		if err := os.MkdirAll(filepath.Join(r.dir, d), 0o755); err != nil {
			return fmt.Errorf("rabbitmq: %w", err)
		}
	}
	for name, body := range rabbitFiles(p) {
		if err := os.WriteFile(filepath.Join(r.dir, name), []byte(body), 0o644); err != nil {
			return fmt.Errorf("rabbitmq: %w", err)
		}
	}
	return nil
}

func (r *rabbitSys) tests(e *env) []testCase {
	var tc []testCase
	for _, b := range e.cfg.batches {
		tc = append(tc, testCase{client: clientRabbitMQ, test: testProduce, batch: b,
			run: func(ctx context.Context) (result, error) { return r.produce(ctx, e, b) }})
	}
	cb := e.cfg.consumeBatch()
	return append(tc, testCase{client: clientRabbitMQ, test: testConsume, batch: cb,
		run: func(ctx context.Context) (result, error) { return r.consume(ctx, e, cb) }})
}

func queueName(batch int) string { return fmt.Sprintf("kafka2011-b%d", batch) }

// channel opens a connection and a channel and declares the test's
// durable queue.
func (r *rabbitSys) channel(batch int) (*amqp.Connection, *amqp.Channel, error) {
	conn, err := amqp.Dial(r.url)
	if err != nil {
		return nil, nil, fmt.Errorf("rabbitmq dial: %w", err)
	}
	ch, err := conn.Channel()
	if err == nil {
		_, err = ch.QueueDeclare(queueName(batch), true, false, false, false, nil)
	}
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("rabbitmq queue %s: %w", queueName(batch), err)
	}
	return conn, ch, nil
}

// produce publishes batch persistent messages on a confirm channel, waits
// for their confirms, and repeats.
func (r *rabbitSys) produce(ctx context.Context, e *env, batch int) (result, error) {
	conn, ch, err := r.channel(batch)
	if err != nil {
		return result{}, err
	}
	defer conn.Close()
	if err := ch.Confirm(false); err != nil {
		return result{}, fmt.Errorf("rabbitmq confirm mode: %w", err)
	}
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, batch+1))
	msg := amqp.Publishing{DeliveryMode: amqp.Persistent, Body: kafkabench.Payload(messageSize, 1)}
	task := e.prog.Start(e.phase, e.cfg.records)
	defer task.Done()
	var hist kafkabench.Histogram
	var sent int64
	start := time.Now()
	for sent < e.cfg.records {
		n := min(int64(batch), e.cfg.records-sent)
		t0 := time.Now()
		for range n {
			if err := ch.PublishWithContext(ctx, "", queueName(batch), false, false, msg); err != nil {
				return moved(sent, sent*messageSize, start, &hist), fmt.Errorf("rabbitmq publish: %w", err)
			}
		}
		if err := waitConfirms(ctx, confirms, n); err != nil {
			return moved(sent, sent*messageSize, start, &hist), err
		}
		hist.Record(time.Since(t0))
		sent += n
		task.SetCurrent(sent)
	}
	return moved(sent, sent*messageSize, start, &hist), nil
}

// waitConfirms reads n confirmations (amqp091-go hands out one per
// message, in order, even when the broker confirms several at once).
func waitConfirms(ctx context.Context, confirms <-chan amqp.Confirmation, n int64) error {
	timer := time.NewTimer(ackWait)
	defer timer.Stop()
	for range n {
		select {
		case c, ok := <-confirms:
			if !ok {
				return fmt.Errorf("rabbitmq: channel closed while waiting for confirms")
			}
			if !c.Ack {
				return fmt.Errorf("rabbitmq: message %d nacked", c.DeliveryTag)
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return fmt.Errorf("rabbitmq: no confirm within %s", ackWait)
		}
	}
	return nil
}

// consume reads the queue with manual acknowledgements, a prefetch of two
// pulls, and one cumulative ack (multiple=true) per pullMessages.
func (r *rabbitSys) consume(ctx context.Context, e *env, batch int) (result, error) {
	conn, ch, err := r.channel(batch)
	if err != nil {
		return result{}, err
	}
	defer conn.Close()
	task := e.prog.Start(e.phase, e.cfg.records)
	defer task.Done()
	var hist kafkabench.Histogram
	var got, bytes int64
	start := time.Now()
	if err := ch.Qos(2*pullMessages, 0, false); err != nil {
		return result{}, fmt.Errorf("rabbitmq qos: %w", err)
	}
	deliveries, err := ch.ConsumeWithContext(ctx, queueName(batch), "kafka2011", false, false, false, false, nil)
	if err != nil {
		return result{}, fmt.Errorf("rabbitmq consume: %w", err)
	}
	timer := time.NewTimer(ackWait)
	defer timer.Stop()
	for got < e.cfg.records {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return moved(got, bytes, start, &hist), fmt.Errorf("rabbitmq: deliveries closed after %d", got)
			}
			got++
			bytes += int64(len(d.Body))
			if got%pullMessages == 0 || got == e.cfg.records {
				if err := d.Ack(true); err != nil {
					return moved(got, bytes, start, &hist), fmt.Errorf("rabbitmq ack: %w", err)
				}
				task.SetCurrent(got)
				timer.Reset(ackWait)
			}
		case <-ctx.Done():
			return moved(got, bytes, start, &hist), ctx.Err()
		case <-timer.C:
			return moved(got, bytes, start, &hist), fmt.Errorf("rabbitmq: no message within %s after %d", ackWait, got)
		}
	}
	return moved(got, bytes, start, &hist), nil
}

// moved is a result of n messages, bytes bytes, timed from start.
// Without latency samples the latencies are NaN (not measured).
func moved(n, bytes int64, start time.Time, h *kafkabench.Histogram) result {
	r := result{Records: n, Bytes: bytes, Seconds: time.Since(start).Seconds(), LatP50: math.NaN(), LatP99: math.NaN()}
	if h.Count() > 0 {
		lat := h.Summary()
		r.LatP50, r.LatP99 = lat.P50, lat.P99
	}
	return r
}
