package main

import (
	"strings"
	"testing"
)

// load --vus has the bound of the counter's vus parameter, and its error: one declaration bounds
// the flag and the scenario's parameter.
func TestLoadVUsIsBoundedAsTheParameter(t *testing.T) {
	want := `"10001" is not allowed: want a whole number from 1 to 10000 (VUs)`
	_, stderr, err := persistlab(t, "run", "cloudrun-sqlite", "--backend", "local", "--vus", "10001")
	if err == nil || !strings.Contains(stderr, "sweep.vus: "+want) {
		t.Fatalf("run --vus 10001: %v\n%s", err, stderr)
	}
	for _, vus := range []string{"10001", "2000000000"} {
		_, stderr, err := persistlab(t, "load", "--url", "http://127.0.0.1:1/", "--duration", "1s", "--vus", vus)
		if want := strings.ReplaceAll(want, "10001", vus); err == nil || !strings.Contains(stderr, "persistlab load: --vus: "+want) {
			t.Errorf("load --vus %s: %v\n%s", vus, err, stderr)
		}
	}
	if _, stderr, err := persistlab(t, "load", "--url", "http://127.0.0.1:1/", "--duration", "1s", "--rate", "1e12"); err == nil || !strings.Contains(stderr, `--rate: "1e+12" is not allowed: want a number from 0 to 1000000`) {
		t.Errorf("load --rate 1e12: %v\n%s", err, stderr)
	}
}
