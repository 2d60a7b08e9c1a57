package counter

import (
	"context"
	"errors"
	"strings"
	"testing"

	"persistlab/param"
	"persistlab/scenario"
	"persistlab/workload"
)

func params(over map[string]string) workload.Params {
	return workload.Resolve(Params, nil, over)
}

func TestCheckNamesFieldValueAndAllowed(t *testing.T) {
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Check(context.Background(), params(nil)); err != nil {
		t.Fatalf("defaults rejected: %v", err)
	}
	for _, tc := range []struct {
		set          map[string]string
		field, value string
	}{
		{map[string]string{"mode": "open"}, "workload.rate", "0"},
		{map[string]string{"rate": "5"}, "workload.rate", "5"},
		{map[string]string{"mode": "burst"}, "workload.mode", "burst"},
		{map[string]string{"path": "count"}, "workload.path", "count"},
		{map[string]string{"vus": "0"}, "workload.vus", "0"},
		{map[string]string{"cpu_per_request": "2s"}, "workload.cpu_per_request", "2s"},
		{map[string]string{"timeout": "0s"}, "workload.timeout", "0s"},
	} {
		var fe *param.FieldError
		if err := w.Check(context.Background(), params(tc.set)); !errors.As(err, &fe) || fe.Field != tc.field || fe.Value != tc.value || fe.Allowed == "" {
			t.Errorf("%v: %v", tc.set, err)
		}
	}
	// Two instances split the VUs: each needs one (the runner asks before the first cell).
	var fe *param.FieldError
	sharer := w.(workload.Sharer)
	if err := sharer.CheckShare(params(map[string]string{"vus": "1"}), 2); !errors.As(err, &fe) || fe.Field != "workload.vus" || fe.Value != "1" {
		t.Errorf("1 VU for 2 instances: %v", err)
	}
	if err := sharer.CheckShare(params(map[string]string{"vus": "2"}), 2); err != nil {
		t.Errorf("2 VUs for 2 instances: %v", err)
	}
	for section, field := range map[string]any{"pragmas": []any{"wal"}, "app": map[string]any{"cpus": 1}, "pragmas ": []any{"journal_mode=a-b"}} {
		var fe *param.FieldError
		if _, err := New(scenario.Workload{Type: Name, Sections: map[string]any{strings.TrimSpace(section): field}}); !errors.As(err, &fe) {
			t.Errorf("section %s %v: %v", section, field, err)
		}
	}
	if _, err := New(scenario.Workload{Type: Name, Sections: map[string]any{"pragmas": []any{"journal_mode=DELETE"}}}); err != nil {
		t.Errorf("a good pragma: %v", err)
	}
}
