package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"persistlab/calibrate"
	"persistlab/lab/bucket"
	"persistlab/profile"
)

// syncBuffer is a request log the lab writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startLab(t *testing.T, m bucket.Model) (*bucket.Server, *syncBuffer) {
	t.Helper()
	log := &syncBuffer{}
	srv, err := bucket.Start(bucket.Config{Buckets: []string{"persistlab"}, Model: m, StorageRoot: t.TempDir(), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, log
}

func probeObjects(t *testing.T, srv *bucket.Server) []string {
	t.Helper()
	names, err := srv.ObjectNames("persistlab")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, "persistlab-probe-") {
			out = append(out, n)
		}
	}
	return out
}

// fakeKeyFile writes a service account key whose token endpoint is the lab's: a real RSA key,
// made here, so that the JWT exchange runs as against Google's.
func fakeKeyFile(t *testing.T, tokenURL string) (path string, secrets []string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	const keyID = "0f1e2d3c4b5a69788796a5b4c3d2e1f0deadbeef"
	data, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "probe-test", "private_key_id": keyID, "private_key": keyPEM,
		"client_email": "probe@probe-test.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenURL})
	path = filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(keyPEM, "\n")
	return path, []string{keyID, lines[1], lines[len(lines)/2], bucket.LabToken}
}

// servedTimes are the seconds the lab took over the requests of its log that match.
func servedTimes(log, method, contains string) []time.Duration {
	var out []time.Duration
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "\""+method+" ") || !strings.Contains(line, contains) {
			continue
		}
		f := strings.Fields(line)
		if s, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			out = append(out, time.Duration(s*float64(time.Second)))
		}
	}
	return out
}

// Against a lab bucket whose model is not the default, the probe recovers each figure: medians,
// bandwidth and the write limit within 15% of the model; a p99 within 15% of the p99 of what the
// lab served (a p99 of a few hundred draws is itself that uncertain: the profile says how much);
// the held-out read within 15% of its prediction. It deletes every object it wrote, and no
// credential of the key file, nor the token it was given, appears anywhere.
//
// The latencies are tens of ms so that what this loaded machine adds to a request (about 1.5 ms
// to a read, 5 to an upload, measured) stays small against them: every median is 60 ms, whose
// margin of 9 ms holds twice that (at 30 ms a busy core once added 5 ms to the read median, 17%;
// at 40 ms, with both cores busy, 6.9 ms to the write median, 17% again), each p99 in its class's
// own shape (4.5x reads', 3.75x writes', 3.7x listings'). The draws are seeded (Seed 1), so the
// sampling spread of a median of 300 (about 5%) is the same in every run.
func TestCalibrateBucketRecoversTheLabsModel(t *testing.T) {
	m := bucket.Model{Read: bucket.Latency{Median: 60 * time.Millisecond, P99: 270 * time.Millisecond},
		Write:                bucket.Latency{Median: 60 * time.Millisecond, P99: 225 * time.Millisecond},
		List:                 bucket.Latency{Median: 60 * time.Millisecond, P99: 222 * time.Millisecond},
		StreamBytesPerSecond: 30 << 20, ObjectUpdateInterval: 2 * time.Second, ObjectUpdateBurst: 3, Seed: 1}
	srv, log := startLab(t, m)
	keyFile, secrets := fakeKeyFile(t, srv.TokenURL())
	out := filepath.Join(t.TempDir(), "p.yaml")
	start := time.Now()
	stdout, stderr, err := persistlab(t, "calibrate", "bucket", "--endpoint", srv.JSONEndpoint(), "--bucket", "persistlab", "--key-file", keyFile,
		"--samples", "300", "--burst", "5s", "--out", out)
	t.Logf("probe took %s\n%s\n%s", time.Since(start), stdout, stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "persistlab calibrate bucket: ") || !strings.Contains(stdout, "total") || !strings.Contains(stdout, "credentials: the service account key in") {
		t.Errorf("no plan or credentials line first:\n%s", stdout)
	}
	p, err := profile.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	for _, s := range secrets {
		for where, text := range map[string]string{"stdout": stdout, "stderr": stderr, "profile": string(data)} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds a credential (%.12s...)", where, s)
			}
		}
	}
	if left := probeObjects(t, srv); len(left) > 0 {
		t.Errorf("left in the bucket: %v", left)
	}
	if !strings.Contains(stdout, "objects: all ") {
		t.Errorf("no word on the objects deleted:\n%s", stdout)
	}
	got := p.Options()
	within := func(option string, gotText string, want float64, of string) {
		t.Helper()
		var x float64
		if d, err := time.ParseDuration(gotText); err == nil {
			x = d.Seconds()
		} else if x, err = strconv.ParseFloat(gotText, 64); err != nil {
			t.Errorf("%s: %q", option, gotText)
			return
		}
		if math.Abs(x/want-1) > 0.15 {
			t.Errorf("%s %s: %.4g is not within 15%% of %s %.4g", option, gotText, x, of, want)
		}
	}
	within("read_median", got["read_median"], m.Read.Median.Seconds(), "the model's")
	within("write_median", got["write_median"], m.Write.Median.Seconds(), "the model's")
	within("list_median", got["list_median"], m.List.Median.Seconds(), "the model's")
	within("stream_mib_s", got["stream_mib_s"], 30, "the model's")
	within("object_update_interval", got["object_update_interval"], 2, "the model's")
	within("object_update_burst", got["object_update_burst"], 3, "the model's")
	lg := log.String()
	for option, served := range map[string][]time.Duration{
		"read_p99":  servedTimes(lg, "GET", "%2Fsmall%2F0"),
		"write_p99": servedTimes(lg, "POST", "small%2F0"),
		"list_p99":  servedTimes(lg, "GET", "prefix=persistlab-probe-"),
	} {
		if len(served) < 300 {
			t.Errorf("%s: %d requests of its class in the lab's log", option, len(served))
			continue
		}
		within(option, got[option], calibrate.Quantile(served[:300], 0.99).Seconds(), "the lab's served")
	}
	if len(p.HeldOut) != 1 || math.Abs(p.HeldOut[0].Error) > 0.15 || !strings.Contains(stdout, "held out: the 8 MiB read") {
		t.Errorf("held out %+v", p.HeldOut)
	}
}

// A probe that would cost more than --max-usd is refused before any request: the lab sees none.
func TestCalibrateBucketRefusesAboveTheCap(t *testing.T) {
	srv, log := startLab(t, bucket.NoDelayModel())
	out := filepath.Join(t.TempDir(), "p.yaml")
	stdout, stderr, err := persistlab(t, "calibrate", "bucket", "--endpoint", srv.JSONEndpoint(), "--bucket", "persistlab", "--max-usd", "0.001", "--out", out)
	if err == nil || !strings.Contains(stderr, "refused before any request") || !strings.Contains(stderr, "--max-usd") {
		t.Fatalf("err %v\n%s\n%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout, "total") {
		t.Errorf("the plan and its price were not printed:\n%s", stdout)
	}
	if a := srv.Accounting(); a.ClassA+a.ClassB+a.Free != 0 || log.String() != "" {
		t.Errorf("the lab saw requests: %+v\n%s", a, log.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a profile was written")
	}
	for _, bad := range [][]string{{"--samples", "3"}, {"--burst", "1h"}, {"--endpoint", "ftp://x"}, {"--bucket", "UPPER"}, {"--max-usd", "0"}} {
		args := append([]string{"calibrate", "bucket", "--endpoint", srv.JSONEndpoint(), "--bucket", "persistlab", "--out", out}, bad...)
		if _, stderr, err := persistlab(t, args...); err == nil || !strings.Contains(stderr, bad[0]) || !strings.Contains(stderr, "want") {
			t.Errorf("%v: %v %s", bad, err, stderr)
		}
	}
	if a := srv.Accounting(); a.ClassA+a.ClassB+a.Free != 0 {
		t.Errorf("bad flags made requests: %+v", a)
	}
}

// An interrupted probe deletes what it wrote before it exits.
func TestCalibrateBucketInterruptedDeletesItsObjects(t *testing.T) {
	srv, _ := startLab(t, bucket.DefaultModel())
	cmd := exec.Command(binary, "calibrate", "bucket", "--endpoint", srv.JSONEndpoint(), "--bucket", "persistlab", "--out", filepath.Join(t.TempDir(), "p.yaml"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for srv.Accounting().ClassA < 50 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(probeObjects(t, srv)) == 0 {
		t.Fatal("the probe wrote nothing before the interrupt")
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("exit %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if left := probeObjects(t, srv); len(left) > 0 {
		t.Errorf("left in the bucket after the interrupt: %v", left)
	}
	if !strings.Contains(stderr.String(), "objects: all ") || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// A probe killed before its cleanup leaves a record in TMPDIR; persistlab clean deletes exactly
// the objects it names, with the key file the probe used, leaves what the probe did not write
// (under its prefix or not) and keeps the record while anything is left under the prefix. A
// record another user could have written is not acted on.
func TestCleanDeletesAKilledProbesObjects(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv, _ := startLab(t, bucket.DefaultModel())
	keyFile, secrets := fakeKeyFile(t, srv.TokenURL())
	cmd := exec.Command(binary, "calibrate", "bucket", "--endpoint", srv.JSONEndpoint(), "--bucket", "persistlab", "--key-file", keyFile,
		"--out", filepath.Join(t.TempDir(), "p.yaml"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for srv.Accounting().ClassA < 50 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	// An upload in flight at the kill may still land: wait until the bucket holds still.
	written := probeObjects(t, srv)
	for still := time.Now(); time.Since(still) < 500*time.Millisecond; time.Sleep(50 * time.Millisecond) {
		if now := probeObjects(t, srv); len(now) != len(written) {
			written, still = now, time.Now()
		}
	}
	records, _ := filepath.Glob(filepath.Join(tmp, "persistlab-probe-*.json"))
	if len(written) == 0 || len(records) != 1 {
		t.Fatalf("after the kill: %d objects, records %v", len(written), records)
	}
	record, _ := os.ReadFile(records[0])
	for _, s := range secrets {
		if strings.Contains(string(record), s) {
			t.Errorf("the record holds a credential (%.12s...)", s)
		}
	}
	prefix := written[0][:strings.Index(written[0], "/")+1]
	client, err := calibrate.NewClient(&http.Client{}, srv.JSONEndpoint(), "persistlab")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{prefix + "theirs", "keep/me"} {
		if _, err := client.Put(ctx, name, []byte("not the probe's")); err != nil {
			t.Fatal(err)
		}
	}
	untrusted := filepath.Join(tmp, "persistlab-probe-0123456789ab.json")
	forged, _ := json.Marshal(calibrate.ProbeRecord{Endpoint: srv.JSONEndpoint(), Bucket: "persistlab", Prefix: "persistlab-probe-0123456789ab/", Objects: []string{"persistlab-probe-0123456789ab/x"}})
	if err := os.WriteFile(untrusted, forged, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(untrusted, 0o666); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, err := persistlab(t, "clean", "--dry-run")
	if err != nil || !strings.Contains(stdout, "killed bucket probe") || !strings.Contains(stdout, prefix) || !strings.Contains(stdout, untrusted+": not a regular file") {
		t.Fatalf("dry run: %v\n%s\n%s", err, stdout, stderr)
	}
	if left := probeObjects(t, srv); len(left) != len(written)+1 {
		t.Fatalf("the dry run deleted: %d objects left of %d", len(left), len(written)+1)
	}

	stdout, stderr, err = persistlab(t, "clean")
	if err == nil || !strings.Contains(stdout, prefix+"theirs: not an object the probe wrote: left alone") {
		t.Fatalf("with another's object under the prefix: %v\n%s\n%s", err, stdout, stderr)
	}
	if left := probeObjects(t, srv); len(left) != 1 || left[0] != prefix+"theirs" {
		t.Errorf("left under the prefixes: %v, want only %stheirs", left, prefix)
	}
	names, _ := srv.ObjectNames("persistlab")
	if !slices.Contains(names, "keep/me") {
		t.Errorf("an object outside the prefix was deleted: %v", names)
	}
	if _, err := os.Stat(records[0]); err != nil {
		t.Errorf("the record went while an object is left: %v", err)
	}
	if err := client.Delete(ctx, prefix+"theirs"); err != nil {
		t.Fatal(err)
	}
	stdout2, stderr2, err := persistlab(t, "clean")
	if err != nil || !strings.Contains(stdout2, "record removed") {
		t.Fatalf("second clean: %v\n%s\n%s", err, stdout2, stderr2)
	}
	if _, err := os.Stat(records[0]); err == nil {
		t.Error("the record is still there")
	}
	if _, err := os.Stat(untrusted); err != nil {
		t.Errorf("the untrusted record was removed: %v", err)
	}
	for _, s := range secrets {
		for _, text := range []string{stdout, stderr, stdout2, stderr2} {
			if strings.Contains(text, s) {
				t.Errorf("clean's output holds a credential (%.12s...)", s)
			}
		}
	}
}
