package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcSettingsNow returns GOGC and the memory limit, changing neither.
func gcSettingsNow() (gc int, limit int64) {
	gc = debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)
	return gc, debug.SetMemoryLimit(-1)
}

// startHeapAt turns the collector to a memory limit of want with GOGC
// off, hands back the old settings when the live heap passes want/2 or
// when stopped, and leaves a user's GOGC=off alone.
func TestStartHeapAt(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	stop := startHeapAt(64 << 20)
	if gc, limit := gcSettingsNow(); gc != -1 || limit != 64<<20 {
		t.Errorf("during: GOGC %d, limit %d; want -1 and %d", gc, limit, 64<<20)
	}
	stop()
	stop()
	if gc, limit := gcSettingsNow(); gc != 100 || limit != math.MaxInt64 {
		t.Errorf("after stop: GOGC %d, limit %d; want 100 and no limit", gc, limit)
	}

	// A live heap past want/2 ends the adjustment at the next collection.
	stop = startHeapAt(8 << 20)
	defer stop()
	live := make([]byte, 6<<20)
	for i := range live {
		live[i] = byte(i)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		time.Sleep(time.Millisecond) // let the finalizer goroutine run
		gc, _ := gcSettingsNow()
		if gc == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC still %d after collections with a %d-byte live heap", gc, len(live))
		}
	}
	runtime.KeepAlive(live)
	if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 {
		t.Errorf("limit %d after the adjustment ended, want none", limit)
	}

	// GOGC=off is the user's: left as it is.
	debug.SetGCPercent(-1)
	startHeapAt(64 << 20)()
	if gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); gc != -1 || limit != math.MaxInt64 {
		t.Errorf("with GOGC=off: GOGC %d, limit %d; want both untouched", gc, limit)
	}
}

// Runs under way at once share one adjustment: a second startHeapAt
// changes nothing, so no stop restores a setting another run made.
func TestStartHeapAtOverlap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	stopA := startHeapAt(64 << 20)
	stopB := startHeapAt(32 << 20)
	if gc, limit := gcSettingsNow(); gc != -1 || limit != 64<<20 {
		t.Errorf("two under way: GOGC %d, limit %d; want -1 and %d", gc, limit, 64<<20)
	}
	stopA()
	stopB()
	if gc, limit := gcSettingsNow(); gc != 100 || limit != math.MaxInt64 {
		t.Errorf("after both: GOGC %d, limit %d; want 100 and no limit", gc, limit)
	}
}
