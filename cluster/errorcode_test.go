package cluster

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/config"
	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
)

// Kafka: an append or flush that fails with an I/O error answers
// KAFKA_STORAGE_ERROR from the first failure, as do partitions of an
// offline log directory.
func TestStorageErrorsAnswerKafkaStorageError(t *testing.T) {
	for name, err := range map[string]error{
		"first write failure": fmt.Errorf("orders-0: %w", &segment.IOError{Op: "append", Path: "x.log", Err: fmt.Errorf("no space left on device")}),
		"failed log":          fmt.Errorf("orders-0: %w", segment.ErrLogFailed),
		"offline log dir":     fmt.Errorf("orders-0: %w", logdir.ErrOffline),
	} {
		if got := errorCode(err); got != kerr.KafkaStorageError.Code {
			t.Errorf("%s: error code %d, want KAFKA_STORAGE_ERROR (%d)", name, got, kerr.KafkaStorageError.Code)
		}
	}
}

// Kafka: OfflineLogDirectoryCount (kafka.log:type=LogManager) counts the
// log directories offline; a healthy broker reports 0.
func TestOfflineLogDirectoryCountMetric(t *testing.T) {
	cfg, err := config.Parse(map[string]string{"log.dirs": t.TempDir(), "listeners": "PLAINTEXT://127.0.0.1:0", "varve.metrics.listener": ""})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.parts.Close()
	families, err := b.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "varve_log_dirs_offline" {
			if v := f.GetMetric()[0].GetGauge().GetValue(); v != 0 {
				t.Fatalf("offline log dirs %v, want 0", v)
			}
			return
		}
	}
	t.Fatal("no varve_log_dirs_offline metric")
}
