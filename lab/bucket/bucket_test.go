package bucket

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"
)

func TestClassifyFollowsTheGCSPricingTable(t *testing.T) {
	for _, tc := range []struct {
		method, target, contentType, body string
		name, class, object               string
	}{
		{"GET", "/storage/v1/b/bk/o?prefix=a/", "", "", "storage.objects.list", ClassA, ""},
		{"GET", "/storage/v1/b/bk/o/dir%2Fdb.sqlite", "", "", "storage.objects.get", ClassB, "dir/db.sqlite"},
		{"GET", "/download/storage/v1/b/bk/o/db?alt=media", "", "", "storage.objects.get", ClassB, "db"},
		{"GET", "/storage/v1/b/bk", "", "", "storage.buckets.get", ClassB, ""},
		{"GET", "/storage/v1/b", "", "", "storage.buckets.list", ClassA, ""},
		{"DELETE", "/storage/v1/b/bk/o/db", "", "", "storage.objects.delete", ClassFree, "db"},
		{"PATCH", "/storage/v1/b/bk/o/db", "", "", "storage.objects.patch", ClassA, "db"},
		{"POST", "/storage/v1/b/bk/o/db/compose", "", "", "storage.objects.compose", ClassA, "db"},
		{"POST", "/storage/v1/b/bk/o/src/rewriteTo/b/bk/o/dst", "", "", "storage.objects.rewrite", ClassA, "dst"},
		{"POST", "/upload/storage/v1/b/bk/o?uploadType=media&name=x%2Fy", "", "", "storage.objects.insert", ClassA, "x/y"},
		{"POST", "/upload/storage/v1/b/bk/o?uploadType=multipart", "multipart/related; boundary=B",
			"--B\r\nContent-Type: application/json\r\n\r\n{\"name\":\"ltx/0/1.ltx\"}\r\n--B\r\nContent-Type: application/octet-stream\r\n\r\ndata\r\n--B--\r\n",
			"storage.objects.insert", ClassA, "ltx/0/1.ltx"},
		{"POST", "/upload/storage/v1/b/bk/o?uploadType=resumable", "application/json", `{"name":"big"}`, "storage.objects.insert", ClassA, "big"},
		// The data of a resumable upload, on the session URI the lab answers: not an operation of its own.
		{"PUT", "/upload/storage/v1/b/bk/o?uploadType=resumable&name=big&upload_id=u1", "", "data", "storage.objects.insert (resumable data)", ClassNone, "big"},
		{"POST", "/upload/resumable/u2", "", "data", "storage.objects.insert (resumable data)", ClassNone, ""},
	} {
		r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
		if tc.contentType != "" {
			r.Header.Set("Content-Type", tc.contentType)
		}
		op := classify(r)
		if op.Name != tc.name || op.Class != tc.class || op.Object != tc.object {
			t.Errorf("%s %s: got %+v, want %s class %q object %q", tc.method, tc.target, op, tc.name, tc.class, tc.object)
		}
		if rest, _ := io.ReadAll(r.Body); string(rest) != tc.body {
			t.Errorf("%s %s: body not put back for the emulator", tc.method, tc.target)
		}
	}
}

func TestObjectLimiterAllowsOneWritePerIntervalAfterBurst(t *testing.T) {
	l := newObjectLimiter(time.Second, 3)
	t0 := time.Unix(1000, 0)
	allowed := 0
	for i := 0; i < 10; i++ { // ten writes at once: only the burst passes
		if l.allow("b/o", t0) {
			allowed++
		}
	}
	if allowed != 3 {
		t.Errorf("burst allowed %d, want 3", allowed)
	}
	if l.allow("b/o", t0.Add(900*time.Millisecond)) {
		t.Error("a write before a token refilled was allowed")
	}
	if !l.allow("b/o", t0.Add(1100*time.Millisecond)) || !l.allow("b/other", t0) {
		t.Error("a refilled token, or another object, was refused")
	}
	// Over a long steady stream the rate is one per interval.
	passed := 0
	for ms := 0; ms < 60_000; ms += 10 {
		if l.allow("b/steady", t0.Add(time.Duration(ms)*time.Millisecond)) {
			passed++
		}
	}
	if passed < 60 || passed > 63 {
		t.Errorf("%d writes passed in 60 s, want 60 plus the burst of 3", passed)
	}
}

func TestLatencyDrawsFollowTheLognormalModel(t *testing.T) {
	s := newLatencyStage(Model{Seed: 7})
	l := Latency{Median: 10 * time.Millisecond, P99: 80 * time.Millisecond}
	draws := make([]float64, 20000)
	for i := range draws {
		draws[i] = float64(s.draw(l))
	}
	sort.Float64s(draws)
	med, p99 := draws[len(draws)/2], draws[len(draws)*99/100]
	if math.Abs(med/float64(l.Median)-1) > 0.05 || math.Abs(p99/float64(l.P99)-1) > 0.1 {
		t.Errorf("median %v p99 %v, model %v and %v", time.Duration(med), time.Duration(p99), l.Median, l.P99)
	}
	if s.draw(Latency{}) != 0 || s.draw(Latency{Median: time.Millisecond}) != time.Millisecond {
		t.Error("no median means no delay; no tail means a constant")
	}
}

// Model gcsfuse-bench-2024 reads a 128 KB file in the published 18.54 ms on average: the mean of
// its read latency, as the latency stage draws it, plus the body at the published bandwidth of
// 61.8 MiB/s per stream. Everything else is the gcs model's.
func TestBenchModelReadsASmallFileInThePublishedTime(t *testing.T) {
	m, err := ModelFromOptions(map[string]string{"model": BenchModelName})
	if err != nil || m != BenchModel() {
		t.Fatalf("option model %s: %+v, %v", BenchModelName, m, err)
	}
	d := DefaultModel()
	if d.StreamBytesPerSecond != 7911.0/128*(1<<20) {
		t.Errorf("bandwidth per request %v B/s, want the page's 7,911 MiB/s over 128 jobs", d.StreamBytesPerSecond)
	}
	rest := m
	rest.Read.Median = d.Read.Median
	if rest != d || m.Read.Median <= d.Read.Median {
		t.Errorf("bench model %+v: want the gcs model %+v with a longer read median", m, d)
	}
	s := newLatencyStage(m)
	const n = 200000
	var sum float64
	for range n {
		sum += float64(s.draw(m.Read))
	}
	body := float64(PublishedBenchFileSize) / m.StreamBytesPerSecond * float64(time.Second)
	if got := time.Duration(sum/n + body); math.Abs(float64(got)/float64(PublishedBenchFileRead)-1) > 0.01 {
		t.Errorf("a 128 KiB read takes %v on average (median %v, p99 %v), want the page's %v", got, m.Read.Median, m.Read.P99, PublishedBenchFileRead)
	}
}

func TestPacerHoldsTheRate(t *testing.T) {
	p := pacer{rate: 1 << 20} // 1 MiB/s
	t0 := time.Now()
	for i := 0; i < 8; i++ {
		p.pace(32 << 10)
	}
	// 256 KiB at 1 MiB/s cannot take less than 250 ms (a lower bound: sleeping only adds).
	if d := time.Since(t0); d < 240*time.Millisecond {
		t.Errorf("256 KiB moved in %v at 1 MiB/s", d)
	}
}

// A real Google Cloud client talks to the lab bucket; the bucket counts by class, limits writes
// to one object with GCS's 429, and counts bytes.
func TestRealClientAgainstTheLab(t *testing.T) {
	m := NoDelayModel()
	m.ObjectUpdateBurst = 1
	m.ObjectUpdateInterval = time.Hour // the second write is surely within it, however slow the machine
	srv, err := Start(Config{Buckets: []string{"bk"}, Model: m, StorageRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	client, err := storage.NewClient(ctx, option.WithEndpoint("http://"+srv.Host()+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	obj := client.Bucket("bk").Object("db")
	write := func() error {
		w := obj.NewWriter(ctx)
		w.ChunkSize = 0 // one multipart upload, as small files go
		w.Write(bytes.Repeat([]byte("x"), 1000))
		return w.Close()
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	// A second write within the interval gets GCS's 429, as the client reports it.
	if err := write(); err == nil || !strings.Contains(err.Error(), "rateLimitExceeded") {
		t.Fatalf("second write within the interval: %v", err)
	}
	// Another object has a limit of its own (refilling is tested in virtual time above).
	obj = client.Bucket("bk").Object("db2")
	t0 := time.Now()
	w := obj.NewWriter(ctx)
	w.ChunkSize = 0
	w.Write([]byte("second"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := obj.NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if string(got) != "second" {
		t.Errorf("read back %q", got)
	}
	a := srv.Accounting()
	if a.ClassA != 2 || a.ClassB < 1 || a.Throttled != 1 || a.BytesIn < 1000 || a.ByMethod["storage.objects.insert"] != 2 {
		t.Errorf("accounting %+v", a)
	}
	if a.CostUSD() <= 0 {
		t.Error("no cost")
	}
	if name, at := srv.LastWriteUnder("bk", "d"); name != "bk/db2" || at.Before(t0) {
		t.Errorf("last write %s at %v", name, at)
	}
}

func TestStartRefusesOffLoopbackAndBusyPorts(t *testing.T) {
	if _, err := Start(Config{Listen: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("0.0.0.0: %v", err)
	}
	if _, err := Start(Config{}); err == nil || !strings.Contains(err.Error(), "StorageRoot") {
		t.Errorf("no StorageRoot: %v", err)
	}
	srv, err := Start(Config{StorageRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	_, err = Start(Config{Listen: "127.0.0.1:" + strings.TrimPrefix(srv.Host(), "localhost:"), StorageRoot: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("port in use: %v", err)
	}
	resp, err := http.Get("http://" + srv.Host() + "/storage/v1/b/nope")
	if err == nil {
		resp.Body.Close()
	}
}

// The token URL answers an OAuth2 token (gcsfuse's --token-url), outside the accounting; requests
// carrying no Authorization header are counted as anonymous.
func TestTokenURLAndAnonymousRequests(t *testing.T) {
	srv, err := Start(Config{Buckets: []string{"bk"}, Model: NoDelayModel(), StorageRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get(srv.TokenURL())
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken != LabToken || tok.TokenType != "Bearer" {
		t.Fatalf("token: HTTP %d, %+v, %v", resp.StatusCode, tok, err)
	}
	get := func(auth string) {
		req, _ := http.NewRequest(http.MethodGet, srv.JSONEndpoint()+"b/bk", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get("Bearer " + tok.AccessToken)
	get("Bearer " + tok.AccessToken)
	get("")
	if a := srv.Accounting(); a.ClassB != 3 || a.Anonymous != 1 {
		t.Errorf("after 2 authenticated gets, 1 anonymous and a token fetch: class B %d, anonymous %d; want 3 and 1", a.ClassB, a.Anonymous)
	}
	found := false
	for _, f := range srv.GcsfuseFlags() {
		found = found || f == "--token-url="+srv.TokenURL()
	}
	if !found {
		t.Errorf("gcsfuse flags %q lack the token URL", srv.GcsfuseFlags())
	}
}

// The lab serves the GCS routes its clients use and nothing else the emulator has: its
// /_internal/ endpoints (delete_all would empty the bucket), batch requests, signed-URL writes and
// virtual-hosted requests answer 404, uncounted, and the bucket is intact.
func TestOnlyTheGCSRoutesAreServed(t *testing.T) {
	srv, err := Start(Config{Buckets: []string{"bk"}, Model: NoDelayModel(), StorageRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Host()
	resp, err := http.Post(base+"/upload/storage/v1/b/bk/o?uploadType=media&name=kept", "text/plain", strings.NewReader("kept"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	counted := srv.Accounting()
	for _, tc := range []struct{ method, target, host, body string }{
		{"POST", "/_internal/delete_all", "", ""},
		{"PUT", "/_internal/reseed", "", "{}"},
		{"PUT", "/_internal/config", "", `{"externalUrl":"http://elsewhere"}`},
		{"GET", "/_internal/healthcheck", "", ""},
		{"POST", "/batch/storage/v1", "", "--b--"},
		{"PUT", "/bk/signed?X-Goog-Algorithm=GOOG4-RSA-SHA256", "", "signed"},
		{"DELETE", "/bk/kept", "", ""},
		{"POST", "/upload/resumable/u1", "", "data"},
		{"GET", "/kept", "bk." + srv.Host(), ""},
		{"GET", "/", "", ""},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.target, strings.NewReader(tc.body))
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "does not serve") {
			t.Errorf("%s %s (host %q): HTTP %d %s, want 404 naming what the lab serves", tc.method, tc.target, tc.host, resp.StatusCode, body)
		}
	}
	if a := srv.Accounting(); a.ClassA != counted.ClassA || a.ClassB != counted.ClassB || a.Free != counted.Free || a.Errors != counted.Errors {
		t.Errorf("refused requests were counted: %+v, before them %+v", a, counted)
	}
	if names, err := srv.ObjectNames("bk"); err != nil || len(names) != 1 || names[0] != "kept" {
		t.Errorf("the bucket after the refused requests: %v %v, want [kept]", names, err)
	}
	if resp, err := http.Get(base + "/bk/kept"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("an XML API read: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}
