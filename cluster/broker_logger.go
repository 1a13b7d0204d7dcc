package cluster

import (
	"context"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
)

// BROKER_LOGGER resources (KIP-412): a node's loggers and their levels,
// described and changed at run time as Kafka's Log4jController does.
// Varve logs through log/slog; its loggers are "root" (every record)
// and one per component (the "component" attribute a part of the node
// logs with, such as group-coordinator), and Kafka's levels map onto
// slog's: TRACE below DEBUG, DEBUG, INFO, WARN, ERROR, FATAL above
// ERROR, OFF above all. A component without a level of its own follows
// root; root without one follows the handler the node was given.
//
// Changes are the node's own, not stored in the metadata, and last until
// it stops, as in Kafka.

// rootLogger is Kafka's name for the root logger.
const rootLogger = "root"

// kafkaLevels are Log4j's levels by name, as slog levels.
var kafkaLevels = map[string]slog.Level{
	"TRACE": slog.LevelDebug - 4,
	"DEBUG": slog.LevelDebug,
	"INFO":  slog.LevelInfo,
	"WARN":  slog.LevelWarn,
	"ERROR": slog.LevelError,
	"FATAL": slog.LevelError + 4,
	"OFF":   math.MaxInt32,
}

// validLevels is Kafka's list in its error message.
const validLevels = "TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF"

// loggerLevels holds the levels set at run time. Safe for concurrent
// use; read on every log call.
type loggerLevels struct {
	mu     sync.RWMutex
	names  map[string]bool   // the component loggers seen
	levels map[string]string // logger -> Kafka level set
}

func (l *loggerLevels) seen(name string) {
	l.mu.RLock()
	ok := l.names[name]
	l.mu.RUnlock()
	if ok {
		return
	}
	l.mu.Lock()
	if l.names == nil {
		l.names = map[string]bool{}
	}
	l.names[name] = true
	l.mu.Unlock()
}

// level returns the level in force for logger name, if one was set
// (its own, else root's).
func (l *loggerLevels) level(name string) (slog.Level, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if v, ok := l.levels[name]; ok {
		return kafkaLevels[v], true
	}
	if v, ok := l.levels[rootLogger]; ok {
		return kafkaLevels[v], true
	}
	return 0, false
}

// levelHandler lets a record through when its logger's level allows it;
// the handler it wraps writes it.
type levelHandler struct {
	inner  slog.Handler
	levels *loggerLevels
	name   string // the component, "" for root
}

func (h *levelHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	if min, ok := h.levels.level(h.loggerName()); ok {
		return lv >= min
	}
	return h.inner.Enabled(ctx, lv)
}

func (h *levelHandler) loggerName() string {
	if h.name == "" {
		return rootLogger
	}
	return h.name
}

func (h *levelHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.inner.Handle(ctx, r)
}

func (h *levelHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.inner = h.inner.WithAttrs(as)
	for _, a := range as {
		if a.Key == "component" {
			n.name = a.Value.String()
			h.levels.seen(n.name)
		}
	}
	return &n
}

func (h *levelHandler) WithGroup(g string) slog.Handler {
	n := *h
	n.inner = h.inner.WithGroup(g)
	return &n
}

// baseLevel is the Kafka name of the lowest level inner lets through.
func baseLevel(inner slog.Handler) string {
	for _, n := range []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"} {
		if inner.Enabled(context.Background(), kafkaLevels[n]) {
			return n
		}
	}
	return "OFF"
}

// describeLoggers answers DescribeConfigs for this node's loggers.
func (b *Broker) describeLoggers(names []string) []kmsg.DescribeConfigsResponseResourceConfig {
	l := &b.loggerLevels
	l.mu.RLock()
	all := append([]string{rootLogger}, slices.Sorted(maps.Keys(l.names))...)
	root, ok := l.levels[rootLogger]
	if !ok {
		root = baseLevel(b.logInner)
	}
	levels := maps.Clone(l.levels)
	l.mu.RUnlock()
	want := wanted(names)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, n := range all {
		if !want(n) {
			continue
		}
		v, ok := levels[n]
		if !ok {
			v = root
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = n, &v
		c.Source = kmsg.ConfigSourceDynamicBrokerLoggerConfig
		out = append(out, c)
	}
	return out
}

// alterLoggers is IncrementalAlterConfigs on a BROKER_LOGGER resource:
// SET a logger's level, DELETE it (back to root's; root's own cannot
// be removed). Errors are Kafka's (ConfigAdminManager.
// validateLogLevelConfigs): INVALID_CONFIG for an unknown logger or
// level, INVALID_REQUEST for APPEND and SUBTRACT.
func (b *Broker) alterLoggers(name string, ops []controller.ConfigChange, validateOnly bool) error {
	if name != strconv.Itoa(int(b.nodeID)) {
		return &kafkaError{kerr.InvalidRequest, "Unexpected broker id, expected " + strconv.Itoa(int(b.nodeID)) + ", but received " + name}
	}
	l := &b.loggerLevels
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, op := range ops {
		if err := checkLoggerOp(l, op); err != nil {
			return err
		}
	}
	if validateOnly {
		return nil
	}
	if l.levels == nil {
		l.levels = map[string]string{}
	}
	for _, op := range ops {
		if op.Op == controller.ConfigDelete {
			delete(l.levels, op.Name)
		} else {
			l.levels[op.Name] = strings.ToUpper(*op.Value)
		}
	}
	return nil
}

// REQUIRES l.mu held.
func checkLoggerOp(l *loggerLevels, op controller.ConfigChange) error {
	if op.Name != rootLogger && !l.names[op.Name] {
		return &kafkaError{kerr.InvalidConfig, "Logger " + op.Name + " does not exist!"}
	}
	switch op.Op {
	case controller.ConfigSet:
		if op.Value == nil {
			return &kafkaError{kerr.InvalidConfig, "Cannot set the log level of " + op.Name + " to null"}
		}
		if _, ok := kafkaLevels[strings.ToUpper(*op.Value)]; !ok {
			return &kafkaError{kerr.InvalidConfig, "Cannot set the log level of " + op.Name + " to " + *op.Value +
				" as it is not a supported log level. Valid log levels are " + validLevels}
		}
	case controller.ConfigDelete:
		if op.Name == rootLogger {
			return &kafkaError{kerr.InvalidRequest, "Removing the log level of the root logger is not allowed"}
		}
	case controller.ConfigAppend:
		return &kafkaError{kerr.InvalidRequest, "APPEND operation is not allowed for the BROKER_LOGGER resource"}
	case controller.ConfigSubtract:
		return &kafkaError{kerr.InvalidRequest, "SUBTRACT operation is not allowed for the BROKER_LOGGER resource"}
	default:
		return &kafkaError{kerr.InvalidRequest, "Unknown operation"}
	}
	return nil
}
