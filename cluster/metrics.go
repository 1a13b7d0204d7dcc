package cluster

import (
	"context"
	"errors"
	stdnet "net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

// metrics are the broker's Prometheus metrics, served over HTTP on
// varve.metrics.listener. Names follow Kafka's MBeans where one exists
// (kafka.server:BrokerTopicMetrics MessagesInPerSec, BytesInPerSec,
// BytesOutPerSec; kafka.network:RequestMetrics; RequestChannel
// RequestQueueSize; SocketServer NetworkProcessorAvgIdlePercent;
// LogFlushStats LogFlushRateAndTimeMs).
type metrics struct {
	reg *prometheus.Registry
	messagesIn,
	bytesIn,
	bytesOut *prometheus.CounterVec
	requests *prometheus.HistogramVec
	flushes  prometheus.Histogram
	srv      *http.Server

	replicationMetrics // metrics_cluster.go
}

func newMetrics(b *Broker) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.messagesIn = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "varve_broker_messages_in_total", Help: "Records appended by producers (Kafka MessagesInPerSec).",
	}, []string{"topic"})
	m.bytesIn = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "varve_broker_bytes_in_total", Help: "Record bytes appended by producers (Kafka BytesInPerSec).",
	}, []string{"topic"})
	m.bytesOut = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "varve_broker_bytes_out_total", Help: "Record bytes sent to consumers (Kafka BytesOutPerSec).",
	}, []string{"topic"})
	m.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "varve_request_duration_seconds",
		Help:    "Time from a request's decoding to its response being handed to the network layer, per API (Kafka RequestMetrics TotalTimeMs).",
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18),
	}, []string{"api"})
	m.flushes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "varve_log_flush_duration_seconds",
		Help:    "Time of each log flush: the fsyncs of a partition's files (Kafka LogFlushRateAndTimeMs).",
		Buckets: prometheus.ExponentialBuckets(20e-6, 2, 18),
	})
	stats := func(f func(s statsView) float64) func() float64 {
		return func() float64 { return f(statsView{b}) }
	}
	m.reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	m.reg.MustRegister(clusterCollectors(b)...)
	m.reg.MustRegister(m.replicationMetrics.collectors()...)
	if !b.cfg.HasRole("broker") {
		return m // a controller-only node: no broker's metrics
	}
	m.reg.MustRegister(replicationQuotaCollectors(b)...)
	m.reg.MustRegister(m.messagesIn, m.bytesIn, m.bytesOut, m.requests, m.flushes,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "varve_request_queue_size", Help: "Requests waiting for a handler (Kafka RequestQueueSize)."},
			stats(func(s statsView) float64 { return float64(s.b.server.Stats().RequestQueueSize) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "varve_network_processor_idle_ratio", Help: "Share of time the network processors wait for events (Kafka NetworkProcessorAvgIdlePercent)."},
			stats(func(s statsView) float64 { return avgIdle(s.b.server.Stats()) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "varve_log_dirs_offline", Help: "Log directories offline after an I/O error (Kafka OfflineLogDirectoryCount)."},
			stats(func(s statsView) float64 { return float64(len(s.b.parts.OfflineDirs())) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "varve_connections", Help: "Open client connections."},
			stats(func(s statsView) float64 { return float64(s.b.server.Stats().Connections) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "varve_network_bytes_in_total", Help: "Bytes read from sockets."},
			stats(func(s statsView) float64 { return float64(s.b.server.Stats().BytesIn) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "varve_network_bytes_out_total", Help: "Bytes written to sockets, sendfile included."},
			stats(func(s statsView) float64 { return float64(s.b.server.Stats().BytesOut) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "varve_log_lost_offsets_total", Help: "Offsets below a log's recovery point found missing when its partitions were opened: acknowledged records lost (segment.RecoveryReport.LostFrom..LostTo)."},
			stats(func(s statsView) float64 { return float64(s.lostOffsets()) })),
	)
	return m
}

type statsView struct{ b *Broker }

func (s statsView) lostOffsets() (n int64) {
	if s.b.parts != nil {
		for _, p := range s.b.parts.Partitions() {
			n += p.LostOffsets()
		}
	}
	return n
}

// avgIdle averages the processors' idle ratios (1 for the
// goroutine-per-connection server, which has none).
func avgIdle(s vnet.Stats) float64 {
	if len(s.Processors) == 0 {
		return 1
	}
	var sum float64
	for _, p := range s.Processors {
		sum += p.IdleRatio()
	}
	return sum / float64(len(s.Processors))
}

func (m *metrics) observe(key int16, d time.Duration) {
	name := kmsg.NameForKey(key)
	if name == "" {
		name = strconv.Itoa(int(key))
	}
	m.requests.WithLabelValues(name).Observe(d.Seconds())
}

func (m *metrics) produced(topic string, bytes int, records int64) {
	m.messagesIn.WithLabelValues(topic).Add(float64(records))
	m.bytesIn.WithLabelValues(topic).Add(float64(bytes))
}

func (m *metrics) flushed(d time.Duration) { m.flushes.Observe(d.Seconds()) }

func (m *metrics) fetched(topic string, bytes int64) {
	m.bytesOut.WithLabelValues(topic).Add(float64(bytes))
}

// start serves /metrics on addr ("" disables it).
func (m *metrics) start(addr string) error {
	if addr == "" {
		return nil
	}
	ln, err := stdnet.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	// Go's profiler, for operators chasing where the broker's time goes
	// (go tool pprof http://ADDR/debug/pprof/profile).
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the broker goes on without metrics
		}
	}()
	return nil
}

func (m *metrics) stop() {
	if m.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		m.srv.Shutdown(ctx)
	}
}
