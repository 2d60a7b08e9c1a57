package cost

import (
	"math"
	"slices"
	"strings"
	"testing"
)

const month = float64(SecondsPerMonth)

func line(t *testing.T, b Bill, item string) Line {
	t.Helper()
	for _, l := range b.Lines {
		if l.Item == item {
			return l
		}
	}
	t.Fatalf("no line %q in %+v", item, b.Lines)
	return Line{}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

func mustBill(t *testing.T, u Usage) Bill {
	t.Helper()
	b, err := u.Bill()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each line is its usage times its published price; the total is their sum.
func TestBillLinesArePublishedPricesTimesUsage(t *testing.T) {
	u := Usage{
		Billing: RequestBased, Instances: 2, VCPUs: 1, GiB: 0.5, RequestsPerS: 20,
		// Busy half the time in spells of 0.4 s: a whole number of 100 ms steps, so nothing is rounded.
		BusyShare: 0.5, BusySpellsPerS: 1.25,
		Bucket: "GCS", ClassAPerS: 0.5, ClassBPerS: 3, DeletesPerS: 0.2, StoredBytes: 10 * GiB,
		Egress: []Egress{{What: "uploads to S3", From: NetworkGCP, BytesPerS: 1 << 20}},
		Priced: []Line{{Item: "pd-balanced", USDPerMonth: 1.25, How: "12.5 GiB x $0.10", Source: "pd-pricing"}},
	}
	b := mustBill(t, u)
	busySeconds := 2 * 0.5 * month // two instances, each billed half the month
	want := map[string]float64{
		"Cloud Run vCPU, request-based":   busySeconds * 1 * CloudRunRequestVCPUSecondUSD,
		"Cloud Run memory, request-based": busySeconds * 0.5 * CloudRunRequestGiBSecondUSD,
		"Cloud Run requests":              20 * month / 1e6 * CloudRunPerMillionRequestsUSD,
		"GCS class A operations":          0.5 * month / 1000 * GCSClassAPer1000USD,
		"GCS class B operations":          3 * month / 1000 * GCSClassBPer1000USD,
		"GCS deletes":                     0,
		"GCS storage":                     10 * GCSStoragePerGiBMonthUSD,
		"GCP egress: uploads to S3":       month / 1024 * GCPInternetEgressPerGiBUSD, // 1 MiB/s is a GiB every 1,024 s
		"pd-balanced":                     1.25,
	}
	var total float64
	for item, usd := range want {
		l := line(t, b, item)
		if !near(l.USDPerMonth, usd) {
			t.Errorf("%s: $%v, want $%v (%s)", item, l.USDPerMonth, usd, l.How)
		}
		if l.How == "" || l.Source == "" {
			t.Errorf("%s: how %q, source %q", item, l.How, l.Source)
		}
		total += usd
	}
	if len(b.Lines) != len(want) {
		t.Errorf("%d lines, want %d: %+v", len(b.Lines), len(want), b.Lines)
	}
	if !near(b.Total(), total) {
		t.Errorf("total $%v, want $%v", b.Total(), total)
	}
	if h := line(t, b, "GCS deletes").How; !strings.Contains(h, "free") {
		t.Errorf("deletes: %q does not say they are free", h)
	}

	// The same on S3 and R2: their own prices; R2's egress costs nothing.
	u = Usage{Bucket: "R2", ClassAPerS: 0.5, ClassBPerS: 3, StoredBytes: 10 * GiB, Egress: []Egress{{What: "restores", From: NetworkR2, BytesPerS: 1 << 20}}}
	b = mustBill(t, u)
	for item, usd := range map[string]float64{
		"R2 class A operations": 0.5 * month / 1e6 * 4.50, // the page's $4.50 per million
		"R2 class B operations": 3 * month / 1e6 * 0.36,
		"R2 storage":            10 * R2StoragePerGiBMonthUSD,
		"R2 egress: restores":   0,
	} {
		if l := line(t, b, item); !near(l.USDPerMonth, usd) {
			t.Errorf("%s: $%v, want $%v", item, l.USDPerMonth, usd)
		}
	}
	u.Bucket, u.Egress = "S3", []Egress{{What: "restores", From: NetworkAWS, BytesPerS: 1 << 20}}
	b = mustBill(t, u)
	if l := line(t, b, "S3 storage"); !near(l.USDPerMonth, 10*S3StoragePerGiBMonthUSD) {
		t.Errorf("S3 storage $%v", l.USDPerMonth)
	}
	if l := line(t, b, "AWS egress: restores"); !near(l.USDPerMonth, month/1024*AWSInternetEgressPerGiBUSD) {
		t.Errorf("AWS egress $%v", l.USDPerMonth)
	}
}

// Instance-based billing bills every instance all month at its own rates, and no requests.
func TestBillInstanceBased(t *testing.T) {
	b := mustBill(t, Usage{Billing: InstanceBased, Instances: 3, VCPUs: 2, GiB: 1, RequestsPerS: 50, BusyShare: 0.2})
	if l := line(t, b, "Cloud Run vCPU, instance-based"); !near(l.USDPerMonth, 3*month*2*CloudRunInstanceVCPUSecondUSD) {
		t.Errorf("vCPU $%v", l.USDPerMonth)
	}
	if l := line(t, b, "Cloud Run memory, instance-based"); !near(l.USDPerMonth, 3*month*1*CloudRunInstanceGiBSecondUSD) {
		t.Errorf("memory $%v", l.USDPerMonth)
	}
	if len(b.Lines) != 2 {
		t.Errorf("instance-based bills no requests: %+v", b.Lines)
	}
}

// A request much shorter than the granularity is billed as a whole step: 5 ms requests arriving
// once a second are billed 100 ms each, about 20 times their busy time.
func TestBillRoundsEachBusySpellUp(t *testing.T) {
	const rate, busy = 1.0, 0.005 // one 5 ms request a second
	b := mustBill(t, Usage{Billing: RequestBased, Instances: 1, VCPUs: 1, GiB: 1, RequestsPerS: rate, BusyShare: busy})
	got := line(t, b, "Cloud Run vCPU, request-based").USDPerMonth
	// Poisson arrivals: an arrival finding the instance idle starts a spell, rate x (1 - busy) a
	// second, each billed one step.
	want := rate * (1 - busy) * CloudRunRoundSeconds * month * CloudRunRequestVCPUSecondUSD
	if !near(got, want) {
		t.Errorf("vCPU $%v, want $%v", got, want)
	}
	if unrounded := busy * month * CloudRunRequestVCPUSecondUSD; got/unrounded < 19 {
		t.Errorf("rounding multiplies the busy time by %.1f, want about 20", got/unrounded)
	}
	// A measured spell count replaces the estimate: one spell a second of 5 ms, billed one step.
	b = mustBill(t, Usage{Billing: RequestBased, Instances: 1, VCPUs: 1, GiB: 1, RequestsPerS: rate, BusyShare: busy, BusySpellsPerS: 1})
	if got := line(t, b, "Cloud Run vCPU, request-based").USDPerMonth; !near(got, CloudRunRoundSeconds*month*CloudRunRequestVCPUSecondUSD) {
		t.Errorf("measured spells: $%v", got)
	}
}

func cloudRunTotal(t *testing.T, billing Billing, busy, ratePerInstance float64) float64 {
	t.Helper()
	return mustBill(t, Usage{Billing: billing, Instances: 1, VCPUs: 1, GiB: 0.5, RequestsPerS: ratePerInstance, BusyShare: busy}).Total()
}

// Instance-based is cheaper for an instance busy nearly all the time, request-based for one mostly
// idle; they cross at the break-even the published prices give.
func TestBillRequestVersusInstanceBased(t *testing.T) {
	if req, inst := cloudRunTotal(t, RequestBased, 0.99, 100), cloudRunTotal(t, InstanceBased, 0.99, 100); inst >= req {
		t.Errorf("busy 99%%: instance-based $%.2f not below request-based $%.2f", inst, req)
	}
	if req, inst := cloudRunTotal(t, RequestBased, 0.05, 1), cloudRunTotal(t, InstanceBased, 0.05, 1); req >= inst {
		t.Errorf("busy 5%%: request-based $%.2f not below instance-based $%.2f", req, inst)
	}

	// A rare request (one per 100 s) makes spells so long that rounding adds under 0.03% of the
	// month; the break-even is where b x (1 vCPU + 0.5 GiB at request prices) + the request fee
	// equals (1 vCPU + 0.5 GiB at instance prices).
	const rate = 0.01
	want := (CloudRunInstanceVCPUSecondUSD + 0.5*CloudRunInstanceGiBSecondUSD - rate*CloudRunPerMillionRequestsUSD/1e6) /
		(CloudRunRequestVCPUSecondUSD + 0.5*CloudRunRequestGiBSecondUSD)
	be := CloudRunBreakEven(1, 0.5, rate)
	if !near(be, want) || be < 0.5 || be > 0.95 {
		t.Fatalf("break-even %v, want %v", be, want)
	}
	below, above := be-0.01, be+0.01
	if req, inst := cloudRunTotal(t, RequestBased, below, rate), cloudRunTotal(t, InstanceBased, below, rate); req >= inst {
		t.Errorf("busy %.3f, below the break-even %.3f: request-based $%.3f not below instance-based $%.3f", below, be, req, inst)
	}
	if req, inst := cloudRunTotal(t, RequestBased, above, rate), cloudRunTotal(t, InstanceBased, above, rate); inst >= req {
		t.Errorf("busy %.3f, above the break-even %.3f: instance-based $%.3f not below request-based $%.3f", above, be, inst, req)
	}
}

// The free tier is a discount line of each resource's use up to its allowance at Tier 1 prices,
// only when asked for.
func TestBillCloudRunFreeTier(t *testing.T) {
	small := Usage{Billing: RequestBased, Instances: 1, VCPUs: 1, GiB: 0.5, RequestsPerS: 0.1, BusyShare: 0.01}
	if b := mustBill(t, small); b.Total() <= 0 || slices.ContainsFunc(b.Lines, func(l Line) bool { return l.USDPerMonth < 0 }) {
		t.Errorf("free tier subtracted by default: %+v", b.Lines)
	}
	small.CloudRunFreeTier = true
	if b := mustBill(t, small); math.Abs(b.Total()) > 1e-9 {
		t.Errorf("usage within the allowance costs $%v: %+v", b.Total(), b.Lines)
	}
	big := Usage{Billing: RequestBased, Instances: 4, VCPUs: 2, GiB: 2, RequestsPerS: 100, BusyShare: 0.9, CloudRunFreeTier: true}
	want := -(CloudRunFreeRequestVCPUSeconds*CloudRunRequestVCPUSecondUSD + CloudRunFreeRequestGiBSeconds*CloudRunRequestGiBSecondUSD +
		CloudRunFreeRequests/1e6*CloudRunPerMillionRequestsUSD)
	if l := line(t, mustBill(t, big), "Cloud Run free tier"); !near(l.USDPerMonth, want) {
		t.Errorf("request-based discount $%v, want $%v", l.USDPerMonth, want)
	}
	big.Billing = InstanceBased
	want = -(CloudRunFreeInstanceVCPUSeconds*CloudRunInstanceVCPUSecondUSD + CloudRunFreeInstanceGiBSeconds*CloudRunInstanceGiBSecondUSD)
	if l := line(t, mustBill(t, big), "Cloud Run free tier"); !near(l.USDPerMonth, want) {
		t.Errorf("instance-based discount $%v, want $%v", l.USDPerMonth, want)
	}
}

func TestBillRejectsBadUsage(t *testing.T) {
	run := Usage{Billing: RequestBased, Instances: 1, VCPUs: 1, GiB: 1, RequestsPerS: 5, BusyShare: 0.1}
	with := func(f func(*Usage)) Usage { u := run; f(&u); return u }
	for _, c := range []struct {
		name string
		u    Usage
		want string
	}{
		{"negative", with(func(u *Usage) { u.Instances = -1 }), "Instances = -1"},
		{"NaN", with(func(u *Usage) { u.RequestsPerS = math.NaN() }), "RequestsPerS = NaN"},
		{"Inf", Usage{Bucket: "GCS", StoredBytes: math.Inf(1)}, "StoredBytes = +Inf"},
		{"share above 1", with(func(u *Usage) { u.BusyShare = 1.5 }), "BusyShare = 1.5"},
		{"unknown billing", with(func(u *Usage) { u.Billing = "always" }), `Billing: cloud run billing "always"`},
		{"no vCPUs", with(func(u *Usage) { u.VCPUs = 0 }), "VCPUs = 0"},
		{"requests not busy", with(func(u *Usage) { u.BusyShare = 0 }), "BusyShare = 0 with RequestsPerS = 5"},
		{"busy without requests", with(func(u *Usage) { u.RequestsPerS = 0 }), "busy without requests"},
		{"requests without instances", Usage{RequestsPerS: 5}, "Instances = 0"},
		{"unknown bucket", Usage{Bucket: "B2", ClassAPerS: 1}, `Bucket: no bucket price list "B2": want one of GCS, S3, R2`},
		{"operations without a bucket", Usage{ClassBPerS: 1}, "Bucket is empty"},
		{"unknown network", Usage{Egress: []Egress{{What: "x", From: "Azure", BytesPerS: 1}}}, `Egress[0] (x).From = "Azure"`},
		{"negative egress", Usage{Egress: []Egress{{What: "x", From: NetworkGCP, BytesPerS: -5}}}, "Egress[0] (x).BytesPerS = -5"},
		{"NaN priced line", Usage{Priced: []Line{{Item: "disk", USDPerMonth: math.NaN(), How: "h"}}}, "Priced[0] (disk).USDPerMonth = NaN"},
		{"priced line without how", Usage{Priced: []Line{{Item: "disk", USDPerMonth: 1}}}, "needs its item and how"},
	} {
		_, err := c.u.Bill()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if b, err := (Usage{}).Bill(); err != nil || len(b.Lines) != 0 || b.Total() != 0 {
		t.Errorf("nothing used: %+v %v", b, err)
	}
}

func TestParseBilling(t *testing.T) {
	for _, b := range []Billing{RequestBased, InstanceBased} {
		if got, err := ParseBilling(string(b)); err != nil || got != b {
			t.Errorf("%s: %v %v", b, got, err)
		}
	}
	if _, err := ParseBilling("cpu-always"); err == nil || !strings.Contains(err.Error(), "request-based or instance-based") {
		t.Errorf("unknown mode: %v", err)
	}
}
