package cluster_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// setLogger sends IncrementalAlterConfigs for BROKER_LOGGER resource 1.
func setLogger(t *testing.T, cl *kgo.Client, op kmsg.IncrementalAlterConfigOp, logger string, level *string) (error, string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "1"
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = logger, op, level
	rr.Configs = append(rr.Configs, c)
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Resources[0]
	msg := ""
	if r.ErrorMessage != nil {
		msg = *r.ErrorMessage
	}
	return kerr.ErrorForCode(r.ErrorCode), msg
}

func describeLoggers(t *testing.T, cl *kgo.Client) map[string]string {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "1"
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Resources[0].ErrorCode; c != 0 {
		t.Fatalf("describe loggers: %v", kerr.ErrorForCode(c))
	}
	out := map[string]string{}
	for _, c := range resp.Resources[0].Configs {
		out[c.Name] = *c.Value
	}
	return out
}

// Kafka: KIP-412. BROKER_LOGGER resources list a node's loggers and
// their levels, and a level set with IncrementalAlterConfigs applies at
// once: DEBUG lets the node's debug records through, WARN holds back its
// INFO ones. An unknown logger or level is INVALID_CONFIG; removing
// root's level is INVALID_REQUEST (ConfigAdminManager).
func TestBrokerLoggerLevels(t *testing.T) {
	var buf lockedBuffer
	cfg, err := config.Parse(map[string]string{"log.dirs": t.TempDir(), "listeners": "PLAINTEXT://127.0.0.1:0",
		"varve.metrics.listener": "", "num.network.threads": "2", "num.io.threads": "2"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cluster.New(cfg, slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	tb := &testBroker{Broker: b, dir: "", addr: b.Addr().String()}
	t.Cleanup(func() { tb.stop(t) })
	cl := client(t, tb.addr, kgo.DefaultProduceTopic("lg"), kgo.AllowAutoTopicCreation())
	adm := kadm.NewClient(cl)

	levels := describeLoggers(t, cl)
	if levels["root"] != "INFO" || levels["group-coordinator"] != "INFO" {
		t.Errorf("loggers %v, want root and group-coordinator at INFO", levels)
	}
	n := strings.Count(buf.String(), "dynamic broker config altered")
	mustSetBroker(t, adm, map[string]*string{"message.max.bytes": sp("100000")}, 1)
	if strings.Count(buf.String(), "dynamic broker config altered") != n+1 {
		t.Fatal("no INFO record with root at its base level")
	}
	if err, msg := setLogger(t, cl, kmsg.IncrementalAlterConfigOpSet, "group-coordinator", sp("error")); err != nil {
		t.Fatalf("set group-coordinator ERROR: %v %s", err, msg)
	}
	if err, msg := setLogger(t, cl, kmsg.IncrementalAlterConfigOpSet, "root", sp("WARN")); err != nil {
		t.Fatalf("set root WARN: %v %s", err, msg)
	}
	n = strings.Count(buf.String(), "dynamic broker config altered")
	mustSetBroker(t, adm, map[string]*string{"message.max.bytes": nil}, 1)
	if strings.Count(buf.String(), "dynamic broker config altered") != n {
		t.Error("an INFO record with root at WARN")
	}
	if got := describeLoggers(t, cl); got["root"] != "WARN" || got["group-coordinator"] != "ERROR" {
		t.Errorf("loggers described as %v, want root WARN, group-coordinator ERROR", got)
	}
	refusals := []struct {
		op          kmsg.IncrementalAlterConfigOp
		logger      string
		level       *string
		code        error
		msgContains string
	}{
		{kmsg.IncrementalAlterConfigOpSet, "no.such.logger", sp("INFO"), kerr.InvalidConfig, "Logger no.such.logger does not exist!"},
		{kmsg.IncrementalAlterConfigOpSet, "root", sp("LOUD"), kerr.InvalidConfig, "not a supported log level"},
		{kmsg.IncrementalAlterConfigOpDelete, "root", nil, kerr.InvalidRequest, "Removing the log level of the root logger is not allowed"},
		{kmsg.IncrementalAlterConfigOpAppend, "root", sp("INFO"), kerr.InvalidRequest, "APPEND operation is not allowed"},
	}
	for _, r := range refusals {
		err, msg := setLogger(t, cl, r.op, r.logger, r.level)
		if !errors.Is(err, r.code) || !strings.Contains(msg, r.msgContains) {
			t.Errorf("%v %s: %v %q, want %v %q", r.op, r.logger, err, msg, r.code, r.msgContains)
		}
	}
}
