package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"persistlab/measure"
	"persistlab/param"
	"persistlab/report"
	"persistlab/scenario"
	"persistlab/workload"
)

// fakeCounter is a workload whose every cell returns what a seed-000 counter cell holds: a latency
// histogram of about a thousand answers and the counter's metrics, at once, so that a plan of
// its cells measures what the runner itself costs per cell.
type fakeCounter struct{ latency *measure.Recorder }

func (fakeCounter) Check(context.Context, workload.Params) error { return nil }
func (fakeCounter) Versions() map[string]string                  { return nil }
func (w fakeCounter) Start(context.Context, workload.Env) (workload.Instance, error) {
	return fakeCounterInstance(w), nil
}

type fakeCounterInstance struct{ latency *measure.Recorder }

func (in fakeCounterInstance) Drive(context.Context, time.Duration) (*workload.Result, error) {
	r := workload.NewResult()
	r.Elapsed = 5 * time.Second
	r.Histograms["latency"] = in.latency
	in.latency.Summarize(r.Elapsed).Metrics("", r.Metrics)
	for k, v := range map[string]float64{"ok": 950, "errors": 0, "transport_errors": 0, "max_acked": 1118,
		"count_delta": 950, "lost_updates": 0, "app_cpu_s": 4.68, "app_cpu_util": 0.93} {
		r.Metrics[k] = v
	}
	r.Counters["http_200"] = 950
	return r, nil
}
func (fakeCounterInstance) Stop(context.Context) error { return nil }

func init() {
	latency := measure.NewRecorder()
	for i := range 950 {
		latency.Record(5*time.Millisecond + time.Duration(i*i%9000)*time.Microsecond)
	}
	workload.Register(workload.Info{
		Name:   "fakecounter",
		Params: []param.Param{{Name: "n", Kind: param.KindInt, Default: "1", Min: 0, Max: 10000}},
		New:    func(scenario.Workload) (workload.Workload, error) { return fakeCounter{latency: latency}, nil },
	})
}

// BenchmarkCellOverhead runs plans of fake counter cells (10 repeats of n/10 sweep points) with
// the derivation a real run does (report.Summarize), and reports the runner's cost per cell: a
// 10,000-cell plan should cost what a 10-cell one does.
//
//	go test ./runner -run - -bench CellOverhead -benchtime 1x
func BenchmarkCellOverhead(b *testing.B) {
	for _, cells := range []int{10, 1000, 10000} {
		b.Run("cells="+strconv.Itoa(cells), func(b *testing.B) {
			spec := &scenario.Spec{Name: "overhead", Workload: scenario.Workload{Type: "fakecounter", Params: map[string]string{}},
				Backends: []scenario.BackendSpec{{Name: "fakedisk"}}, Sweep: scenario.Sweep{{Name: "n", Text: fmt.Sprintf("1..%d", cells/10)}}, Repeat: 10}
			var spent time.Duration
			for i := 0; i < b.N; i++ {
				work := b.TempDir()
				start := time.Now()
				res, err := Run(context.Background(), spec, Options{Out: filepath.Join(work, "r.json"), WorkDir: filepath.Join(work, "scratch"), Derive: report.Summarize})
				spent += time.Since(start)
				if err != nil || len(res.Cells) != cells {
					b.Fatalf("%v; %d cells of %d", err, len(res.Cells), cells)
				}
				takeLedger() // fakedisk's
			}
			b.ReportMetric(float64(spent)/float64(time.Millisecond)/float64(b.N*cells), "ms/cell")
		})
	}
}
