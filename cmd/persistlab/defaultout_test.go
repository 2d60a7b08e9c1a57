package main

import (
	"testing"
	"time"
)

// Without --out a run writes a new file named after its scenario and its start, so a second run
// never meets the first one's file; a name cannot leave out/ or hide the file.
func TestDefaultOutIsNewPerRun(t *testing.T) {
	at := time.Date(2026, 11, 27, 22, 18, 5, 0, time.UTC)
	for name, want := range map[string]string{
		"cloudrun-sqlite": "out/cloudrun-sqlite-20261127-221805.json",
		"../my app":       "out/_my_app-20261127-221805.json",
		"..":              "out/run-20261127-221805.json",
	} {
		if got := defaultOut(name, at); got != want {
			t.Errorf("%q: %s, want %s", name, got, want)
		}
	}
	if defaultOut("x", at) == defaultOut("x", at.Add(time.Second)) {
		t.Error("two runs a second apart share a file")
	}
}
