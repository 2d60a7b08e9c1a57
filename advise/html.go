package advise

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
)

// WriteHTML writes the advice as a self-contained page: the answer, the frontier chart (latency at
// the rate against the bill, each candidate a point, red where a crash lost acknowledged writes),
// the ranking and the rest as the text says them. No script: the chart is drawn here.
func (a Advice) WriteHTML(w io.Writer) error {
	var text strings.Builder
	if err := a.WriteText(&text); err != nil {
		return err
	}
	return pageTemplate.Execute(w, struct {
		Advice
		Chart template.HTML
		Text  string
	}{a, frontierSVG(a), text.String()})
}

var pageTemplate = template.Must(template.New("advise").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>persistlab advise: {{.Question}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; padding: 0 12px; color: #222; }
h1 { font-size: 20px; } .answer { border-left: 4px solid #1f77b4; background: #f4f8fb; padding: 8px 14px; margin: 14px 0; font-size: 15px; }
svg { display: block; width: 100%; height: auto; border: 1px solid #ddd; } svg text { font: 12px system-ui, sans-serif; fill: #333; }
pre { background: #f7f7f7; padding: 10px; overflow-x: auto; font-size: 12px; } .note { color: #666; font-size: 12px; }
</style></head><body>
<h1>{{.Question}}</h1>
<div class="answer"><p>{{.Answer}}.</p>{{range .Notes}}<p>{{.}}</p>{{end}}<p>Requirements: {{range $i, $r := .Requirements}}{{if $i}}; {{end}}<code>{{$r}}</code>{{end}}</p></div>
<h2>Latency against the bill</h2>
{{.Chart}}
<p class="note">Each candidate at the rate: its {{.Latency}} across, its bill for a month up; red where a crash lost acknowledged writes, green where none did, grey where its crash runs tell nothing; ringed: on the frontier (no other is at least as good on latency, lost writes and cost, and better on one). A candidate whose bill cannot be told sits at the top edge; one whose bill holds a bound (bucket operations too few to count) is drawn at the bound, a bar down to the rest of its bill.</p>
<h2>The ranking, and how far to trust it</h2>
<pre>{{.Text}}</pre>
</body></html>
`))

// frontierSVG draws each ranked candidate's latency at the rate (x, log scale: designs differ by
// orders of magnitude) against its monthly bill (y, from 0).
func frontierSVG(a Advice) template.HTML {
	const w, h, left, right, top, bottom = 900.0, 420.0, 70.0, 160.0, 20.0, 50.0
	type pt struct {
		name          string
		x, y          float64
		low           float64 // a bounded bill's lower end (y its upper); y where the bill is priced whole
		priced, front bool
		colour        string
	}
	var pts []pt
	minX, maxX, maxY := math.Inf(1), math.Inf(-1), 0.0
	for _, v := range a.Ranked {
		x, ok := v.Figures.AtRate[a.Latency]
		if !ok || x <= 0 {
			continue
		}
		p := pt{name: v.Candidate.Name, x: x, priced: v.Figures.Priced, front: v.Frontier, colour: "#999"}
		if p.priced {
			p.y = v.Figures.USD()
			p.low = p.y - v.Figures.AtMostUSD
			maxY = max(maxY, p.y)
		}
		if v.Figures.Crashes > 0 {
			p.colour = "#2e8b57"
			if v.Figures.Crash[MetricLostAcked] > 0 {
				p.colour = "#c0392b"
			}
		}
		minX, maxX = min(minX, x), max(maxX, x)
		pts = append(pts, p)
	}
	if len(pts) == 0 {
		return template.HTML(`<p class="note">No candidate has a latency at the rate to draw.</p>`)
	}
	lo, hi := math.Floor(math.Log10(minX)), math.Ceil(math.Log10(maxX))
	if hi <= lo {
		hi = lo + 1
	}
	if maxY == 0 {
		maxY = 1
	}
	maxY = niceCeil(maxY * 1.1)
	sx := func(x float64) float64 { return left + (math.Log10(x)-lo)/(hi-lo)*(w-left-right) }
	sy := func(y float64) float64 { return h - bottom - y/maxY*(h-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %.0f %.0f" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="latency against monthly bill">`, w, h)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#444"/>`, left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#444"/>`, left, top, left, h-bottom)
	for e := lo; e <= hi; e++ {
		x := sx(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#eee"/><text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`,
			x, top, x, h-bottom, x, h-bottom+16, template.HTMLEscapeString(fmtMs(math.Pow(10, e))))
	}
	for i := 0; i <= 4; i++ {
		y := maxY * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#eee"/><text x="%.0f" y="%.1f" text-anchor="end">$%g</text>`,
			left, sy(y), w-right, sy(y), left-6, sy(y)+4, y)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s at %s/s (log scale)</text>`, (left+w-right)/2, h-12, template.HTMLEscapeString(a.Latency), rateText(a.Rate))
	fmt.Fprintf(&b, `<text x="16" y="%.0f" transform="rotate(-90 16 %.0f)" text-anchor="middle">USD a month</text>`, (top+h-bottom)/2, (top+h-bottom)/2)
	for _, p := range pts {
		y := top
		if p.priced {
			y = sy(p.y)
		}
		x := sx(p.x)
		if p.front {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="10" fill="none" stroke="#1f77b4" stroke-width="2"/>`, x, y)
		}
		label := p.name
		switch {
		case !p.priced:
			label += " (bill untold)"
		case p.low < p.y:
			// A bill with a bound in it: the bar from what is priced to the bound, the point at the bound.
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`, x, sy(p.low), x, y, p.colour)
			label += " (at most)"
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="6" fill="%s"/><text x="%.1f" y="%.1f">%s</text>`, x, y, p.colour, x+12, y+4, template.HTMLEscapeString(label))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= v {
			return m * e
		}
	}
	return 10 * e
}
