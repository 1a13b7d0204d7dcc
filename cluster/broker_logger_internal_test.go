package cluster

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/varve/varve/controller"
)

// Kafka: KIP-412 levels over slog. A level set at run time lets records
// through below the handler's own level (TRACE, DEBUG) or holds them
// back above it; a component's own level beats root's; OFF drops all.
func TestLevelHandler(t *testing.T) {
	var buf bytes.Buffer
	inner := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})
	b := &Broker{nodeID: 1, logInner: inner}
	root := slog.New(&levelHandler{inner: inner, levels: &b.loggerLevels})
	comp := root.With("component", "group-coordinator")
	set := func(logger, level string) {
		t.Helper()
		op := controller.ConfigChange{Name: logger, Op: controller.ConfigSet, Value: &level}
		if err := b.alterLoggers("1", []controller.ConfigChange{op}, false); err != nil {
			t.Fatal(err)
		}
	}
	logged := func(l *slog.Logger, lv slog.Level) bool {
		buf.Reset()
		l.Log(context.Background(), lv, "x")
		return strings.Contains(buf.String(), "msg=x")
	}
	if logged(root, slog.LevelDebug) || !logged(comp, slog.LevelInfo) {
		t.Fatal("the handler's own level is not the base")
	}
	set("root", "TRACE")
	if !logged(root, slog.LevelDebug-4) || !logged(comp, slog.LevelDebug) {
		t.Error("TRACE at root does not let trace and debug records through")
	}
	set("group-coordinator", "ERROR")
	if logged(comp, slog.LevelWarn) || !logged(comp, slog.LevelError) || !logged(root, slog.LevelDebug) {
		t.Error("a component's level does not beat root's")
	}
	set("root", "OFF")
	if logged(root, slog.LevelError+8) {
		t.Error("OFF lets a record through")
	}
	del := controller.ConfigChange{Name: "group-coordinator", Op: controller.ConfigDelete}
	if err := b.alterLoggers("1", []controller.ConfigChange{del}, false); err != nil || logged(comp, slog.LevelError) {
		t.Errorf("after DELETE the component follows root (OFF): %v", err)
	}
	if err := b.alterLoggers("2", []controller.ConfigChange{del}, false); err == nil {
		t.Error("another node's logger resource accepted")
	}
}
