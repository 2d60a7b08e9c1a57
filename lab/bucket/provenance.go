package bucket

import (
	"encoding/json"
	"fmt"
	"time"

	"persistlab/provenance"
)

// The bucket model's figures and where each comes from (package provenance; `persistlab lab model
// bucket` prints them). Each Value is formatted from the constant or the DefaultModel field it
// describes; TestProvenanceCoversTheCode (provenance) fails when a constant of this
// package, or a field of Model, has no row here.

func init() {
	provenance.Register(provenance.Model{Name: "bucket", Figures: Figures, For: FiguresFor})
}

// Sources of the published figures, as this package cites them; "checked" is when a copy of the
// page was read again for this table.
const (
	srcQuotas = `Cloud Storage "Quotas & limits", https://cloud.google.com/storage/quotas (cited 2026-11-22; checked 2026-11-24 in stored copies of that page and of docs.cloud.google.com/storage/quotas.md.txt)`
	srcRate   = `https://cloud.google.com/storage/quotas and "Request rate and access distribution guidelines", https://cloud.google.com/storage/docs/request-rate (checked 2026-11-24 in stored copies)`
	src429    = `https://cloud.google.com/storage/docs/gcs429 (the error body GCS sends, cited 2026-11-22) and the quotas page's one write per second per object`
	srcClass  = `Cloud Storage pricing, "Operations by class", JSON API column, https://cloud.google.com/storage/pricing (as recorded 2026-11-22)`
	srcBench  = `gcsfuse's benchmark page, https://github.com/GoogleCloudPlatform/gcsfuse/blob/8637ce1941e0234e142b4d9470e2e7ab4318ca41/docs/benchmarks.md (commit 8637ce1 of 2024-07-02, "Update benchmark doc (#1994)"; read 2026-11-28 in a mirror of the repository): gcsfuse 2.2.0, n2-standard-96, fio ioengine=sync (one I/O in flight per job), direct, 128 jobs; independent of seed 003's tables (the page of April 2023)`
)

// Figures is the bucket model's table.
func Figures() []provenance.Figure {
	d := DefaultModel()
	latency := func(class, field string, v time.Duration, moves string) provenance.Figure {
		return provenance.Figure{Name: class + " latency " + field, Go: "DefaultModel()." + map[string]string{"class B read": "Read", "class A write": "Write", "class A list": "List"}[class] + "." + map[string]string{"median": "Median", "p99": "P99"}[field],
			Value: v.String(), Kind: provenance.Assumed,
			Source: "GCS publishes no latency; an assumption for a VM in the bucket's region. Seed 000 puts a GCS write about 2 ms above a local one at best (its min latencies, 8.12 vs 6.37 ms): checked against, not fitted to; tails of tens of ms are the common experience",
			Moves:  moves, Option: map[string]string{"class B read": "read", "class A write": "write", "class A list": "list"}[class] + "_" + field}
	}
	const readMoves = "every object read: gcsfuse reads and stats (seed 002, 003 latencies), Litestream restores"
	const writeMoves = "every upload and metadata write: gcsfuse's fsync/close, Litestream's replication lag and sync; seed 000's gcsfuse latencies and its slope ratio"
	const listMoves = "listings: gcsfuse's directory lookups (implicit dirs), Litestream's restore"
	figs := []provenance.Figure{
		latency("class B read", "median", d.Read.Median, readMoves),
		latency("class B read", "p99", d.Read.P99, readMoves+"; tails"),
		latency("class A write", "median", d.Write.Median, writeMoves),
		latency("class A write", "p99", d.Write.P99, writeMoves+"; tails (p90, p95, max)"),
		latency("class A list", "median", d.List.Median, listMoves),
		latency("class A list", "p99", d.List.P99, listMoves+"; tails"),
		{Name: "latency distribution", Go: "z99", Value: fmt.Sprintf("lognormal by class, σ = ln(p99/median) / %.4f", z99), Kind: provenance.Assumed,
			Source: "a common shape for service latencies, fixed by two numbers; nothing published says GCS's shape",
			Moves:  "how often a request lands in the tail between median and p99 and beyond"},
		{Name: "bandwidth per request (each way)", Go: "DefaultModel().StreamBytesPerSecond", Value: fmt.Sprintf("%.1f MiB/s", d.StreamBytesPerSecond/(1<<20)), Kind: provenance.Published,
			Source: srcBench + ": its sequential read of 1 GB files (next row) per job, each job one stream",
			Moves:  "every large transfer: gcsfuse MiB/s (seed 002, seed 003: all of its bandwidths), Litestream snapshots and restores, crash recovery time",
			Option: "stream_mib_s"},
		{Name: "gcsfuse sequential read of 1 GB files", Go: "PublishedBenchSeqReadMiBps, PublishedBenchJobs", Value: fmt.Sprintf("%d MiB/s over %d jobs", PublishedBenchSeqReadMiBps, PublishedBenchJobs), Kind: provenance.Published,
			Source: srcBench + `: "Sequential Reads", 1GB files, 1M blocks`,
			Moves:  "the bandwidth per request (its share per job)"},
		{Name: "gcsfuse read of a 128 KB file", Go: "PublishedBenchFileRead, PublishedBenchFileSize", Value: fmt.Sprintf("%v per %d KiB file", PublishedBenchFileRead, PublishedBenchFileSize>>10), Kind: provenance.Published,
			Source: srcBench + `: "Sequential Reads", 128KB files, 128K blocks, average latency (each read a whole file)`,
			Moves:  "the class B read latency of model " + BenchModelName + " (next row)"},
		{Name: "class B read latency median, model " + BenchModelName, Go: "BenchModel().Read.Median", Value: BenchModel().Read.Median.String(), Kind: provenance.Published,
			Source: srcBench + ": the 128 KB file's read less its body at the bandwidth per request leaves the mean wait before the first byte; this median gives that mean with the default p99 (assumed, the page giving averages only)",
			Moves:  "every class B request under model " + BenchModelName + " (seed 003's gcsfuse-fio): each small file's read and each random read, so seed 003's small-file and random-read bandwidths",
			Option: "read_median"},
		{Name: "pacing step", Go: "paceStep", Value: fmt.Sprintf("%d KiB", paceStep>>10), Kind: provenance.Assumed,
			Source: "the lab's granularity for holding a response body to its rate: a body runs ahead of the rate by at most one step; not a GCS figure",
			Moves:  "small downloads (under 64 KiB go at loopback speed); nothing above a few steps"},
		{Name: "writes to one object", Go: "PublishedObjectUpdateInterval", Value: "one per " + PublishedObjectUpdateInterval.String(), Kind: provenance.Published,
			Source: srcQuotas + `: "Maximum rate of writes to the same object name: One write per second", the same for object metadata updates`,
			Moves:  "429s and retries when one object is rewritten fast: gcsfuse's repeated fsyncs of one SQLite file (seed 000, two instances), Litestream's generation/position objects",
			Option: "object_update_interval"},
		{Name: "writes to one object at once before the limit", Go: "DefaultModel().ObjectUpdateBurst", Value: fmt.Sprint(d.ObjectUpdateBurst), Kind: provenance.Assumed,
			Source: "GCS tolerates short bursts above one write per second per object (documented as a rate, not a window); 3 is a guess",
			Moves:  "how soon the 429s start when one object is written in a burst (seed 000 on gcsfuse)",
			Option: "object_update_burst"},
		{Name: "answer above the per-object limit", Go: "gcs429", Value: gcs429Summary(), Kind: provenance.Published,
			Source: src429,
			Moves:  "what clients do: gcsfuse and Litestream retry with backoff, adding seconds to a write"},
		{Name: "bucket writes per second (initial)", Go: "PublishedBucketWritesPerSecond", Value: fmt.Sprintf("about %d/s", PublishedBucketWritesPerSecond), Kind: provenance.Published,
			Source: srcRate + `: "Buckets initially support roughly 1,000 writes per second and then scale as needed"`,
			Moves:  "nothing: named for reference, not enforced (no scenario comes near it)"},
		{Name: "bucket reads per second (initial)", Go: "PublishedBucketReadsPerSecond", Value: fmt.Sprintf("about %d/s", PublishedBucketReadsPerSecond), Kind: provenance.Published,
			Source: srcRate + `: "roughly 5,000 object reads per second"`,
			Moves:  "nothing: named for reference, not enforced"},
		{Name: "operation classes", Go: "ClassA, ClassB, ClassFree", Value: "A: insert, patch, update, list, compose, copy, rewrite; B: get; free: delete", Kind: provenance.Published,
			Source: srcClass,
			Moves:  "the operation counts and the cost of every bucket-backed row"},
	}
	for i := range figs {
		figs[i].Model = "bucket"
	}
	return figs
}

// gcs429Summary is the status and reason of the 429 body the limit answers, read from it.
func gcs429Summary() string {
	var body struct {
		Error struct {
			Code   int `json:"code"`
			Errors []struct {
				Domain string `json:"domain"`
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(gcs429), &body); err != nil || len(body.Error.Errors) == 0 {
		return "429 (body unreadable)"
	}
	return fmt.Sprintf("HTTP %d %s (%s)", body.Error.Code, body.Error.Errors[0].Reason, body.Error.Errors[0].Domain)
}

// benchOnly are the figures of model gcsfuse-bench-2024 alone, left out of the other models' uses.
var benchOnly = map[string]bool{"PublishedBenchFileRead, PublishedBenchFileSize": true, "BenchModel().Read.Median": true}

// FiguresFor is the bucket's figures as a backend with these options runs them: base model "off"
// leaves none in effect but the classes and prices, "no-delay" only the per-object limit,
// gcsfuse-bench-2024 replaces the default read median by its own, and a single-field option
// replaces its figure (noted).
func FiguresFor(opts map[string]string) ([]provenance.Use, error) {
	m, err := ModelFromOptions(opts)
	if err != nil {
		return nil, err
	}
	d := DefaultModel()
	bench := opts["model"] == BenchModelName
	var uses []provenance.Use
	for _, u := range provenance.Uses(Figures()) {
		if bench || !benchOnly[u.Go] {
			uses = append(uses, u)
		}
	}
	for i := range uses {
		u := &uses[i]
		var def, got string // the figure's field in the default model and in this one
		switch u.Go {
		case "DefaultModel().Read.Median":
			if bench && opts["read_median"] == "" {
				u.Off, u.Note = true, "model "+BenchModelName+": BenchModel().Read.Median instead"
				continue
			}
			def, got = d.Read.Median.String(), m.Read.Median.String()
		case "BenchModel().Read.Median":
			if v := opts["read_median"]; v != "" {
				u.Off, u.Note = true, "option read_median: "+v
			}
			continue
		case "PublishedBenchFileRead, PublishedBenchFileSize":
			if v := opts["read_median"]; v != "" {
				u.Off, u.Note = true, "option read_median: "+v
			}
			continue
		case "DefaultModel().Read.P99":
			def, got = d.Read.P99.String(), m.Read.P99.String()
		case "DefaultModel().Write.Median":
			def, got = d.Write.Median.String(), m.Write.Median.String()
		case "DefaultModel().Write.P99":
			def, got = d.Write.P99.String(), m.Write.P99.String()
		case "DefaultModel().List.Median":
			def, got = d.List.Median.String(), m.List.Median.String()
		case "DefaultModel().List.P99":
			def, got = d.List.P99.String(), m.List.P99.String()
		case "z99":
			u.Off = m.Read.Median <= 0 && m.Write.Median <= 0 && m.List.Median <= 0
		case "PublishedBenchSeqReadMiBps, PublishedBenchJobs":
			if m.StreamBytesPerSecond != d.StreamBytesPerSecond {
				u.Off, u.Note = true, "the bandwidth per request is not its share here"
			}
			continue
		case "DefaultModel().StreamBytesPerSecond", "paceStep":
			def, got = fmt.Sprint(d.StreamBytesPerSecond), fmt.Sprint(m.StreamBytesPerSecond)
			if u.Go == "paceStep" {
				u.Off = m.StreamBytesPerSecond <= 0
				continue
			}
		case "PublishedObjectUpdateInterval":
			def, got = d.ObjectUpdateInterval.String(), m.ObjectUpdateInterval.String()
		case "DefaultModel().ObjectUpdateBurst", "gcs429":
			u.Off = m.ObjectUpdateInterval <= 0
			if u.Go == "DefaultModel().ObjectUpdateBurst" && !u.Off && m.ObjectUpdateBurst != d.ObjectUpdateBurst {
				u.Note = fmt.Sprintf("option object_update_burst: %d", m.ObjectUpdateBurst)
			}
			continue
		}
		if def == got {
			continue
		}
		if got == "0s" || got == "0" {
			u.Off, u.Note = true, "off here (model "+modelBase(opts)+")"
			if u.Option != "" && opts[u.Option] != "" {
				u.Note = "off here (option " + u.Option + ")"
			}
			continue
		}
		u.Note = "replaced here: " + got
		if u.Option != "" && opts[u.Option] != "" {
			u.Note = "option " + u.Option + ": " + opts[u.Option]
		}
		if u.Kind == provenance.Fitted {
			u.Off = true // another value is not the fitted figure
		}
	}
	return uses, nil
}

func modelBase(opts map[string]string) string {
	if b := opts["model"]; b != "" {
		return b
	}
	return "gcs"
}
