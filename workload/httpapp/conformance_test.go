package httpapp

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"persistlab/internal/tools"
	"persistlab/workload"
	"persistlab/workload/conformance"
)

// The http workload on a local directory with seed 000's counter in Python (examples/python-counter,
// as scenario cloudrun-sqlite-python-crash runs it): the app states what it acknowledged, so a
// kill under load is checked too; and the same app loaded by the real k6 with a script of the user's.
func TestConformance(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	counterApp := map[string]any{
		"prepare": []any{"python3", "{examples}/python-counter/app.py", "--prepare", "--db", "{dir}/counter.db"},
		"command": []any{"python3", "{examples}/python-counter/app.py", "--host", "{host}", "--port", "{port}", "--db", "{dir}/counter.db"},
	}
	t.Run("python-counter", func(t *testing.T) {
		conformance.Run(t, Name, conformance.Options{
			Sections: counterApp,
			Fixed: map[string]string{"vus": "2", "sqlite": "counter.db", "ready": "/count", "method": "POST", "path": "/count_up",
				"ack": "count", "recover": "/count"},
			Result: func(t *testing.T, res *workload.Result) {
				if m := res.Metrics; m["ok"] < 1 || m["errors"] != 0 || m["max_acked"] < m["ok"] {
					t.Errorf("ok %v, errors %v, max_acked %v", m["ok"], m["errors"], m["max_acked"])
				}
			},
		})
	})
	t.Run("k6-script", func(t *testing.T) {
		if _, err := tools.Find("k6"); err != nil {
			t.Skip(err)
		}
		script := filepath.Join(t.TempDir(), "count.js")
		if err := os.WriteFile(script, []byte("import http from 'k6/http';\n"+
			"export default function () { http.post(`${__ENV."+URLVariable+"}/count_up`); }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		conformance.Run(t, Name, conformance.Options{
			Sections: counterApp,
			Fixed:    map[string]string{"vus": "1", "ready": "/count", "k6_script": script},
			// k6 refuses a duration under 1 s, and the warm-up is half of Drive.
			Drive: 2 * time.Second,
			Result: func(t *testing.T, res *workload.Result) {
				if m := res.Metrics; m["ok"] < 1 || m["errors"] != 0 {
					t.Errorf("ok %v, errors %v", m["ok"], m["errors"])
				}
			},
		})
	})
}
