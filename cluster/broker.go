package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	stdnet "net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/config"
	"github.com/varve/varve/logdir"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/quorum"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
)

// Broker is one Varve node: the Kafka APIs over a replica.Manager, served
// by the Reactor (or the goroutine-per-connection server).
type Broker struct {
	cfg    *config.Broker
	log    *slog.Logger
	nodeID int32
	host   string // advertised
	port   int32

	meta         *metaSource
	quota        *mutationQuota // controller mutations (KIP-599); nil: unbounded
	clientQuotas clientQuotas   // produce, fetch and request quotas (quota_enforce.go)
	// mutationQuotas are the clients' controller_mutation_rate buckets
	// (quota_mutation.go).
	mutationQuotas *clientMutationQuotas
	topicConfigs   sync.Map      // topic name -> config.Topic, see topicConfig
	dyn            brokerConfigs // dynamic broker configuration (broker_config.go)
	loggerLevels   loggerLevels  // BROKER_LOGGER levels (broker_logger.go)
	logInner       slog.Handler  // the handler New was given, under log's levels
	parts          *replica.Manager
	metrics        *metrics
	server         server
	cleaners       *cleaners
	groups         *groupCoordinator
	txns           *txnCoordinator
	purgatory      *replica.Purgatory // delayed fetches and acks=all produces
	repl           replication        // replicas.go: images applied to the replicas, fetchers' wire
	fetchSess      fetchSessions      // fetch_session.go: KIP-227's session cache
	sec            *security          // security.go: TLS and SASL per listener
	authz          *authorizer        // authorize.go: nil when authorizer.class.name is empty

	// In a cluster (controller.quorum.voters set) metadata changes go to
	// the active controller through ctrl; nil on a single node, whose
	// metadata file is its own. See controller_forward.go.
	ctrl      controllerChannel
	pids      controllerPIDs
	quorum    *quorum.Node      // this node's member of the controller quorum; nil on a single node
	lifecycle *quorum.Lifecycle // registration and heartbeats; nil on a single node

	mu       sync.Mutex
	lis      []stdnet.Listener
	stopping chan struct{}
	// stopImages ends the following of metadata images, after a
	// controlled shutdown (which needs them: its leaderships move away
	// through them) and before the replicas close.
	stopImages chan struct{}
	bg         sync.WaitGroup

	// txnProduceCheck is what transactional produces pass
	// (produce_validate.go); nil: RefuseTransactionalWithoutID.
	txnProduceCheck atomic.Pointer[TxnProduceCheck]
	// txnMarkerWritten hears of acknowledged transaction markers
	// (27_write_txn_markers.go); nil: nobody.
	txnMarkerWritten atomic.Pointer[TxnMarkerWritten]
}

// server is what the Reactor and the goroutine-per-connection server
// have in common.
type server interface {
	Serve(ln stdnet.Listener) error
	Shutdown(ctx context.Context) error
	Stats() vnet.Stats
}

// New opens a broker's data (recovering its logs) without listening yet.
func New(cfg *config.Broker, logger *slog.Logger) (*Broker, error) {
	if logger == nil {
		logger = slog.Default()
	}
	sec, err := newSecurity(cfg, logger)
	if err != nil {
		return nil, err
	}
	b := &Broker{cfg: cfg, log: logger, nodeID: int32(cfg.NodeID), stopping: make(chan struct{}), stopImages: make(chan struct{}), sec: sec}
	b.logInner = logger.Handler()
	b.log = slog.New(&levelHandler{inner: b.logInner, levels: &b.loggerLevels})
	b.authz = newAuthorizer(cfg, func() *metadata.Image { return b.meta.image() })
	if b.host, b.port, err = advertised(cfg); err != nil && cfg.HasRole("broker") {
		return nil, err
	}
	if inQuorum(cfg) {
		err = b.openQuorum()
	} else {
		b.meta, err = openMetaSource(cfg.LogDirs[0], cfg.ClusterID, b.registration(), nil)
	}
	if err != nil {
		return nil, err
	}
	// Every log dir carries Kafka's meta.properties: a directory of
	// another cluster or node stops start-up instead of being mixed in.
	for _, dir := range cfg.LogDirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if _, err := logdir.FormatOrCheck(nil, dir, b.nodeID, b.meta.image().ClusterID()); err != nil {
			return nil, err
		}
	}
	if b.controllerOnly() {
		return b.openControllerOnly()
	}
	b.quota = newMutationQuota(cfg.ControllerMutationRate, cfg.ControllerQuotaWindowNum, time.Duration(cfg.ControllerQuotaWindowSizeSeconds)*time.Second, time.Now)
	b.clientQuotas = newClientQuotas(cfg, time.Now)
	b.mutationQuotas = newClientMutationQuotas(cfg.ControllerQuotaWindowNum, time.Duration(cfg.ControllerQuotaWindowSizeSeconds)*time.Second, time.Now)
	b.metrics = newMetrics(b) // before the logs open: they report flushes to it
	b.parts, err = replica.OpenReplicated(b.replicaConfig(), b.replicationConfig())
	if err != nil {
		return nil, err
	}
	segment.CheckFileLimit(len(b.parts.Partitions()), nil, logger) // raise RLIMIT_NOFILE; say so if too low
	if b.quorum == nil {
		// A single node's metadata file and its directories agree after
		// this; in a cluster the replica manager follows the image.
		if err := b.reconcile(); err != nil {
			b.parts.Close()
			return nil, err
		}
	}
	b.groups = b.newGroupCoordinator()
	b.txns = b.newTxnCoordinator()
	if b.server, err = newServers(cfg, b, sec); err != nil {
		b.parts.Close()
		return nil, err
	}
	b.purgatory = replica.NewPurgatory(replica.PurgatoryConfig{})
	return b, nil
}

func newServer(cfg *config.Broker, h vnet.Handler) (server, error) {
	nc := netConfig(cfg)
	switch cfg.NetworkModel {
	case config.NetworkGoroutine, config.NetworkGoroutineInline:
		return vnet.NewGoroutineServer(nc, h)
	}
	return vnet.NewReactor(nc, h)
}

// advertised returns the host and port clients are told to connect to.
func advertised(cfg *config.Broker) (string, int32, error) {
	ls := cfg.AdvertisedListeners
	if len(ls) == 0 {
		ls = cfg.Listeners
	}
	ls = brokerListeners(cfg, ls)
	if len(ls) == 0 {
		return "", 0, errors.New("no listeners configured")
	}
	return ls[0].Host, int32(ls[0].Port), nil
}

// brokerListeners leaves out the controller listeners: the controller
// quorum serves those (package quorum), the broker the rest.
func brokerListeners(cfg *config.Broker, ls []config.Listener) []config.Listener {
	var out []config.Listener
	for _, l := range ls {
		if !slices.Contains(cfg.ControllerListenerNames, l.Name) {
			out = append(out, l)
		}
	}
	return out
}

// Start listens on every configured listener and serves until Shutdown.
func (b *Broker) Start() error {
	if b.controllerOnly() {
		return b.startControllerOnly()
	}
	if b.quorum != nil {
		// The controller listener first: the other voters are waiting
		// for this node to elect a controller.
		if err := b.quorum.Start(); err != nil {
			return err
		}
	}
	b.groups.start()
	b.txns.start()
	b.startReplication()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range brokerListeners(b.cfg, b.cfg.Listeners) {
		ln, err := stdnet.Listen("tcp", stdnet.JoinHostPort(l.Host, fmt.Sprint(l.Port)))
		if err != nil {
			return fmt.Errorf("listener %s: %w", l, err)
		}
		b.lis = append(b.lis, ln)
		if b.port == 0 && len(b.lis) == 1 {
			// listeners=...:0 picks a free port; advertise the one chosen.
			b.port = int32(ln.Addr().(*stdnet.TCPAddr).Port)
			if b.quorum == nil {
				if err := b.meta.register(b.registration()); err != nil {
					return err
				}
			}
		}
		b.bg.Add(1)
		go func() {
			defer b.bg.Done()
			if err := b.serveListener(l.Name, ln); err != nil && !errors.Is(err, vnet.ErrServerClosed) {
				b.log.Error("listener stopped", "addr", ln.Addr(), "err", err)
			}
		}()
		b.log.Info("listening", "listener", l.String(), "addr", ln.Addr().String())
	}
	b.metrics.start(b.cfg.MetricsListener)
	b.startCleaners()
	if b.quorum != nil {
		b.startLifecycle()
	}
	return nil
}

// Addr is the address of the first listener (useful with port 0).
func (b *Broker) Addr() stdnet.Addr {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.lis) == 0 {
		return nil
	}
	return b.lis[0].Addr()
}

// Shutdown stops accepting, lets in-flight requests finish (bounded by
// ctx), then closes the logs cleanly: flush, checkpoints, clean-shutdown
// marker.
func (b *Broker) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	select {
	case <-b.stopping:
		b.mu.Unlock()
		return nil
	default:
	}
	close(b.stopping)
	b.mu.Unlock()
	if b.controllerOnly() {
		return b.stopControllerOnly(ctx)
	}
	start := time.Now()
	b.controlledShutdown(ctx) // leaderships move to other replicas first
	close(b.stopImages)
	b.groups.shutdown() // answers parked JoinGroups, which the server would wait for
	b.purgatory.Close() // answers parked fetches and produces, likewise
	b.txns.shutdown()   // after the purgatory: marker writes parked there are answered
	err := b.server.Shutdown(ctx)
	b.bg.Wait()
	b.stopCleaners()
	b.metrics.stop()
	err = errors.Join(err, b.parts.Close())
	b.stopReplication()
	err = errors.Join(err, b.stopQuorum(ctx))
	b.log.Info("shut down", "took", time.Since(start), "err", err)
	return err
}

// Kill stops the node as abruptly as a process can be stopped from
// inside: no controlled shutdown, no goodbye to the quorum, connections
// cut, requests in flight dropped. The logs are closed (a process
// killed with SIGKILL keeps what reached the page cache, which closing
// keeps too). Tests use it for a node's sudden death; use Shutdown
// otherwise.
func (b *Broker) Kill() {
	b.mu.Lock()
	select {
	case <-b.stopping:
		b.mu.Unlock()
		return
	default:
	}
	close(b.stopping)
	close(b.stopImages)
	b.mu.Unlock()
	if b.controllerOnly() {
		b.stopControllerOnly(nil)
		return
	}
	if b.quorum != nil {
		b.quorum.Kill()
	}
	if b.lifecycle != nil {
		b.lifecycle.Stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b.groups.shutdown()
	b.purgatory.Close()
	b.txns.shutdown()
	b.server.Shutdown(ctx)
	b.bg.Wait()
	b.stopCleaners()
	b.metrics.stop()
	b.parts.Close()
	b.stopReplication()
}

// Serve implements net.Handler: decode, dispatch, encode.
func (b *Broker) Serve(r *vnet.Request, respond func(vnet.Response)) {
	if !b.sec.admit(r) { // SASL: before authentication only ApiVersions, SaslHandshake, SaslAuthenticate
		b.log.Debug("request before SASL authentication", "key", r.Key, "client", r.Conn.Remote)
		respond(vnet.Response{Close: true})
		return
	}
	a, ok := apis[r.Key]
	if !ok || r.Version < a.min || r.Version > a.max {
		if r.Key == kmsg.ApiVersions.Int16() {
			respond(bytesResponse(unsupportedApiVersions(r.Version)))
			return
		}
		// Kafka closes the connection on a key or version it does not
		// serve (InvalidRequestException in SocketServer).
		b.log.Debug("unsupported request", "key", r.Key, "version", r.Version, "client", r.ClientID)
		respond(vnet.Response{Close: true})
		return
	}
	req := kmsg.RequestForKey(r.Key)
	req.SetVersion(r.Version)
	if err := req.ReadFrom(r.Body); err != nil {
		b.log.Debug("undecodable request", "key", r.Key, "version", r.Version, "client", r.ClientID, "err", err)
		respond(vnet.Response{Close: true})
		return
	}
	// Decoded: a parked request keeps its fields, not its bytes, and the
	// memory pool gets them back once this synchronous part is done
	// (Kafka's KafkaRequestHandler releases the buffer after handle).
	defer r.ReleaseBody()
	r.Body = nil
	start := time.Now()
	wrapped := func(resp vnet.Response) {
		b.metrics.observe(r.Key, time.Since(start))
		respond(resp)
	}
	if resp := a.serve(b, r, req, wrapped); resp != nil {
		resp.SetVersion(r.Version)
		throttle := b.requestQuota(r, resp, time.Since(start))
		out := bytesResponse(resp.AppendTo(nil))
		if throttle > 0 {
			throttled(r, out, throttle, wrapped)
			return
		}
		wrapped(out)
	}
}

func bytesResponse(body []byte) vnet.Response {
	return vnet.Response{Parts: []vnet.Part{{Bytes: body}}}
}

// NodeID is node.id.
func (b *Broker) NodeID() int32 { return b.nodeID }
