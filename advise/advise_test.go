package advise

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"persistlab/cost"
	"persistlab/lab"
	"persistlab/lab/volume"
	"persistlab/param"
	"persistlab/results"
	"persistlab/scenario"
)

var counterMetrics = map[string]string{"p95_ms": "ms", "p99_ms": "ms", "med_ms": "ms", "service_p95_ms": "ms", "ok": "count", "errors": "count", "rate": "requests/s"}

func mustRequire(t *testing.T, texts ...string) []Requirement {
	t.Helper()
	var out []Requirement
	for _, s := range texts {
		r, err := ParseRequirement(s, counterMetrics)
		if err != nil {
			t.Fatalf("ParseRequirement(%q): %v", s, err)
		}
		out = append(out, r)
	}
	return out
}

func TestParseRequirementSortsEachIntoTheRunsThatJudgeIt(t *testing.T) {
	for _, c := range []struct {
		text, metric string
		where        Where
		value        float64
	}{
		{"p95 < 100ms", "p95_ms", Steady, 100},
		{"p99_ms <= 0.5s", "p99_ms", Steady, 500},
		{"error_rate < 1%", "error_rate", Steady, 0.01},
		{"lost_acked == 0", "lost_acked", Crash, 0},
		{"lost_acked <= 1s", "lost_reach_ms", Crash, 1000},
		{"usd_per_month < 30", "usd_per_month", Bill, 30},
	} {
		r, err := ParseRequirement(c.text, counterMetrics)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if r.Metric != c.metric || r.Where != c.where || r.Value != c.value {
			t.Errorf("%q: got metric %s, where %s, value %g; want %s, %s, %g", c.text, r.Metric, r.Where, r.Value, c.metric, c.where, c.value)
		}
	}
}

func TestParseRequirementNamesTheFieldTheValueAndWhatIsAllowed(t *testing.T) {
	for _, text := range []string{"p42 < 1ms", "latency fast", "usd_per_month[S3] < 3", "usd_per_month < 3ms", "lost_acked < 5%"} {
		_, err := ParseRequirement(text, counterMetrics)
		var fe *param.FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("%q: got %v, want a field error", text, err)
		}
		if fe.Field != "--require" || fe.Value != text || fe.Allowed == "" {
			t.Errorf("%q: got field %q value %q allowed %q", text, fe.Field, fe.Value, fe.Allowed)
		}
	}
	_, err := ParseRequirement("p42 < 1ms", counterMetrics)
	for _, want := range []string{"p95", "lost_acked", "usd_per_month"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error for an unknown metric does not list %s: %v", want, err)
		}
	}
}

// figures builds a candidate's figures: latency at the rate and twice it, worst loss over n crashes, a bill.
func figures(p95, p95Double, lost float64, crashes int, usd float64) Figures {
	return Figures{
		AtRate:   map[string]float64{"p95_ms": p95},
		AtDouble: map[string]float64{"p95_ms": p95Double},
		Crash:    map[string]float64{MetricLostAcked: lost, MetricLostWindow: lost * 50},
		Crashes:  crashes,
		Bill:     []cost.Line{{Item: "all", USDPerMonth: usd}},
		Priced:   true,
	}
}

var fakeCandidates = []Candidate{{Name: "local"}, {Name: "gcsfuse"}, {Name: "litestream-1s"}, {Name: "pd-ssd", Excluded: "no volumes here"}}

func TestLostAckedZeroExcludesTheLocalDiskAndLitestream(t *testing.T) {
	figs := map[string]Figures{
		"local":         figures(5, 9, 400, 3, 10),
		"gcsfuse":       figures(40, 90, 0, 3, 12),
		"litestream-1s": figures(6, 10, 12, 3, 11),
	}
	ranked := Rank(fakeCandidates, figs, mustRequire(t, "lost_acked == 0", "p95 < 100ms"), "p95_ms")
	if len(ranked) != 3 {
		t.Fatalf("ranked %d candidates, want the 3 not excluded", len(ranked))
	}
	if ranked[0].Candidate.Name != "gcsfuse" || !ranked[0].Meets {
		t.Fatalf("first: %+v, want gcsfuse meeting every requirement", ranked[0])
	}
	for _, v := range ranked[1:] {
		if v.Meets || len(v.Fails) != 1 || v.Fails[0].Requirement != "lost_acked == 0" {
			t.Errorf("%s: meets %v, fails %+v; want it failing lost_acked == 0 alone", v.Candidate.Name, v.Meets, v.Fails)
		}
	}
	// Of the two failing the same requirement by the same (unbounded) share, the cheaper ranks first.
	if ranked[1].Candidate.Name != "local" {
		t.Errorf("second: %s, want local (cheaper than litestream-1s, both losing writes)", ranked[1].Candidate.Name)
	}
}

func TestABudgetBelowEveryCandidateMeetsNoneAndNamesTheCheapest(t *testing.T) {
	figs := map[string]Figures{
		"local":         figures(5, 9, 400, 3, 10),
		"gcsfuse":       figures(40, 90, 0, 3, 12),
		"litestream-1s": figures(6, 10, 12, 3, 11),
	}
	p := &Plan{App: App{Name: "counter"}, Platform: Platform{Kind: "cloudrun", CPUs: 1, Memory: 512 << 20}, Rate: 50,
		Requirements: mustRequire(t, "usd_per_month < 5"), Candidates: fakeCandidates, Crashes: 3, Duration: 30 * time.Second}
	a := p.Advise(figs, nil)
	if a.Met() {
		t.Fatalf("a budget of $5 was met: %+v", a.Ranked[0])
	}
	if a.Ranked[0].Candidate.Name != "local" || !strings.Contains(a.Answer, "closest is local") {
		t.Errorf("answer %q, first %s: want the cheapest, local, named the closest", a.Answer, a.Ranked[0].Candidate.Name)
	}
	if got := a.Ranked[0].Fails[0].By; math.Abs(got-1) > 1e-9 { // $10 against $5: 100% over
		t.Errorf("local misses the budget by %g of it, want 1", got)
	}
}

func TestTheRankingFollowsTheMeasuredFigures(t *testing.T) {
	reqs := mustRequire(t, "p95 < 50ms")
	figs := map[string]Figures{
		"local":         figures(5, 9, 400, 3, 10),
		"gcsfuse":       figures(40, 90, 0, 3, 8),
		"litestream-1s": figures(6, 10, 12, 3, 11),
	}
	ranked := Rank(fakeCandidates, figs, reqs, "p95_ms")
	var order []string
	for _, v := range ranked {
		order = append(order, v.Candidate.Name)
	}
	if got := strings.Join(order, ","); got != "gcsfuse,local,litestream-1s" {
		t.Errorf("order %s: every one meets p95 < 50ms, so cheapest first: gcsfuse ($8), local ($10), litestream-1s ($11)", got)
	}
	// gcsfuse slows past the bound: it drops below the two that still meet it.
	figs["gcsfuse"] = figures(60, 90, 0, 3, 8)
	ranked = Rank(fakeCandidates, figs, reqs, "p95_ms")
	if ranked[2].Candidate.Name != "gcsfuse" || ranked[2].Meets {
		t.Errorf("last: %s (meets %v), want gcsfuse failing p95 < 50ms", ranked[2].Candidate.Name, ranked[2].Meets)
	}
}

func TestAFigureTheRunsLackIsUnjudgedNotMet(t *testing.T) {
	f := figures(5, 9, 0, 0, 10) // no crash ran
	f.Priced = false
	v := Judge(Candidate{Name: "x"}, f, mustRequire(t, "lost_acked == 0", "usd_per_month < 30", "p95 < 10ms"))
	if v.Meets || len(v.Unjudged) != 2 || len(v.Fails) != 0 {
		t.Errorf("meets %v, unjudged %v, fails %v: want the crash and bill requirements unjudged and not met", v.Meets, v.Unjudged, v.Fails)
	}
}

func TestTheFrontierHoldsOnlyTheUndominated(t *testing.T) {
	figs := map[string]Figures{
		"local":         figures(5, 9, 400, 3, 10),  // fastest
		"gcsfuse":       figures(40, 90, 0, 3, 12),  // loses nothing
		"litestream-1s": figures(50, 60, 12, 3, 13), // slower, lossier and dearer than gcsfuse
	}
	for _, v := range Rank(fakeCandidates, figs, mustRequire(t, "p95 < 1s"), "p95_ms") {
		want := v.Candidate.Name != "litestream-1s"
		if v.Frontier != want {
			t.Errorf("%s: frontier %v, want %v", v.Candidate.Name, v.Frontier, want)
		}
	}
}

func TestCandidatesOnCloudRunExcludeBlockVolumesAndSayWhy(t *testing.T) {
	app := App{Name: "counter", SQLite: true}
	run, err := ParsePlatform("cloudrun", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	gce, err := ParsePlatform("n1-standard-2", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	runnable := func(cs []Candidate) map[string]bool {
		m := map[string]bool{}
		for _, c := range cs {
			if c.Excluded == "" {
				m[c.Backend] = true
			} else if !strings.Contains(c.Excluded, " ") {
				t.Errorf("%s: excluded with %q, want a reason in words", c.Name, c.Excluded)
			}
		}
		return m
	}
	if got := runnable(Candidates(app, run, 50, 100<<20, 0)); got["volume"] || !got["gcsfuse"] || !got["litestream"] || !got["local"] || got["cloudsql"] {
		t.Errorf("on Cloud Run: runnable backends %v, want local, gcsfuse and litestream only", got)
	}
	// A database as large as the instance's memory (512 MiB) fits none of them: Cloud Run keeps
	// its disk, and gcsfuse's staged writes, in memory.
	pragmas := app
	pragmas.Pragmas = true // its -sync-full variants too
	for _, c := range Candidates(pragmas, run, 50, 512<<20, 0) {
		if c.Excluded == "" || (c.Backend != "volume" && c.Backend != "cloudsql" && !strings.Contains(c.Excluded, "memory")) {
			t.Errorf("a 512 MiB database on a 512 MiB instance: %s excluded %q, want it excluded for memory", c.Name, c.Excluded)
		}
	}
	if got := runnable(Candidates(app, gce, 50, 1<<30, 0)); !got["volume"] {
		t.Errorf("on a GCE VM: runnable backends %v, want the Persistent Disks too", got)
	}
	ec2, err := ParsePlatform("c4.large", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := runnable(Candidates(app, ec2, 50, 1<<30, 0)); got["local"] || !got["volume"] {
		t.Errorf("on a c4.large: runnable backends %v, want EBS volumes and no instance store", got)
	}
	for _, c := range Candidates(app, gce, 50, 1<<30, 0) {
		if c.Backend == "volume" && c.Excluded == "" && !strings.HasPrefix(c.Name, "pd-") {
			t.Errorf("on a GCE VM, %s is offered: want only Persistent Disks", c.Name)
		}
	}
	for _, c := range Candidates(App{Name: "files"}, run, 50, 100<<20, 0) {
		if c.Backend == "litestream" && c.Excluded == "" {
			t.Errorf("an app without SQLite is offered %s", c.Name)
		}
	}
}

func TestSizeVolumeMeetsTheIOPSWithinTheTypesRules(t *testing.T) {
	for _, typ := range []string{"gp2", "gp3", "io2", "pd-balanced", "pd-ssd"} {
		for _, iops := range []float64{100, 2000, 9000} {
			s := SizeVolume(typ, 3<<30, iops)
			if err := s.Validate(); err != nil {
				t.Fatalf("%s for %g IOPS: %v", typ, iops, err)
			}
			if s.SizeBytes < 6<<30 {
				t.Errorf("%s: %d GiB, want room for the 3 GiB database twice", typ, s.SizeBytes>>30)
			}
			if got := sustainedIOPS(s); got < iops {
				t.Errorf("%s sized %d GiB (iops %g) sustains %g IOPS, want at least %g", typ, s.SizeBytes>>30, s.ProvisionedIOPS, got, iops)
			}
			// Not oversized: a GiB less (where the type sizes by size) would not do.
			if typ == "gp2" || typ == "pd-ssd" || typ == "pd-balanced" {
				less := s
				less.SizeBytes -= 1 << 30
				if less.SizeBytes >= 6<<30 && less.SizeBytes >= int64(MinVolumeGiB)<<30 && sustainedIOPS(less) >= iops {
					t.Errorf("%s: %d GiB, but %d GiB sustains %g", typ, s.SizeBytes>>30, less.SizeBytes>>30, sustainedIOPS(less))
				}
			}
		}
	}
	_ = volume.Spec{}
}

func TestNewPlanRefusesWhatCannotRunBeforeAnythingRuns(t *testing.T) {
	app := App{Name: "counter", SQLite: true, Crashable: true, Workload: scenario.Workload{Type: "counter", Params: map[string]string{"cpu_per_request": "4.7ms", "gvl": "true"}}}
	p, _ := ParsePlatform("cloudrun", 4, 0)
	cands := Candidates(app, p, 50, 100<<20, 0)
	reqs := mustRequire(t, "p95 < 100ms")
	for _, c := range []struct {
		field string
		rate  float64
		reqs  []Requirement
		time  time.Duration
	}{
		{"--rate", 500, reqs, 15 * time.Minute}, // 500 x 4.7 ms = 2.35 CPUs behind one GVL
		{"--rate", -1, reqs, 15 * time.Minute},
		{"--require", 50, nil, 15 * time.Minute},
		{"--time", 50, reqs, time.Minute},
	} {
		_, err := NewPlan(app, p, c.rate, 1<<30, c.reqs, c.time, DefaultCrashes, 0, cands)
		var fe *param.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("rate %g, %d requirements, time %s: got %v, want an error on %s", c.rate, len(c.reqs), c.time, err, c.field)
		}
	}
	if _, err := NewPlan(app, p, 50, 1<<30, reqs, 15*time.Minute, 0, 0, cands); err == nil || !strings.Contains(err.Error(), "--crashes") {
		t.Errorf("no crash runs: got %v, want an error on --crashes", err)
	}
	if _, err := NewPlan(app, p, 50, 1<<30, reqs, 15*time.Minute, DefaultCrashes, -1, cands); err == nil || !strings.Contains(err.Error(), "--connections") {
		t.Errorf("no connections: got %v, want an error on --connections", err)
	}
	// An app whose crashes cannot be counted: a crash requirement is refused, and nothing crashes.
	blind := app
	blind.Crashable = false
	if _, err := NewPlan(blind, p, 50, 1<<30, mustRequire(t, "lost_acked == 0"), 15*time.Minute, DefaultCrashes, 0, cands); err == nil || !strings.Contains(err.Error(), "no ack and recover") {
		t.Errorf("a crash requirement on an app without ack and recover: got %v", err)
	}
	if bp, err := NewPlan(blind, p, 50, 1<<30, reqs, 15*time.Minute, DefaultCrashes, 0, cands); err != nil || bp.Crashes != 0 || len(bp.Kinds()) != 1 || bp.Estimate() > bp.Budget {
		t.Errorf("an app without ack and recover: %v; want a plan of steady runs alone within the budget", err)
	}
	pl, err := NewPlan(app, p, 50, 1<<30, reqs, 15*time.Minute, DefaultCrashes, 0, cands)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Duration < pl.MinCell() || float64(pl.Duration)*pl.Rate < MinRequests*float64(time.Second) || pl.Estimate() > pl.Budget {
		t.Errorf("cells of %s, estimate %s: want at least %s (%d requests at %g/s) each, within the budget %s", pl.Duration, pl.Estimate(), pl.MinCell(), MinRequests, pl.Rate, pl.Budget)
	}
}

func TestAdviceWithAnUnboundedShortfallIsValidJSON(t *testing.T) {
	p := &Plan{App: App{Name: "counter"}, Platform: Platform{Kind: "cloudrun", CPUs: 1, Memory: 512 << 20}, Rate: 50,
		Requirements: mustRequire(t, "lost_acked == 0"), Candidates: fakeCandidates, Crashes: 3, Duration: 30 * time.Second}
	a := p.Advise(map[string]Figures{"local": figures(5, 9, 400, 3, 10)}, nil)
	var b strings.Builder
	if err := a.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"by": null`) {
		t.Errorf("a shortfall against a bound of 0 is not null in JSON:\n%s", b.String())
	}
}

func TestThePageOpensWithTheAnswerAndDrawsEveryCandidateWithALatency(t *testing.T) {
	cands := append([]Candidate{{Name: "<b>odd</b>"}}, fakeCandidates...)
	figs := map[string]Figures{
		"local":         figures(5, 9, 400, 3, 10),
		"gcsfuse":       figures(40, 90, 0, 3, 12),
		"litestream-1s": figures(50, 60, 12, 3, 13),
		"<b>odd</b>":    {Crash: map[string]float64{}}, // no latency: not drawn
	}
	bounded := figs["gcsfuse"] // $2 of its $12 a bound: drawn at $12, a bar down to $10
	bounded.AtMostUSD = 2
	figs["gcsfuse"] = bounded
	p := &Plan{App: App{Name: "counter"}, Platform: Platform{Kind: "cloudrun", CPUs: 1, Memory: 512 << 20}, Rate: 50,
		Requirements: mustRequire(t, "p95 < 100ms"), Candidates: cands, Crashes: 3, Duration: 30 * time.Second}
	a := p.Advise(figs, []string{"a trust line"})
	var b strings.Builder
	if err := a.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if i, j := strings.Index(page, a.Answer), strings.Index(page, "<svg"); i < 0 || j < 0 || i > j {
		t.Errorf("the answer (at %d) does not come before the chart (at %d)", i, j)
	}
	if got := strings.Count(page, `r="6"`); got != 3 {
		t.Errorf("%d points drawn, want the 3 candidates with a latency", got)
	}
	frontier := 0
	for _, v := range a.Ranked {
		if v.Frontier {
			if _, ok := v.Figures.AtRate[a.Latency]; ok {
				frontier++
			}
		}
	}
	if got := strings.Count(page, `r="10"`); got != frontier {
		t.Errorf("%d rings, want the %d frontier candidates with a latency", got, frontier)
	}
	if strings.Count(page, `stroke-width="3"`) != 1 || !strings.Contains(page, "gcsfuse (at most)") {
		t.Errorf("the bounded bill is not drawn as one bar labelled at most")
	}
	if strings.Contains(page, "<b>odd</b>") {
		t.Error("a candidate's name reached the page unescaped")
	}
	if strings.Contains(page, "<script") {
		t.Error("the page holds a script: it should need none")
	}
}

func TestTheConnectionsFollowTheRateAndTheTightestLatency(t *testing.T) {
	for _, c := range []struct {
		rate float64
		reqs []string
		want int
	}{
		{20, []string{"p95 < 100ms"}, 2},                    // 20/s x 0.1 s
		{200, []string{"p95 < 100ms", "p99 <= 50ms"}, 10},   // the tightest: 200/s x 0.05 s
		{200, []string{"lost_acked == 0"}, 20},              // no latency required: 0.1 s
		{1, []string{"p95 < 1s"}, MinConnections},           // never fewer than 2
		{100000, []string{"p95 < 1s"}, MaxConnections},      // nor more than the bound
		{50, []string{"p95 > 1ms", "usd_per_month < 3"}, 5}, // a lower bound sizes nothing
	} {
		if got := Connections(c.rate, mustRequire(t, c.reqs...)); got != c.want {
			t.Errorf("%g/s with %v: %d connections, want %d", c.rate, c.reqs, got, c.want)
		}
	}
}

func TestLatenciesWithinATenthOfEachOtherAreSaidToBeTheApps(t *testing.T) {
	p := &Plan{App: App{Name: "counter"}, Platform: Platform{Kind: "cloudrun", CPUs: 1, Memory: 512 << 20}, Rate: 50,
		Requirements: mustRequire(t, "p95 < 100ms"), Candidates: fakeCandidates, Crashes: 3, Duration: 30 * time.Second}
	same := map[string]Figures{"local": figures(100, 1, 0, 3, 10), "gcsfuse": figures(105, 1, 0, 3, 12), "litestream-1s": figures(109, 1, 0, 3, 13)}
	if a := p.Advise(same, nil); len(a.Notes) != 1 || !strings.Contains(a.Notes[0], "not its storage") {
		t.Errorf("latencies of 100 to 109 ms: notes %q, want the app named as what sets them", a.Notes)
	}
	apart := map[string]Figures{"local": figures(100, 1, 0, 3, 10), "gcsfuse": figures(111, 1, 0, 3, 12), "litestream-1s": figures(105, 1, 0, 3, 13)}
	if a := p.Advise(apart, nil); len(a.Notes) != 0 {
		t.Errorf("latencies of 100 to 111 ms: notes %q, want none", a.Notes)
	}
}

// At one price, of two missing a bound of 0, the one missing it by less ranks first.
func TestAtOnePriceTheSmallerLossRanksFirst(t *testing.T) {
	figs := map[string]Figures{"a": figures(5, 9, 718, 3, 1), "b": figures(5, 9, 1, 3, 1)}
	ranked := Rank([]Candidate{{Name: "a"}, {Name: "b"}, {Name: "c", Dominated: "b does as much for less"}}, figs, mustRequire(t, "lost_acked == 0"), "p95_ms")
	if len(ranked) != 2 || ranked[0].Candidate.Name != "b" {
		t.Fatalf("ranked %+v: want b (1 lost) before a (718), and the dominated c left out", ranked)
	}
}

// On gcsfuse the data is in the bucket, so the cheaper of request-based and instance-based billing
// is billed: at 0.5 requests/s of 5 ms the instance is idle almost always and request-based costs
// less; at 50 requests/s every 0.1 s step holds a request and instance-based costs less.
func TestGcsfuseIsBilledTheCheaperWay(t *testing.T) {
	p := &Plan{Platform: Platform{Kind: "cloudrun", CPUs: 1, Memory: 512 << 20}, DBBytes: 1 << 30}
	for _, c := range []struct {
		rate float64
		want cost.Billing
	}{{0.5, cost.RequestBased}, {50, cost.InstanceBased}} {
		p.Rate = c.rate
		at := &results.Aggregate{Median: map[string]float64{"service_avg_ms": 5},
			Bucket: &results.BucketUse{ClassAPerS: c.rate / 100, ClassBPerS: c.rate / 10}}
		lines, priced, _, notes := p.bill(Candidate{Name: "gcsfuse", Backend: "gcsfuse", Bucket: BucketData}, at, nil)
		if !priced || len(notes) != 1 {
			t.Fatalf("at %g/s: priced %v, notes %q", c.rate, priced, notes)
		}
		var billed []string
		for _, l := range lines {
			if strings.HasPrefix(l.Item, "Cloud Run vCPU") {
				billed = append(billed, l.Item)
			}
		}
		if len(billed) != 1 || !strings.Contains(billed[0], string(c.want)) {
			t.Errorf("at %g/s billed %v, want %s (%q)", c.rate, billed, c.want, notes)
		}
		// The local disk keeps its data on the instance: always on, instance-based.
		lines, _, _, _ = p.bill(Candidate{Name: "local", Backend: "local"}, at, nil)
		if !strings.Contains(lines[0].Item, string(cost.InstanceBased)) {
			t.Errorf("local at %g/s billed %s", c.rate, lines[0].Item)
		}
	}
}

// An app that speaks MySQL gets the Cloud SQL design on Cloud Run and GCE, whatever its database's
// size against the instance's memory (the data is on the server), and not on EC2. Its bill holds
// the server's machine at Cloud SQL's prices and its disk, and, its instance keeping no data, the
// cheaper of Cloud Run's two billings: request-based at 0.5 requests/s of 5 ms, instance-based at 50.
func TestCloudSQLServesAnAppThatSpeaksMySQL(t *testing.T) {
	app := App{Name: "counter", SQLite: true, MySQL: true}
	find := func(cs []Candidate) Candidate {
		for _, c := range cs {
			if c.Name == "cloud-sql" {
				return c
			}
		}
		t.Fatal("no cloud-sql candidate")
		return Candidate{}
	}
	for _, platform := range []string{"cloudrun", "n1-standard-2", "c4.large"} {
		pl, err := ParsePlatform(platform, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := find(Candidates(app, pl, 50, 512<<20, 0))
		if want := platform != "c4.large"; (c.Excluded == "") != want {
			t.Errorf("on %s: cloud-sql excluded %q, want runnable %v", platform, c.Excluded, want)
		}
	}
	cloudRun := Platform{Kind: "cloudrun", CPUs: 1, Memory: 512 << 20}
	if c := find(Candidates(App{Name: "own", SQLite: true}, cloudRun, 50, 100<<20, 0)); !strings.Contains(c.Excluded, "mysql_env") {
		t.Errorf("an app that names no server: cloud-sql excluded %q, want the section that would name one", c.Excluded)
	}
	if c := find(Candidates(App{Name: "counter", SQLite: true, Pragmas: true}, cloudRun, 50, 100<<20, 0)); !strings.Contains(c.Excluded, "pragmas") {
		t.Errorf("a counter with its own SQLite pragmas: cloud-sql excluded %q", c.Excluded)
	}
	if c := find(Candidates(app, cloudRun, 50, 100<<20, 0)); c.Options["network_rtt"] != "" {
		t.Errorf("no round trip given: options %v, want none added", c.Options)
	}
	withRTT := cloudRun
	withRTT.CloudSQLRTT = 1500 * time.Microsecond
	if c := find(Candidates(app, withRTT, 50, 100<<20, 0)); c.Options["network_rtt"] != "1.5ms" {
		t.Errorf("a round trip of 1.5ms: options %v, want network_rtt 1.5ms", c.Options)
	}
	p := &Plan{Platform: Platform{Kind: "cloudrun", CPUs: 1, Memory: 512 << 20}, DBBytes: 8 << 30}
	c := find(Candidates(app, p.Platform, 1, p.DBBytes, 0))
	if c.Volume == nil || c.Volume.SizeBytes != 16<<30 || c.Options["size"] != "16GiB" || c.Options["machine"] != CloudSQLMachine {
		t.Fatalf("an 8 GiB database: %+v, want a 16 GiB disk on %s", c, CloudSQLMachine)
	}
	diskUSD, _ := c.Volume.MonthlyUSD()
	for _, at := range []struct {
		rate float64
		want cost.Billing
	}{{0.5, cost.RequestBased}, {50, cost.InstanceBased}} {
		p.Rate = at.rate
		lines, priced, _, notes := p.bill(c, &results.Aggregate{Median: map[string]float64{"service_avg_ms": 5}}, nil)
		if !priced {
			t.Fatalf("at %g/s not priced: %q", at.rate, notes)
		}
		got := map[string]float64{}
		for _, l := range lines {
			got[l.Item] = l.USDPerMonth
			if strings.HasPrefix(l.Item, "Cloud Run vCPU") && !strings.Contains(l.Item, string(at.want)) {
				t.Errorf("at %g/s billed %s, want %s (%q)", at.rate, l.Item, at.want, notes)
			}
		}
		hours := float64(cost.SecondsPerMonth) / 3600
		if want := hours * (cost.CloudSQLVCPUHourUSD + 3.75*cost.CloudSQLMemoryGiBHourUSD); math.Abs(got["Cloud SQL instance "+CloudSQLMachine]-want) > 1e-9 {
			t.Errorf("the server: %v, want %v (1 vCPU and 3.75 GiB a month)", got, want)
		}
		if got["volume cloudsql-ssd"] != diskUSD || diskUSD <= 0 {
			t.Errorf("the disk: %v, want %v", got, diskUSD)
		}
	}
}

// With several Cloud Run instances only a server is one place they all write to: every other
// design is excluded naming why, the steady runs split the load between the instances, a crash
// run crashes one at its share of the rate, and the bill holds every instance.
func TestSeveralInstancesLeaveOnlyAServer(t *testing.T) {
	app := App{Name: "counter", SQLite: true, MySQL: true, Crashable: true}
	one, _ := ParsePlatform("cloudrun", 0, 0)
	two, err := one.WithInstances(2)
	if err != nil {
		t.Fatal(err)
	}
	cands := Candidates(app, two, 20, 100<<20, 0)
	var server Candidate
	for _, c := range cands {
		switch {
		case c.Backend == "cloudsql":
			server = c
		case c.Excluded == "":
			t.Errorf("%s runs with two instances, want it excluded", c.Name)
		}
	}
	if server.Excluded != "" {
		t.Fatalf("cloud-sql excluded with two instances: %q", server.Excluded)
	}
	for _, c := range Candidates(app, one, 20, 100<<20, 0) { // the same designs for one instance run
		if c.Backend == "litestream" && c.Excluded != "" {
			t.Errorf("%s excluded for one instance: %q", c.Name, c.Excluded)
		}
	}
	for _, c := range cands {
		if c.Backend == "litestream" && !strings.Contains(c.Excluded, "2 instances") {
			t.Errorf("%s: excluded %q, want why two instances cannot share it", c.Name, c.Excluded)
		}
	}
	reqs := mustRequire(t, "p95 < 100ms")
	p, err := NewPlan(app, two, 20, 100<<20, reqs, 15*time.Minute, 2, 0, []Candidate{server})
	if err != nil {
		t.Fatal(err)
	}
	if p.Connections < 2 {
		t.Errorf("%d connections for two instances: want one each at least", p.Connections)
	}
	if s := p.spec(server, "steady"); s.Instances != 2 {
		t.Errorf("the steady runs: %d instances, want 2", s.Instances)
	}
	crash := p.spec(server, "crash")
	if crash.Instances > 1 || crash.Sweep[0].Text != "10" || crash.Sweep[1].Text != strconv.Itoa((p.Connections+1)/2) {
		t.Errorf("the crash runs: %d instances at rate %q over %q connections, want one at its share, 10 over %d", crash.Instances, crash.Sweep[0].Text, crash.Sweep[1].Text, (p.Connections+1)/2)
	}
	git := App{Name: "git", Kind: KindChanges, Crashable: true}
	if _, err := NewPlan(git, two, 20, 100<<20, reqs, 15*time.Minute, 2, 0, []Candidate{server}); err == nil || !strings.Contains(err.Error(), "--instances") {
		t.Errorf("git on two instances: %v", err)
	}
	if _, err := NewPlan(app, two, 20, 100<<20, reqs, 15*time.Minute, 2, 1, []Candidate{server}); err == nil || !strings.Contains(err.Error(), "--connections") {
		t.Errorf("one connection for two instances: %v", err)
	}
	cloudRun := func(pl Platform) float64 {
		plan := &Plan{Platform: pl, DBBytes: 100 << 20, Rate: 20}
		lines, priced, _, notes := plan.bill(server, &results.Aggregate{Median: map[string]float64{"service_avg_ms": 40}}, nil)
		if !priced {
			t.Fatalf("not priced: %q", notes)
		}
		usd := 0.0
		for _, l := range lines {
			if strings.HasPrefix(l.Item, "Cloud Run") {
				usd += l.USDPerMonth
			}
		}
		return usd
	}
	if a, b := cloudRun(one), cloudRun(two); b <= a || math.Abs(b-2*a) > 0.01*a {
		t.Errorf("Cloud Run's bill: $%.2f for one instance, $%.2f for two: want twice", a, b)
	}
	var fe *param.FieldError
	if _, err := one.WithInstances(9); !errors.As(err, &fe) || fe.Field != "--instances" {
		t.Errorf("nine instances: %v", err)
	}
	vm, _ := ParsePlatform("n1-standard-2", 0, 0)
	if _, err := vm.WithInstances(2); !errors.As(err, &fe) || !strings.Contains(fe.Allowed, "cloudrun") {
		t.Errorf("two instances of a VM: %v", err)
	}
}

// A run at the rate that counted too few bucket operations to price alone is priced from all
// the candidate's steady runs pooled, at the higher of per second and per request times the rate;
// too few even pooled, each count is billed at its 95% upper bound, and the bill says it is one.
func TestTooFewOperationsAtTheRateArePricedFromTheSteadyRunsPooled(t *testing.T) {
	p := &Plan{Platform: Platform{Kind: "cloudrun", CPUs: 1, Memory: 512 << 20}, DBBytes: 100 << 20, Rate: 20}
	cell := func(rate string, classA, ok, seconds float64) results.Cell {
		c := results.Cell{ElapsedS: seconds, Metrics: map[string]float64{"ok": ok},
			BackendStats: map[string]float64{lab.BucketClassA: classA, lab.BucketClassB: 0}}
		c.Backend, c.Params = "gcsfuse", map[string]string{"rate": rate}
		return c
	}
	atRate := &results.Aggregate{Backend: "gcsfuse", Median: map[string]float64{"service_avg_ms": 5},
		Bucket: &results.BucketUse{ClassAOps: 0, TooFewToPrice: true}}
	classA := func(lines []cost.Line) float64 {
		for _, l := range lines {
			if strings.Contains(l.Item, "class A") {
				return l.USDPerMonth
			}
		}
		return 0
	}
	perMonth := func(perS float64) float64 { return perS * cost.SecondsPerMonth / 1000 * cost.GCSClassAPer1000USD }
	gcsfuse := Candidate{Name: "gcsfuse", Backend: "gcsfuse", Bucket: BucketData}

	// Uploads that come with writes (a checkpoint per so many): 0 in 32 s at 20/s, 30 at 40/s.
	// Per second pooled: 30/64 s; per request: 30/1920 x 20/s, less: the higher is billed.
	steady := &results.Results{Cells: []results.Cell{cell("20", 0, 640, 32), cell("40", 30, 1280, 32)}}
	lines, priced, atMost, notes := p.bill(gcsfuse, atRate, steady)
	if !priced || atMost != 0 {
		t.Fatalf("priced %v, at most $%g: %q", priced, atMost, notes)
	}
	if got, want := classA(lines), perMonth(30.0/64); math.Abs(got-want) > 1e-6*want {
		t.Errorf("class A billed $%.4f a month, want $%.4f (30 operations in 64 s): %q", got, want, notes)
	}
	if !strings.Contains(strings.Join(notes, " "), "pooled") {
		t.Errorf("the bill does not say it was pooled: %q", notes)
	}

	// Uploads that come with requests faster than with time: per request times the rate wins.
	steady = &results.Results{Cells: []results.Cell{cell("20", 4, 64, 32), cell("40", 8, 128, 32)}}
	lines, priced, _, _ = p.bill(gcsfuse, atRate, steady)
	if got, want := classA(lines), perMonth(12.0/192*20); !priced || math.Abs(got-want) > 1e-6*want {
		t.Errorf("class A billed $%.4f a month (priced %v), want $%.4f (12 operations in 192 requests, at 20/s)", got, priced, want)
	}

	// Too few even pooled (4 class A, 0 class B): each count billed at its 95% upper bound (9.15
	// and 3.0), every operations line a bound.
	steady = &results.Results{Cells: []results.Cell{cell("20", 0, 640, 32), cell("40", 4, 1280, 32)}}
	lines, priced, atMost, notes = p.bill(gcsfuse, atRate, steady)
	ops := 0.0
	for _, l := range lines {
		if strings.Contains(l.Item, " operations") {
			ops += l.USDPerMonth
		}
	}
	if got, want := classA(lines), perMonth(poissonUpper(4)/64); !priced || math.Abs(atMost-ops) > 1e-9 || ops <= got || math.Abs(got-want) > 1e-6*want {
		t.Errorf("4 operations pooled: class A $%.4f a month, at most $%.4f of $%.4f of operations (priced %v), want $%.4f: %q", got, atMost, ops, priced, want, notes)
	}
	if u := poissonUpper(4); u < 9.1 || u > 9.2 {
		t.Errorf("the 95%% upper bound on a Poisson count of 4 is %.3f, want 9.15", u)
	}
	if u := poissonUpper(0); u < 2.98 || u > 3.01 {
		t.Errorf("the 95%% upper bound on a Poisson count of 0 is %.3f, want 3.0", u)
	}
}

// A bill with an upper bound in it meets a budget the whole bill meets, misses one the rest of the
// bill misses, and cannot tell between.
func TestABoundedBillIsJudgedWhereBothEndsAgree(t *testing.T) {
	f := figures(5, 9, 0, 3, 50)
	f.Bill = append(f.Bill, cost.Line{Item: "GCS class A operations", USDPerMonth: 4})
	f.AtMostUSD = 4
	for _, c := range []struct {
		budget        string
		meets, judged bool
		missedBy      string // the figure a miss names: the end nearer the bound
	}{
		{"usd_per_month < 60", true, true, ""},
		{"usd_per_month < 40", false, true, "at least $50.00"},
		{"usd_per_month < 52", false, false, ""},
		{"usd_per_month > 45", true, true, ""},
		{"usd_per_month > 60", false, true, "at most $54.00"},
		{"usd_per_month == 54", false, false, ""},
	} {
		v := Judge(Candidate{Name: "gcsfuse"}, f, mustRequire(t, c.budget))
		if v.Meets != c.meets || (len(v.Unjudged) == 0) != c.judged {
			t.Errorf("%s on $50 plus at most $4: meets %v, unjudged %v", c.budget, v.Meets, v.Unjudged)
		}
		if c.missedBy != "" && (len(v.Fails) != 1 || v.Fails[0].figure() != c.missedBy) {
			t.Errorf("%s on $50 plus at most $4: fails %+v, want it missed by %s", c.budget, v.Fails, c.missedBy)
		}
	}
	if got := usdCell(f); got != "<= 54.00" {
		t.Errorf("the bill's cell %q, want <= 54.00", got)
	}
}

// The ranking's FAILS column says by how much: each missed requirement with the figure that
// missed it, and what cannot be told.
func TestTheFailsColumnGivesEachMissedFigure(t *testing.T) {
	f := figures(130, 200, 12, 3, 95)
	f.Crash[MetricLostWindow] = 4200
	v := Judge(Candidate{Name: "local"}, f, mustRequire(t, "p95 < 100ms", "lost_acked == 0", "lost_acked <= 1s", "usd_per_month < 80"))
	got := failText(v, false)
	want := "p95 < 100ms: 130 ms; lost_acked == 0: 12 lost; lost_acked <= 1s: lost one acked 4.2 s before; usd_per_month < 80: $95.00"
	if got != want {
		t.Errorf("fails column %q, want %q", got, want)
	}
	f.Priced = false
	if got := failText(Judge(Candidate{Name: "local"}, f, mustRequire(t, "usd_per_month < 80")), false); got != "usd_per_month < 80 (cannot tell)" {
		t.Errorf("an unpriced bill: %q", got)
	}
}

// twiceFigures are figures with a bill at twice the rate too.
func twiceFigures(p95, p95Double, usd, usdDouble float64) Figures {
	f := figures(p95, p95Double, 0, 3, usd)
	f.DoubleBill, f.DoublePriced = []cost.Line{{Item: "all", USDPerMonth: usdDouble}}, true
	return f
}

// The answer is ranked again from the runs at twice the rate: where the price alone changes it,
// the rate between the two at which the bills cross is said; where the top's latency does, the
// new answer is named; where nothing ran there, nothing is said.
func TestTheAnswerAtTwiceTheRateSaysWhereTheRankingFlips(t *testing.T) {
	cands := []Candidate{{Name: "gcsfuse"}, {Name: "litestream-1s"}, {Name: "local"}}
	p := &Plan{App: App{Name: "counter"}, Platform: Platform{Kind: "cloudrun", CPUs: 1, Memory: 512 << 20}, Rate: 20,
		Requirements: mustRequire(t, "p95 < 100ms", "usd_per_month < 100"), Candidates: cands, Crashes: 3, Duration: 30 * time.Second}
	figs := map[string]Figures{
		"gcsfuse":       twiceFigures(10, 12, 50, 70), // its operations grow with the rate
		"litestream-1s": twiceFigures(8, 9, 60, 62),
		"local":         twiceFigures(5, 6, 65, 65),
	}
	a := p.Advise(figs, nil)
	if a.Ranked[0].Candidate.Name != "gcsfuse" || a.Twice == nil || a.Twice.Top != "litestream-1s" || !a.Twice.Meets {
		t.Fatalf("top %s, at twice the rate %+v: want gcsfuse, then litestream-1s", a.Ranked[0].Candidate.Name, a.Twice)
	}
	// $50 + 20t = $60 + 2t at t = 10/18 of the way from 20/s to 40/s: 31.1/s.
	if want := 20 * (1 + 10.0/18); math.Abs(a.Twice.FlipsAt-want) > 1e-9 {
		t.Errorf("the bills cross at %g/s, want %g", a.Twice.FlipsAt, want)
	}
	if got := strings.Join(a.Changes, "\n"); !strings.Contains(got, "becomes litestream-1s") || !strings.Contains(got, "31.1/s") {
		t.Errorf("what would change the answer does not say it flips at 31.1/s:\n%s", got)
	}

	// gcsfuse too slow at 40/s: the answer there is the next that meets, and no crossing is said.
	figs["gcsfuse"] = twiceFigures(10, 150, 50, 50)
	a = p.Advise(figs, nil)
	if a.Twice == nil || a.Twice.Top != "litestream-1s" || a.Twice.FlipsAt != 0 {
		t.Errorf("at twice the rate %+v: want litestream-1s, with no crossing (gcsfuse fails on latency there)", a.Twice)
	}
	if got := strings.Join(a.Changes, "\n"); !strings.Contains(got, "no longer meets p95 < 100ms") || strings.Contains(got, "falls below") {
		t.Errorf("what would change the answer:\n%s", got)
	}

	// Every candidate too slow there: none meets, the closest named.
	for name, f := range figs {
		f.AtDouble["p95_ms"] = 200
		figs[name] = f
	}
	if a = p.Advise(figs, nil); a.Twice == nil || a.Twice.Meets || !strings.Contains(strings.Join(a.Changes, "\n"), "no candidate meets every requirement; the closest is") {
		t.Errorf("every candidate at 200 ms at twice the rate: %+v, %q", a.Twice, a.Changes)
	}

	// No run at twice the rate: no answer there.
	for name, f := range figs {
		f.AtDouble, f.DoubleBill, f.DoublePriced = nil, nil, false
		figs[name] = f
	}
	if a = p.Advise(figs, nil); a.Twice != nil {
		t.Errorf("no run at twice the rate, yet an answer there: %+v", a.Twice)
	}
}

// At twice the rate a crash is taken to lose twice the writes it lost at the rate, and a pace to
// need twice the rate: keeping up with it meets the requirement keeping up with the rate does.
func TestFiguresAtTwiceTheRateDoubleTheLossAndHalveThePace(t *testing.T) {
	f := figures(5, 9, 12, 3, 10)
	f.AtDouble[PaceMetric] = 40
	twice := f.AtTwice(PaceMetric)
	if twice.Crash[MetricLostAcked] != 24 || twice.Crash[MetricLostWindow] != f.Crash[MetricLostWindow] {
		t.Errorf("at twice the rate: lost %g (want 24), window %g (want %g, kept)", twice.Crash[MetricLostAcked], twice.Crash[MetricLostWindow], f.Crash[MetricLostWindow])
	}
	if twice.AtRate[PaceMetric] != 20 || twice.AtRate["p95_ms"] != 9 || f.Crash[MetricLostAcked] != 12 || f.AtDouble[PaceMetric] != 40 {
		t.Errorf("pace %g (want 20), p95 %g (want 9); the figures themselves changed: %v, %v", twice.AtRate[PaceMetric], twice.AtRate["p95_ms"], f.Crash, f.AtDouble)
	}
}

// A Litestream candidate's cells shorter than two of its sync intervals count the uploads of its
// start, not of its syncs: its bucket operations are not priced, and the bill says why; cells
// holding several syncs are priced.
func TestLitestreamCellsShorterThanTwoSyncsAreNotPriced(t *testing.T) {
	p := &Plan{Platform: Platform{Kind: "cloudrun", CPUs: 1, Memory: 512 << 20}, DBBytes: 100 << 20, Rate: 20, Duration: 32 * time.Second}
	at := &results.Aggregate{Median: map[string]float64{"service_avg_ms": 5}, Bucket: &results.BucketUse{ClassAOps: 30, ClassAPerS: 1}}
	for iv, want := range map[string]bool{"1s": true, "10s": true, "16s": true, "17s": false, "60s": false} {
		c := Candidate{Name: "litestream-" + iv, Backend: "litestream", Bucket: BucketReplica, Options: map[string]string{"sync_interval": iv}}
		_, priced, _, notes := p.bill(c, at, nil)
		said := strings.Contains(strings.Join(notes, " "), "shorter than two of its sync intervals")
		if priced != want || said == want {
			t.Errorf("sync interval %s in 32 s cells: priced %v, notes %q; want priced %v", iv, priced, notes, want)
		}
	}
}

// --bucket picks the object store a bucket design is billed on: the platform's own cloud's by
// default; gcsfuse, which mounts GCS alone, is excluded on another; a Litestream replica on
// another cloud's bucket pays the egress of the bytes its run moved, both ways, at each
// network's price (R2's own is free; Cloud Run's uploads to it are not).
func TestTheBucketIsBilledOnItsOwnListWithTheEgressBetweenClouds(t *testing.T) {
	run, _ := ParsePlatform("cloudrun", 0, 0)
	ec2, _ := ParsePlatform("c4.large", 0, 0)
	for _, c := range []struct {
		p       Platform
		word    string
		want    string
		network cost.Network
	}{{run, "", "GCS", cost.NetworkGCP}, {ec2, "", "S3", cost.NetworkAWS}, {run, "S3", "S3", cost.NetworkAWS}, {run, "r2", "R2", cost.NetworkR2}} {
		got, err := c.p.WithBucket(c.word)
		if err != nil || got.Bucket != c.want {
			t.Errorf("%s with --bucket %q: %q, %v; want %s", c.p, c.word, got.Bucket, err, c.want)
		}
		if got.bucketNetwork() != c.network {
			t.Errorf("%s with --bucket %q: the bucket is on %q's network, want %q's", c.p, c.word, got.bucketNetwork(), c.network)
		}
	}
	var fe *param.FieldError
	if _, err := run.WithBucket("azure"); !errors.As(err, &fe) || fe.Field != "--bucket" || !strings.Contains(fe.Allowed, "r2") {
		t.Errorf("--bucket azure: %v", err)
	}
	app := App{Name: "counter", SQLite: true}
	onS3, _ := run.WithBucket("s3")
	for _, c := range Candidates(app, onS3, 50, 100<<20, 0) {
		if c.Backend == "gcsfuse" && !strings.Contains(c.Excluded, "Cloud Storage buckets only") {
			t.Errorf("gcsfuse on an S3 bucket: excluded %q", c.Excluded)
		}
		if c.Backend == "litestream" && (c.Excluded != "" || !strings.Contains(c.What, "an S3 bucket")) {
			t.Errorf("%s on an S3 bucket: excluded %q, %q", c.Name, c.Excluded, c.What)
		}
	}

	litestream := Candidate{Name: "litestream-1s", Backend: "litestream", Bucket: BucketReplica, Options: map[string]string{"sync_interval": "1s"}}
	at := &results.Aggregate{Median: map[string]float64{"service_avg_ms": 5},
		Bucket: &results.BucketUse{Unit: requestsServed.Name, ClassAOps: 40, ClassAPerS: 1.25, BytesIn: 1000, BytesOut: 100}}
	line := func(lines []cost.Line, prefix string) (cost.Line, bool) {
		for _, l := range lines {
			if strings.HasPrefix(l.Item, prefix) {
				return l, true
			}
		}
		return cost.Line{}, false
	}
	month := func(bytesPerS, perGiB float64) float64 { return bytesPerS * cost.SecondsPerMonth / cost.GiB * perGiB }
	for _, c := range []struct {
		word         string
		ops          string
		upUSD, inUSD float64 // egress of the uploads (Cloud Run's) and of the reads (the bucket's)
	}{
		{"gcs", "GCS class A", 0, 0},
		{"s3", "S3 class A", month(20*1000, cost.GCPInternetEgressPerGiBUSD), month(20*100, cost.AWSInternetEgressPerGiBUSD)},
		{"r2", "R2 class A", month(20*1000, cost.GCPInternetEgressPerGiBUSD), 0},
	} {
		pl, _ := run.WithBucket(c.word)
		p := &Plan{Platform: pl, DBBytes: 100 << 20, Rate: 20, Duration: 32 * time.Second}
		lines, priced, _, notes := p.bill(litestream, at, nil)
		if _, ok := line(lines, c.ops); !priced || !ok {
			t.Errorf("--bucket %s: priced %v, no %q line: %+v %q", c.word, priced, c.ops, lines, notes)
		}
		up, upOK := line(lines, "GCP egress: uploads")
		if (c.upUSD > 0) != upOK || math.Abs(up.USDPerMonth-c.upUSD) > 1e-9 {
			t.Errorf("--bucket %s: the uploads' egress %+v, want $%.4f", c.word, up, c.upUSD)
		}
		back, backOK := line(lines, string(pl.bucketNetwork())+" egress: reads")
		if c.word == "gcs" && backOK || c.word != "gcs" && (!backOK || math.Abs(back.USDPerMonth-c.inUSD) > 1e-9) {
			t.Errorf("--bucket %s: the reads' egress %+v (found %v), want $%.4f", c.word, back, backOK, c.inUSD)
		}
	}
}

// A k6 script drives the steady runs (its iterations at the rate, no list of requests beside
// it), the crash runs keep persistlab's driver; the bill is at the requests the script's
// iterations made, and falling behind is read from the iterations k6 could not start.
func TestAK6ScriptDrivesTheSteadyRunsAndItsRequestsSetTheBill(t *testing.T) {
	run, _ := ParsePlatform("cloudrun", 0, 0)
	onS3, _ := run.WithBucket("s3")
	w := scenario.Workload{Type: "http", Params: map[string]string{"method": "POST", "path": "/count_up", "ack": "count", "recover": "/count"},
		Sections: map[string]any{"requests": []any{map[string]any{"path": "/count_up"}}}}
	app := App{Name: "mine", Workload: w, SQLite: true, Crashable: true, K6Script: "/scripts/mix.js"}
	litestream := Candidate{Name: "litestream-1s", Backend: "litestream", Bucket: BucketReplica, Options: map[string]string{"sync_interval": "1s"}}
	p := &Plan{App: app, Platform: onS3, Rate: 10, DBBytes: 100 << 20, Duration: 30 * time.Second, Crashes: 1, Connections: 2, Candidates: []Candidate{litestream}}

	steady, crash := p.spec(litestream, "steady"), p.spec(litestream, "crash")
	if got := steady.Workload.Params["k6_script"]; got != app.K6Script {
		t.Errorf("steady k6_script %q, want %q", got, app.K6Script)
	}
	if _, ok := steady.Workload.Params["method"]; ok {
		t.Errorf("steady runs keep the driver's method beside the script: %v", steady.Workload.Params)
	}
	if crash.Workload.Params["method"] != "POST" || crash.Workload.Params["path"] != "/count_up" {
		t.Errorf("crash runs lost the driver's request: %v", crash.Workload.Params)
	}
	if _, ok := steady.Workload.Sections["requests"]; ok {
		t.Errorf("steady runs keep the list of requests beside the script: %v", steady.Workload.Sections)
	}
	if _, ok := crash.Workload.Params["k6_script"]; ok || crash.Workload.Sections["requests"] == nil {
		t.Errorf("crash runs: params %v, sections %v: want persistlab's driver and the app's requests", crash.Workload.Params, crash.Workload.Sections)
	}
	if _, ok := app.Workload.Sections["requests"]; !ok {
		t.Errorf("the app's own workload lost its requests")
	}

	agg := func(rate string, answered, dropped float64) results.Aggregate {
		return results.Aggregate{Backend: litestream.Name, Point: "rate=" + rate, Params: map[string]string{"rate": rate},
			Median: map[string]float64{"rate": answered, "dropped": dropped, "service_avg_ms": 5},
			Bucket: &results.BucketUse{Unit: requestsServed.Name, ClassAOps: 40, ClassAPerS: 1.25, BytesIn: 1000, BytesOut: 100}}
	}
	res := &results.Results{Aggregates: []results.Aggregate{agg("10", 30, 0), agg("20", 55, 12)}}
	f := p.Measured(litestream, res, "steady.json", nil, "")
	notes := strings.Join(f.Notes, "\n")
	if !strings.Contains(notes, "at 20/s k6 could not start 12 iterations") || strings.Contains(notes, "at 10/s k6") || strings.Contains(notes, "it answered") {
		t.Errorf("notes %q: want the 12 iterations not started at 20/s alone", notes)
	}
	if !strings.Contains(notes, "30.0 requests/s answered (3.00 an iteration)") {
		t.Errorf("notes %q: want the requests an iteration made", notes)
	}
	uploads := func(p *Plan) float64 {
		for _, l := range p.Measured(litestream, res, "steady.json", nil, "").Bill {
			if strings.HasPrefix(l.Item, "GCP egress: uploads") {
				return l.USDPerMonth
			}
		}
		return 0
	}
	byRequest := *p
	byRequest.App.K6Script = ""
	if script, plain := uploads(p), uploads(&byRequest); plain <= 0 || math.Abs(script/plain-3) > 1e-9 {
		t.Errorf("the uploads' egress $%.4f with the script, $%.4f at one request an iteration: want 3 times", script, plain)
	}
	a := p.Advise(map[string]Figures{litestream.Name: f}, nil)
	if !strings.Contains(a.Question, "10 iterations/s of its k6 script mix.js") || !strings.Contains(a.Plan, "persistlab's driver (the workload's list of requests)") {
		t.Errorf("question %q, plan %q", a.Question, a.Plan)
	}
}
