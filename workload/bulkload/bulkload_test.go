package bulkload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/internal/mariadb"
	"persistlab/internal/proc"
	"persistlab/measure"
	"persistlab/scenario"
	"persistlab/workload"
)

func TestRowsAreExactAndRepeatable(t *testing.T) {
	var a, b, c bytes.Buffer
	if _, err := Rows(&a, 7, 0, 500, 1000); err != nil {
		t.Fatal(err)
	}
	Rows(&b, 7, 0, 500, 1000)
	Rows(&c, 8, 0, 500, 1000)
	if a.Len() != 500*1000 || !bytes.Equal(a.Bytes(), b.Bytes()) || bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Fatalf("500 rows of 1,000 bytes: %d bytes; same seed equal %v; other seed equal %v", a.Len(), bytes.Equal(a.Bytes(), b.Bytes()), bytes.Equal(a.Bytes(), c.Bytes()))
	}
	for i, line := range strings.Split(strings.TrimSuffix(a.String(), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 6 || len(line) != 999 || f[0] != strconv.Itoa(i+1) {
			t.Fatalf("line %d: %d fields, %d bytes, id %q", i+1, len(f), len(line), f[0])
		}
	}
	var second bytes.Buffer
	Rows(&second, 7, 500, 1, 1000)
	if !strings.HasPrefix(second.String(), "501\t") {
		t.Errorf("a second loader's rows start at %q, want id 501", second.String()[:8])
	}
	if _, err := Rows(&a, 1, 0, 1, 10); err == nil {
		t.Error("10-byte rows were accepted")
	}
}

func TestParseLoadOutput(t *testing.T) {
	r := parseLoadOutput("1000\t2\nWarning\t1261\tRow 2 doesn't contain data for all columns\nWarning\t1366\tIncorrect integer value\n")
	if r.err != nil || r.rows != 1000 || r.warnings != 2 || len(r.samples) != 2 || !strings.Contains(r.samples[0], "1261") {
		t.Errorf("%+v", r)
	}
	if r := parseLoadOutput("oops\n"); r.err == nil {
		t.Error("a line without two numbers was read")
	}
}

// start runs the workload on a local directory with a small pool and small rows.
func start(t *testing.T, fixed map[string]string) (*instance, *Workload) {
	t.Helper()
	w, err := New(scenario.Workload{Type: Name})
	if err != nil {
		t.Fatalf("MariaDB (scripts/setup installs it): %v", err)
	}
	p := workload.Resolve(Params, fixed, nil)
	if err := w.Check(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	in, err := w.Start(context.Background(), workload.Env{Target: backend.Target{Dir: t.TempDir()}, CellDir: t.TempDir(), Params: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := in.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return in.(*instance), w.(*Workload)
}

// The rates are MariaDB's own counters, differenced: summed over the run they give back the
// counters' growth; the rows are what the tables hold.
func TestLoadMetricsAreMariaDBsCounters(t *testing.T) {
	in, _ := start(t, map[string]string{"rows": "30000", "row_bytes": "300", "loaders": "2", "buffer_pool": "16MiB"})
	before, err := mariadb.Status(context.Background(), in.db)
	if err != nil {
		t.Fatal(err)
	}
	res, err := in.Drive(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	after, err := mariadb.Status(context.Background(), in.db)
	if err != nil {
		t.Fatal(err)
	}
	var count int64
	for _, table := range []string{Database + ".load_1", Database + ".load_2"} {
		var n int64
		if err := in.db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		count += n
	}
	m := res.Metrics
	if m["rows_loaded"] != 60000 || count != 60000 || m["warnings"] != 0 || len(res.Errors) != 0 {
		t.Errorf("rows loaded %v, tables hold %d, warnings %v, errors %v", m["rows_loaded"], count, m["warnings"], res.Errors)
	}
	integral := func(series string) float64 {
		var sum, prev float64
		for _, p := range res.Series[series] {
			sum += p.V * (p.T - prev)
			prev = p.T
		}
		return sum
	}
	// The samples tile the run from the baseline read at its start to the last read at its end:
	// bytes arrive only during the load, so their sum is Bytes_received's growth. InnoDB's page
	// cleaner (and ANALYZE's statistics) go on writing pages after the last read, so the pages'
	// sum is their growth up to that read (the metric pages_written), which Innodb_pages_written
	// read later can only exceed (seen: 1,153 of 1,460).
	if got, want := integral("received_mib_s"), (after["Bytes_received"]-before["Bytes_received"])/(1<<20); want <= 0 || got < 0.99*want || got > 1.01*want {
		t.Errorf("received_mib_s summed over the run: %.2f; Bytes_received grew by %.2f MiB", got, want)
	}
	pages, grew := m["pages_written"], after["Innodb_pages_written"]-before["Innodb_pages_written"]
	if got := integral("pages_written_per_s"); pages <= 0 || got < 0.99*pages || got > 1.01*pages || pages > grew {
		t.Errorf("pages_written_per_s summed over the run: %.1f; pages_written %.0f; Innodb_pages_written grew by %.0f", got, pages, grew)
	}
	if received := (after["Bytes_received"] - before["Bytes_received"]); received < 2*30000*300 {
		t.Errorf("the server received %.0f bytes for two files of %d", received, 30000*300)
	}
	if m["table_mib"] <= 0 || m["total_s"] <= 0 || len(res.Series["server_cpu_util"]) == 0 {
		t.Errorf("metrics %v", m)
	}
}

// A malformed row is never silently dropped: the load goes on (LOAD DATA LOCAL turns data errors
// into warnings) and the cell reports the warning and its text.
func TestMalformedRowIsReported(t *testing.T) {
	in, _ := start(t, map[string]string{"rows": "100", "row_bytes": "200", "buffer_pool": "16MiB"})
	f, err := os.OpenFile(in.files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("101\t7\n") // two fields of six
	f.Close()
	res, err := in.Drive(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics["warnings"] < 1 || res.Metrics["rows_loaded"] != 101 {
		t.Errorf("warnings %v, rows %v", res.Metrics["warnings"], res.Metrics["rows_loaded"])
	}
	joined := strings.Join(res.Errors, "\n")
	if !strings.Contains(joined, "1261") || !strings.Contains(joined, "loaded 101 rows of 100") {
		t.Errorf("errors: %v", res.Errors)
	}
}

// A client that fails keeps its exit status as the cause and its stderr's end in the error.
func TestFailedClientKeepsItsCause(t *testing.T) {
	in, _ := start(t, map[string]string{"rows": "100", "row_bytes": "200", "buffer_pool": "16MiB"})
	if err := os.Remove(in.files[0]); err != nil {
		t.Fatal(err)
	}
	_, err := in.Drive(context.Background(), 0)
	ce, isCommand := errors.AsType[*proc.CommandError](err)
	if _, exited := errors.AsType[*exec.ExitError](err); !isCommand || !exited || ce.Output == "" ||
		!strings.Contains(err.Error(), "loading "+filepath.Base(in.files[0])) {
		t.Errorf("a load of a missing file: %v; want the file named, the client's exit status kept and its stderr", err)
	}
}

// The steady rate of a bursty counter is its mean over the middle of the load: InnoDB flushes
// 2,000 pages one second in three, and the median second (0) would say it wrote nothing.
func TestSteadyMeanOfBurstsIsTheirAverage(t *testing.T) {
	var s []measure.Point
	for i := 1; i <= 30; i++ {
		v := 0.0
		if i%3 == 0 {
			v = 2000
		}
		if i <= 3 || i > 27 {
			v = 1e6 // start-up and the final flush: left out
		}
		s = append(s, measure.Point{T: float64(i), V: v})
	}
	if got := SteadyMean(s); got < 666 || got > 667.5 {
		t.Errorf("steady mean of 2,000 every third second: %.1f, want 666.7", got)
	}
	if SteadyMean(nil) != 0 {
		t.Errorf("no samples: want 0")
	}
}
