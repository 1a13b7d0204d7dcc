package pingpong

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	MaybeServe() // the test binary is its own echo server child
	os.Exit(m.Run())
}

func TestInProcessMakesRoundTrips(t *testing.T) {
	r, err := InProcess(context.Background(), 100, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Trips) == 0 || r.PerSecond() <= 0 || r.Median() <= 0 {
		t.Fatalf("no round trips measured: %d trips, %.0f/s, median %v", len(r.Trips), r.PerSecond(), r.Median())
	}
}

func TestChildMakesRoundTrips(t *testing.T) {
	r, err := Child(context.Background(), 100, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Trips) == 0 || r.Median() <= 0 {
		t.Fatalf("no round trips measured against the child: %d trips", len(r.Trips))
	}
}

func TestRefusesEmptyMessages(t *testing.T) {
	if _, err := InProcess(context.Background(), 0, time.Millisecond); err == nil {
		t.Fatal("a 0-byte round trip measured nothing and must be refused")
	}
}

func TestMedian(t *testing.T) {
	r := Result{Trips: []time.Duration{5, 1, 3}}
	if r.Median() != 3 {
		t.Fatalf("median of 5,1,3 = %v", r.Median())
	}
	if (Result{}).Median() != 0 || (Result{}).PerSecond() != 0 {
		t.Fatal("an empty result has no median or rate")
	}
}
