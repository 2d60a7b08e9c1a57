package httpapp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"persistlab/internal/proc"
	"persistlab/internal/readfile"
	"persistlab/internal/tools"
	"persistlab/measure"
	"persistlab/workload"
)

// MaxScriptBytes bounds a k6 script read.
const MaxScriptBytes = 1 << 20

// URLVariable is the environment variable a k6 script reads the app's URL from (__ENV.BASE_URL).
const URLVariable = "BASE_URL"

// offLoopback is every address but 127.0.0.0/8: k6 refuses to connect to them, so a script can
// load only the app (IPv6 is refused whole: the app's URL is IPv4).
var offLoopback = []string{"0.0.0.0/2", "64.0.0.0/3", "96.0.0.0/4", "112.0.0.0/5", "120.0.0.0/6", "124.0.0.0/7",
	"126.0.0.0/8", "128.0.0.0/1", "::/0"}

// checkScript reads the script as k6 would (a regular file, within a limit) and has k6 parse it.
func checkScript(ctx context.Context, path string) (bin string, err error) {
	if _, err := readfile.Regular(path, MaxScriptBytes); err != nil {
		return "", err
	}
	if bin, err = tools.Find("k6"); err != nil {
		return "", err
	}
	cmd := proc.Command(ctx, bin, "inspect", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("k6 inspect: %v: %s", err, lastLines(string(out), 3))
	}
	return bin, nil
}

// k6Point is what persistlab reads of a line of k6's JSON output.
type k6Point struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Value float64 `json:"value"`
		Tags  struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		} `json:"tags"`
	} `json:"data"`
}

// driveK6 runs the user's k6 script against the app for d with vus virtual users (k6's flags
// replace the script's own vus and duration), reading k6's per-request points through a FIFO as
// they come: http_req_duration of each 200 answer into the latency histogram, every other answer
// and failure counted.
func (in *instance) driveK6(ctx context.Context, d time.Duration) (*workload.Result, error) {
	fifo := filepath.Join(in.cellDir, "k6-points.fifo")
	os.Remove(fifo)
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		return nil, fmt.Errorf("k6 output: %w", err)
	}
	defer os.Remove(fifo)
	args := []string{"run", "--quiet", "--no-usage-report", "--no-color", "--no-summary",
		"--vus", strconv.Itoa(in.s.vus), "--duration", d.String(), "--out", "json=" + fifo,
		"--env", URLVariable + "=" + in.url}
	for _, cidr := range offLoopback {
		args = append(args, "--blacklist-ip", cidr)
	}
	args = append(args, in.s.k6Script)
	log, err := os.OpenFile(filepath.Join(in.cellDir, "k6.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := proc.Command(ctx, in.k6, args...)
	cmd.Stdout, cmd.Stderr = log, log
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start k6: %w", err)
	}
	proc.Started(cmd)
	// Opening a FIFO waits for the writer; k6 failing before it opens its output must not hang us.
	read := make(chan k6Tally, 1)
	go func() { read <- tallyK6(fifo) }()
	waitErr := cmd.Wait()
	var tally k6Tally
	select {
	case tally = <-read:
	case <-time.After(5 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			w.Close() // lets the reader's open return, reading nothing
		}
		tally = <-read
	}
	elapsed := time.Since(start)
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	// k6 exits 99 when a threshold of the script's own is crossed: the run still measured.
	if waitErr != nil && cmd.ProcessState.ExitCode() != 99 {
		return nil, fmt.Errorf("k6: %v; the end of %s:\n%s", waitErr, log.Name(), tailFile(log.Name(), 10))
	}
	if tally.err != nil {
		return nil, fmt.Errorf("k6 output: %w", tally.err)
	}
	out := workload.NewResult()
	out.Elapsed = elapsed
	tally.latency.Summarize(elapsed).Metrics("", out.Metrics)
	out.Histograms["latency"] = tally.latency
	out.Metrics["ok"] = float64(tally.ok)
	var errs int64
	for code, n := range tally.statuses {
		out.Counters["http_"+strconv.Itoa(code)] = n
		errs += n
	}
	out.Metrics["errors"] = float64(errs + tally.transport)
	out.Metrics["transport_errors"] = float64(tally.transport)
	out.Errors = tally.samples
	if code := cmd.ProcessState.ExitCode(); code == 99 {
		out.Facts["k6_thresholds"] = "crossed (k6 exited 99)"
	}
	return out, nil
}

// k6Tally is what k6's points added up to.
type k6Tally struct {
	latency       *measure.Recorder
	ok, transport int64
	statuses      map[int]int64
	samples       []string
	err           error
}

// tallyK6 reads k6's JSON lines from path until k6 closes it.
func tallyK6(path string) k6Tally {
	t := k6Tally{latency: measure.NewRecorder(), statuses: map[int]int64{}}
	f, err := os.Open(path)
	if err != nil {
		t.err = err
		return t
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	want := []byte(`"metric":"http_req_duration"`)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, want) {
			continue // k6 writes a dozen metrics per request; one is the request's duration
		}
		var p k6Point
		if err := json.Unmarshal(line, &p); err != nil || p.Type != "Point" {
			continue
		}
		status, _ := strconv.Atoi(p.Data.Tags.Status)
		switch {
		case status == 200:
			t.ok++
			t.latency.Record(time.Duration(p.Data.Value * float64(time.Millisecond)))
		case status == 0:
			t.transport++
			t.sample(p.Data.Tags.Error)
		default:
			t.statuses[status]++
			t.sample("HTTP " + p.Data.Tags.Status)
		}
	}
	t.err = sc.Err()
	return t
}

func (t *k6Tally) sample(s string) {
	if len(t.samples) < 5 && !strings.Contains(strings.Join(t.samples, "\x00"), s) {
		t.samples = append(t.samples, s)
	}
}
