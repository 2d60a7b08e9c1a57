package report

import (
	"math"
	"strconv"
	"strings"
)

// Unit is what an axis' values measure, which says how its ticks read.
type Unit string

const (
	UnitNone    Unit = ""      // a plain number, its unit in the axis label (MiB/s, requests/s)
	UnitBytes   Unit = "bytes" // bytes, read in KiB, MiB, GiB (1024-based, as fio's labels)
	UnitMs      Unit = "ms"    // milliseconds, read in ms or s
	UnitSeconds Unit = "s"     // seconds, read in s or ms
	UnitShare   Unit = "share" // a share of 1, read in %
	UnitCount   Unit = "count" // a whole number of things, with thousands separators
	UnitUSD     Unit = "USD"   // US dollars
)

// Axis is an axis as drawn: its range, its scale and its labelled ticks.
type Axis struct {
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Log   bool    `json:"log,omitempty"`
	Ticks []Tick  `json:"ticks"`
}

// Tick is a labelled value on an axis.
type Tick struct {
	V     float64 `json:"v"`
	Label string  `json:"label"`
}

// maxTicks bounds the ticks of an axis, so their labels do not run together.
const maxTicks = 8

// valueAxis is an axis from 0 (or below, for negative values) up to the first round value of the
// unit at or above hi, its ticks at round values of the unit.
func valueAxis(lo, hi float64, u Unit) Axis {
	lo, hi = min(lo, 0), max(hi, 0)
	if hi == lo {
		hi = lo + 1
	}
	scale, step := tickStep(lo, hi, u)
	a := Axis{Min: math.Floor(lo/step+1e-9) * step, Max: math.Ceil(hi/step-1e-9) * step}
	a.Ticks = linearTicks(a.Min, a.Max, step, scale, u)
	return a
}

// spanAxis is an axis over exactly lo..hi (x positions: where the data begins and ends), its
// ticks at round values of the unit inside it; whole says the values are whole numbers (VUs, a
// crash's number), so no tick falls between them.
func spanAxis(lo, hi float64, u Unit, whole bool) Axis {
	if hi == lo {
		lo, hi = lo-1, hi+1
	}
	scale, step := tickStep(lo, hi, u)
	if whole && step*scale < 1 {
		step = 1 / scale
	}
	return Axis{Min: lo, Max: hi, Ticks: linearTicks(lo, hi, step, scale, u)}
}

// logAxis is a logarithmic axis over lo..hi (both > 0): ticks at powers of two for bytes (each
// in its own unit: 4 KiB, 1 MiB), else at powers of ten, or 1-2-5 within a decade or two.
func logAxis(lo, hi float64, u Unit) Axis {
	if hi <= lo {
		lo, hi = lo/2, hi*2
	}
	a := Axis{Min: lo, Max: hi, Log: true}
	var values []float64
	if u == UnitBytes {
		first, last := int(math.Ceil(math.Log2(lo)-1e-9)), int(math.Floor(math.Log2(hi)+1e-9))
		for _, every := range []int{1, 2, 5, 10, 20} {
			values = values[:0]
			for e := ceilTo(first, every); e <= last; e += every {
				values = append(values, math.Exp2(float64(e)))
			}
			if len(values) <= maxTicks {
				break
			}
		}
	} else {
		for _, mantissas := range [][]float64{{1, 2, 5}, {1}} {
			values = values[:0]
			for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
				for _, m := range mantissas {
					if v := m * math.Pow(10, e); v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
						values = append(values, v)
					}
				}
			}
			if len(values) <= maxTicks {
				break
			}
		}
	}
	for _, v := range values {
		a.Ticks = append(a.Ticks, Tick{V: v, Label: formatValue(v, u)})
	}
	return a
}

// ceilTo is the first multiple of n at or above e.
func ceilTo(e, n int) int {
	return int(math.Ceil(float64(e)/float64(n))) * n
}

// tickStep picks the unit ticks are read in (scale: the value of one displayed unit, 1 MiB for
// a bytes axis reaching 300 MiB) and a step of 1, 2 or 5 times a power of ten of that unit.
func tickStep(lo, hi float64, u Unit) (scale, step float64) {
	scale = displayScale(max(math.Abs(lo), math.Abs(hi)), u)
	span := (hi - lo) / scale
	mag := math.Pow(10, math.Floor(math.Log10(span/maxTicks)))
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * mag
		if span/step <= maxTicks {
			break
		}
	}
	if u == UnitCount {
		step = max(step, 1)
	}
	return scale, step * scale
}

// displayScale is the value of the unit an axis reaching top is read in.
func displayScale(top float64, u Unit) float64 {
	switch u {
	case UnitBytes:
		return bytesUnit(top).size
	case UnitMs:
		if top >= 2000 {
			return 1000
		}
	case UnitSeconds:
		if top < 1 {
			return 0.001
		}
	case UnitShare:
		return 0.01
	}
	return 1
}

// linearTicks labels lo..hi every step, in the unit worth scale, with as many decimals as the step.
func linearTicks(lo, hi, step, scale float64, u Unit) []Tick {
	decimals := max(0, -int(math.Floor(math.Log10(step/scale)+1e-9)))
	var out []Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		n := "0" // zero plain, whatever the step's decimals
		if v != 0 {
			n = thousands(strconv.FormatFloat(v/scale, 'f', decimals, 64))
		}
		out = append(out, Tick{V: v, Label: withUnit(n, scale, u)})
	}
	return out
}

// withUnit appends the unit worth scale to a number written in it.
func withUnit(n string, scale float64, u Unit) string {
	switch u {
	case UnitBytes:
		if n == "0" {
			return n
		}
		return n + " " + bytesUnit(scale).name
	case UnitMs, UnitSeconds:
		if scale >= 1000 || (u == UnitSeconds && scale >= 1) {
			return n + " s"
		}
		return n + " ms"
	case UnitShare:
		return n + "%"
	case UnitUSD:
		if rest, neg := strings.CutPrefix(n, "-"); neg {
			return "-$" + rest
		}
		return "$" + n
	}
	return n
}

// formatValue writes one value in its own unit, to three significant figures (dollars to the
// cent from $1): a log axis' tick, a bar's figure.
func formatValue(v float64, u Unit) string {
	scale := displayScale(math.Abs(v), u)
	x := v / scale
	decimals := 0
	if ax := math.Abs(x); ax > 0 && ax < 100 {
		decimals = min(6, 2-int(math.Floor(math.Log10(ax)+1e-9)))
	}
	if u == UnitUSD && math.Abs(x) >= 1 {
		decimals = 2
	}
	n := strconv.FormatFloat(x, 'f', decimals, 64)
	if decimals > 0 && u != UnitUSD {
		n = strings.TrimRight(strings.TrimRight(n, "0"), ".")
	}
	return withUnit(thousands(n), scale, u)
}

// byteUnit is a binary unit of bytes.
type byteUnit struct {
	name string
	size float64
}

// bytesUnit is the largest binary unit not above v (B below 1 KiB).
func bytesUnit(v float64) byteUnit {
	for _, u := range []byteUnit{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v >= u.size {
			return u
		}
	}
	return byteUnit{"B", 1}
}

// thousands puts a comma between each three digits of a number's whole part: 12345.6 as 12,345.6.
func thousands(n string) string {
	sign, rest := "", n
	if strings.HasPrefix(rest, "-") {
		sign, rest = "-", rest[1:]
	}
	whole, frac := rest, ""
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		whole, frac = rest[:i], rest[i:]
	}
	if len(whole) <= 3 {
		return n
	}
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String() + frac
}
