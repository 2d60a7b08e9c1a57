package scenario

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"persistlab/param"
)

// Each cell's parameters are resolved once, in order: the declared default, the scenario's value,
// the backend entry's, the sweep point's.
func TestPlanResolvesEveryCellOnce(t *testing.T) {
	s, err := Parse([]byte(`
name: p
workload: {type: counter, threads: 3, method: POST}
backends:
  - name: local
  - name: gcsfuse
    params: {path: /b}
sweep: {vus: "2,4"}
duration: 1s
repeat: 2
`), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	declared := []param.Param{{Name: "vus", Kind: param.KindInt, Default: "1", Min: 1, Max: 100}, {Name: "threads", Kind: param.KindInt, Default: "1", Min: 0, Max: 100},
		{Name: "path", Kind: param.KindString, Default: "/"}, {Name: "method", Kind: param.KindEnum, Default: "GET", Allowed: []string{"GET", "POST"}},
		{Name: "mode", Kind: param.KindEnum, Default: "closed", Allowed: []string{"closed", "open"}}}
	plan, err := NewPlan(s, Known{Workloads: map[string][]param.Param{"counter": declared}, Backends: []string{"local", "gcsfuse"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Cells) != 2*2*2 || plan.Spec != s {
		t.Fatalf("%d cells", len(plan.Cells))
	}
	for _, c := range plan.Cells {
		want := map[string]string{"vus": c.Params["vus"], "threads": "3", "path": "/", "method": "POST", "mode": "closed"}
		if c.Backend == "gcsfuse" {
			want["path"] = "/b"
		}
		if len(c.Resolved) != len(want) {
			t.Errorf("cell %d: %v, want %v", c.Index, c.Resolved, want)
		}
		for k, v := range want {
			if c.Resolved[k] != v {
				t.Errorf("cell %d (%s): %s = %q, want %q", c.Index, c.Backend, k, c.Resolved[k], v)
			}
		}
	}
	// The sweep point is the cell's own: resolving one cell changes no other.
	plan.Cells[0].Resolved["threads"] = "99"
	if plan.Cells[1].Resolved["threads"] == "99" || s.Workload.Params["threads"] == "99" {
		t.Error("cells share their resolved parameters")
	}
}

func TestPlanRefusesWhatValidateRefuses(t *testing.T) {
	s, err := Parse([]byte("name: p\nworkload: {type: counter, vus: 0}\nbackends: [{name: local}]\nduration: 1s\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(s, known)
	var fe *param.FieldError
	if plan != nil || !errors.As(err, &fe) || fe.Field != "workload.vus" {
		t.Errorf("plan %v, err %v", plan, err)
	}
}

// Each cell carries its backend entry (of several entries of one backend, its own) and its point's
// name, for the runner; a results file keeps neither, its cells say both by backend and params.
func TestPlanCellsCarryTheirEntryAndPoint(t *testing.T) {
	s, err := Load("litestream-sync-interval")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Overrides{Sweep: []string{"vus=2,4,8"}}); err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(s, known)
	if err != nil {
		t.Fatal(err)
	}
	points := map[string]bool{}
	for _, c := range plan.Cells {
		entry, _ := s.BackendByID(c.Backend)
		if c.Entry.ID() != c.Backend || c.Entry.Options["sync_interval"] != entry.Options["sync_interval"] || c.Entry.Name != "litestream" {
			t.Errorf("cell %d (%s) carries entry %+v", c.Index, c.Backend, c.Entry)
		}
		if c.PointName == "" || c.PointName != c.Point(s.Sweep) {
			t.Errorf("cell %d carries point %q, its point is %q", c.Index, c.PointName, c.Point(s.Sweep))
		}
		points[c.PointName] = true
		data, err := json.Marshal(c)
		var fields map[string]any
		if err == nil {
			err = json.Unmarshal(data, &fields)
		}
		for k := range fields {
			if !slices.Contains([]string{"index", "backend", "params", "repeat", "resolved"}, k) {
				t.Errorf("cell %d is saved with %s: %s", c.Index, k, data)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(points) != 3 {
		t.Errorf("%d point names for a sweep of 3 points: %v", len(points), points)
	}
}
