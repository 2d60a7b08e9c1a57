package httpload

import (
	"fmt"
	"strconv"
	"time"

	"persistlab/param"
	"persistlab/workload"
)

// MaxVUs bounds the virtual users of a cell and of persistlab load: each holds a connection and
// its own recorders.
const MaxVUs = 10000

// Params declare the load, for every workload that drives an app with this package (Param): how
// many VUs, in which loop, and the request. A workload may give method and path its app's
// defaults and add to a help text.
var Params = []param.Param{
	{Name: "vus", Kind: param.KindInt, Default: "1", Min: 1, Max: MaxVUs, Unit: "VUs", Help: "virtual users (closed loop) or connections (open loop)"},
	{Name: "mode", Kind: param.KindEnum, Default: ModeClosed, Allowed: []string{ModeClosed, ModeOpen}, Help: "closed: k6 constant-vus; open: constant arrival rate"},
	{Name: "rate", Kind: param.KindFloat, Default: "0", Min: 0, Max: 1e6, Unit: "requests/s", Help: "open loop: requests started per second"},
	{Name: "method", Kind: param.KindEnum, Default: "GET", Allowed: []string{"GET", "POST", "PUT", "DELETE", "PATCH"}, Help: "the method of every request"},
	{Name: "path", Kind: param.KindString, Default: "/", Help: "the path every request asks for"},
	{Name: "timeout", Kind: param.KindDuration, Default: "60s", Min: 0.001, Max: 3600, Help: "per request (k6's default 60s)"},
	{Name: "network_rtt", Kind: param.KindDuration, Default: "0s", Min: 0, Max: 1, Help: "a constant network round trip per request, spent before it is sent and counted in its latency (a client across the internet and Cloud Run's front end; no published figure, so 0)"},
}

// Load is the load's parameters, read (param.Decode): a workload that declares them embeds it in
// its settings.
type Load struct {
	VUs        int           `param:"vus"`
	Mode       string        `param:"mode"`
	Rate       float64       `param:"rate"`
	Method     string        `param:"method"`
	Path       string        `param:"path"`
	Timeout    time.Duration `param:"timeout"`
	NetworkRTT time.Duration `param:"network_rtt"`
}

// Param is the load's declaration of name; a name Params does not declare is a programming error.
func Param(name string) param.Param {
	p, ok := param.Find(Params, name)
	if !ok {
		panic("httpload: no load parameter " + name)
	}
	return p
}

// Metrics are what a run of the load reports (ResultOf), with the app's CPU the workload reads.
var Metrics = []workload.Metric{
	{Name: "med_ms", Unit: "ms"}, {Name: "avg_ms", Unit: "ms"}, {Name: "p90_ms", Unit: "ms"}, {Name: "p95_ms", Unit: "ms"},
	{Name: "p99_ms", Unit: "ms"}, {Name: "min_ms", Unit: "ms"}, {Name: "max_ms", Unit: "ms"},
	{Name: "rate", Unit: "requests/s", HigherBetter: true, Help: "200 answers per second"},
	{Name: "ok", Unit: "count", Help: "200 answers"},
	{Name: "errors", Unit: "count", Help: "answers other than 200, and requests without an answer"},
	{Name: "app_cpu_util", Unit: "share", Help: "the app's CPU time over the run, as a share of its CPUs"},
	{Name: "app_cpu_s", Unit: "s", Help: "the app's CPU time over the run"},
	{Name: "count", Unit: "count", Help: "answers timed in the latency figures (200 answers)"},
	{Name: "transport_errors", Unit: "count", Help: "requests without an answer (refused, reset, timed out)"},
	{Name: "max_acked", Unit: "count", Help: "the highest count a 200 answer acknowledged"},
	{Name: "late", Unit: "count", Help: "open loop: requests sent after their slot because every connection was busy (their latency counts from the slot)"},
	{Name: "service_count", Unit: "count", Help: "open loop: answers timed from the actual send"},
	{Name: "service_rate", Unit: "requests/s", HigherBetter: true, Help: "open loop: answers per second, timed from the actual send"},
	{Name: "service_min_ms", Unit: "ms", Help: "open loop: service time, from the actual send (so without the wait for a free connection)"},
	{Name: "service_med_ms", Unit: "ms"}, {Name: "service_avg_ms", Unit: "ms"}, {Name: "service_p90_ms", Unit: "ms"},
	{Name: "service_p95_ms", Unit: "ms"}, {Name: "service_p99_ms", Unit: "ms"}, {Name: "service_max_ms", Unit: "ms"},
}

// ResultOf turns a run of the driver into a workload result: latency (and, in an open loop,
// service time and late starts), answers by status, the highest acknowledged count, and the
// series of the run's timeline. Any workload that drives HTTP with this driver reports this way.
func ResultOf(r *Result, open bool) *workload.Result {
	out := workload.NewResult()
	out.Elapsed = r.Elapsed
	r.Latency.Summarize(r.Elapsed).Metrics("", out.Metrics)
	out.Histograms[workload.LatencyHistogram] = r.Latency
	if open {
		r.Service.Summarize(r.Elapsed).Metrics("service_", out.Metrics)
		out.Histograms["service"] = r.Service
		out.Metrics["late"] = float64(r.Late)
	}
	out.Metrics["ok"] = float64(r.OK)
	out.Metrics["errors"] = float64(r.Errors())
	out.Metrics["transport_errors"] = float64(r.TransportErrors)
	out.Metrics["max_acked"] = float64(r.MaxAcked)
	for code, n := range r.Statuses {
		out.Counters["http_"+strconv.Itoa(code)] = n
	}
	out.Errors = r.ErrorSamples
	out.LastWrite = r.LastAck
	if r.Timeline != nil {
		maxMs, avgMs, perSecond := r.Timeline.Series()
		out.Series[SeriesLatencyMax], out.Series[SeriesLatencyAvg], out.Series[SeriesRate] = maxMs, avgMs, perSecond
	}
	return out
}

// Series of a cell over its time, per window of the driver's timeline (TimelineWidth or wider).
const (
	SeriesLatencyMax = "latency_max_ms"
	SeriesLatencyAvg = "latency_avg_ms"
	SeriesRate       = "rate"
)

// CheckRate refuses an open loop without a rate and a closed loop with one (written is the rate
// as given, for the message).
func CheckRate(mode string, rate float64, written string) error {
	switch {
	case mode == ModeOpen && rate <= 0:
		return &param.FieldError{Field: "workload.rate", Value: written, Allowed: "requests per second above 0 for an open-loop workload"}
	case mode == ModeClosed && rate != 0:
		return &param.FieldError{Field: "workload.rate", Value: written, Allowed: "no rate for a closed-loop workload (its rate is what it measures)"}
	}
	return nil
}

// Split is one instance's share of the VUs and of the rate when several instances share a
// backend: the VUs as evenly as whole ones go (the first instances take the remainder, one each),
// the rate evenly.
func Split(vus int, rate float64, share workload.Share) (int, float64) {
	if share.Of <= 1 {
		return vus, rate
	}
	mine := vus / share.Of
	if share.Index < vus%share.Of {
		mine++
	}
	return mine, rate / float64(share.Of)
}

// CheckVUsPerInstance refuses fewer VUs than instances (vus is as written, for the message).
func CheckVUsPerInstance(vus int, written string, n int) error {
	if vus < n {
		return &param.FieldError{Field: "workload.vus", Value: written, Allowed: fmt.Sprintf("at least one VU per instance (%d): the VUs are split between the instances", n)}
	}
	return nil
}

// JoinInstanceFigures joins what workload.Merge cannot add up of several instances' figures (a
// workload's Merger): the highest count any instance acknowledged, not their sum, and the app's
// CPU share over the whole cell.
func JoinInstanceFigures(merged *workload.Result, parts []*workload.Result) {
	delete(merged.Metrics, "max_acked")
	delete(merged.Metrics, "app_cpu_util")
	var cpuTime float64 // CPU share x seconds, summed: each instance's share is of the same CPUs
	for _, p := range parts {
		if v, ok := p.Metrics["max_acked"]; ok {
			merged.Metrics["max_acked"] = max(merged.Metrics["max_acked"], v)
		}
		cpuTime += p.Metrics["app_cpu_util"] * p.Elapsed.Seconds()
	}
	if merged.Elapsed > 0 {
		merged.Metrics["app_cpu_util"] = cpuTime / merged.Elapsed.Seconds()
	}
}
