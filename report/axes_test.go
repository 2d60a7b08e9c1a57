package report

import (
	"math"
	"regexp"
	"strings"
	"testing"
)

// checkLinear asserts what every linear axis owes its reader: ticks inside it, evenly spaced at
// 1, 2 or 5 times a power of ten of the unit shown, at most maxTicks+1 of them, the data inside.
func checkLinear(t *testing.T, a Axis, lo, hi float64, label *regexp.Regexp) {
	t.Helper()
	if a.Min > lo || a.Max < hi || len(a.Ticks) < 2 || len(a.Ticks) > maxTicks+1 {
		t.Fatalf("axis %+v for %g..%g", a, lo, hi)
	}
	step := a.Ticks[1].V - a.Ticks[0].V
	for i, tk := range a.Ticks {
		if tk.V < a.Min-1e-9*step || tk.V > a.Max+1e-9*step || (i > 0 && math.Abs(tk.V-a.Ticks[i-1].V-step) > 1e-6*step) {
			t.Errorf("tick %+v of %+v", tk, a)
		}
		if !label.MatchString(tk.Label) {
			t.Errorf("tick label %q does not match %s", tk.Label, label)
		}
	}
}

func TestAxesReadInTheirUnit(t *testing.T) {
	byteLabel := regexp.MustCompile(`^(0|[0-9.,]+ (B|KiB|MiB|GiB|TiB))$`)
	for _, hi := range []float64{700, 3 << 10, 300 << 20, 5.5 * (1 << 30)} {
		a := valueAxis(0, hi, UnitBytes)
		checkLinear(t, a, 0, hi, byteLabel)
		// One unit for the axis, the largest not above its top: 300 MiB reads in MiB.
		if want := bytesUnit(hi).name; !strings.HasSuffix(a.Ticks[len(a.Ticks)-1].Label, " "+want) {
			t.Errorf("axis to %g: top tick %q, want it in %s", hi, a.Ticks[len(a.Ticks)-1].Label, want)
		}
	}
	if a := valueAxis(0, 300<<20, UnitBytes); a.Ticks[1].V != 50<<20 || a.Ticks[1].Label != "50 MiB" {
		t.Errorf("300 MiB axis ticks %+v", a.Ticks)
	}

	checkLinear(t, valueAxis(0, 180, UnitMs), 0, 180, regexp.MustCompile(`^[0-9]+ ms$`))
	checkLinear(t, valueAxis(0, 2470, UnitMs), 0, 2470, regexp.MustCompile(`^[0-9.]+ s$`))
	checkLinear(t, valueAxis(0, 0.4, UnitSeconds), 0, 0.4, regexp.MustCompile(`^[0-9]+ ms$`))
	checkLinear(t, valueAxis(0, 0.37, UnitShare), 0, 0.37, regexp.MustCompile(`^[0-9]+%$`))
	checkLinear(t, valueAxis(0, 46.58, UnitUSD), 0, 46.58, regexp.MustCompile(`^\$[0-9]+$`))
	count := valueAxis(0, 12500, UnitCount)
	checkLinear(t, count, 0, 12500, regexp.MustCompile(`^[0-9]{1,3}(,[0-9]{3})*$`))
	if !strings.Contains(count.Ticks[len(count.Ticks)-1].Label, ",") {
		t.Errorf("no thousands separator: %+v", count.Ticks)
	}
	// A count of crashes: whole numbers only, however few.
	for _, tk := range spanAxis(1, 3, UnitCount, true).Ticks {
		if tk.V != math.Trunc(tk.V) {
			t.Errorf("count tick %+v", tk)
		}
	}
}

// fio's file sizes on a log axis: powers of two, each in its own binary unit, never a percentile.
func TestLogBytesAxis(t *testing.T) {
	a := logAxis(4<<10, 1<<30, UnitBytes)
	if len(a.Ticks) < 3 || len(a.Ticks) > maxTicks {
		t.Fatalf("ticks %+v", a.Ticks)
	}
	labels := map[string]bool{}
	for _, tk := range a.Ticks {
		if e := math.Log2(tk.V); e != math.Trunc(e) || tk.V < a.Min || tk.V > a.Max {
			t.Errorf("tick %+v is not a power of two inside the axis", tk)
		}
		if !regexp.MustCompile(`^[0-9]+ (KiB|MiB|GiB)$`).MatchString(tk.Label) {
			t.Errorf("tick label %q", tk.Label)
		}
		labels[tk.Label] = true
	}
	if !labels["1 MiB"] || !labels["1 GiB"] {
		t.Errorf("the powers of 1024 are not ticked: %+v", a.Ticks)
	}
	if a := logAxis(1, 64, UnitCount); a.Ticks[0].Label != "1" || a.Ticks[len(a.Ticks)-1].Label != "50" {
		t.Errorf("count log axis %+v", a.Ticks)
	}
}

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		u    Unit
		want string
	}{{46.584, UnitUSD, "$46.58"}, {0.05264, UnitUSD, "$0.0526"}, {1234.5, UnitUSD, "$1,234.50"}, {1536 << 10, UnitBytes, "1.5 MiB"},
		{2469.65, UnitMs, "2.47 s"}, {73.28, UnitMs, "73.3 ms"}, {0.25, UnitShare, "25%"}, {123456, UnitCount, "123,456"}} {
		if got := formatValue(c.v, c.u); got != c.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", c.v, c.u, got, c.want)
		}
	}
}

// A chart lays out whatever it holds: no points, one point, a log axis with nothing positive.
func TestLayoutOfLittle(t *testing.T) {
	for _, c := range []Chart{{}, {LogX: true, XUnit: UnitBytes}, {LogX: true, Series: []Series{{Points: [][2]float64{{0, 1}}}}},
		{Series: []Series{{Points: [][2]float64{{3, 0}}}}}, {LogX: true, XUnit: UnitBytes, Series: []Series{{Points: [][2]float64{{5, 1}, {7, 2}}}}},
		{Bars: []Bar{{Value: 0}}}} {
		c.Layout()
		a := c.X
		if len(a.Ticks) == 0 || math.IsNaN(a.Min) || math.IsInf(a.Min, 0) || math.IsNaN(a.Max) || math.IsInf(a.Max, 0) || !(a.Max > a.Min) {
			t.Errorf("%+v: x axis %+v", c, a)
		}
		if c.Bars == nil && (len(c.Y.Ticks) < 2 || !(c.Y.Max > c.Y.Min)) {
			t.Errorf("%+v: y axis %+v", c, c.Y)
		}
	}
}
