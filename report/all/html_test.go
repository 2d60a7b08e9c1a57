package all

import (
	"bytes"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"persistlab/report"
	"persistlab/report/reporttest"
	"persistlab/results"
	"persistlab/scenario"
)

const recorded = "../testdata/cloudrun-sqlite-quick.json" // a real `persistlab run cloudrun-sqlite --quick`

// checkScript, added to a page under test, records in the body every chart text whose box leaves
// its chart's, and how many texts it looked at.
const checkScript = `<script>
(function () {
  const out = [];
  let n = 0;
  for (const svg of document.querySelectorAll("svg[data-chart]")) {
    const box = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll("text")) {
      const b = t.getBoundingClientRect();
      n++;
      if (b.left < box.left - 0.5 || b.right > box.right + 0.5 || b.top < box.top - 0.5 || b.bottom > box.bottom + 0.5)
        out.push(svg.getAttribute("data-chart") + ": " + t.textContent);
    }
  }
  document.body.setAttribute("data-overflow", out.join(" | "));
  document.body.setAttribute("data-texts-checked", String(n));
})();
</script>
</body>`

// page is a results file's HTML page, its charts and the page with checkScript added.
type page struct {
	name   string
	charts []report.Chart
	html   []byte
}

func pageOf(t *testing.T, name string, r *results.Results) page {
	t.Helper()
	charts, err := report.ChartsFor(r)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if !strings.Contains(html, `content="default-src 'none';`) {
		t.Errorf("%s: no Content-Security-Policy forbidding requests", name)
	}
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).FindString(html); m != "" {
		t.Errorf("%s: page refers to the network: %q", name, m)
	}
	return page{name, charts, []byte(strings.Replace(html, "</body>", checkScript, 1))}
}

// The counter run (with crash runs added) and a fio run over file sizes, each drawn in headless
// Chromium: every chart drawn, no text outside its chart, a backend one colour everywhere, axes
// read in their unit; a screenshot shows the colours; the page asks the network for nothing.
func TestHTMLReportInABrowser(t *testing.T) {
	counter, err := report.Load(recorded)
	if err != nil {
		t.Fatal(err)
	}
	reporttest.CrashRuns(counter)
	report.Summarize(counter)
	// Long names and a long chart title, which must wrap or shorten within the chart.
	long := "gcsfuse with its file cache on, its metadata cache on, its stat cache on, its type cache on, parallel downloads on, " +
		"and a label long enough to run past the width of any chart"
	fio := reporttest.Fio([]scenario.BackendSpec{{Name: "gcsfuse"}, {Name: "gcsfuse", Label: long}, {Name: "local"}},
		scenario.Sweep{{Name: "file_size", Values: []string{"4KiB", "1MiB", "64MiB", "1GiB"}},
			{Name: "rw", Values: []string{"read", "read with a long description of what the run did, to stretch the chart's title over more than one line of the chart, " +
				"as a moments chart's title does"}}},
		func(b string, p map[string]string) float64 {
			return float64(len(b)) * results.ParamNumber(p["file_size"]) / (1 << 20)
		})
	report.Summarize(fio)
	pages := []page{pageOf(t, "counter", counter), pageOf(t, "fio", fio)}

	// Serve the pages on loopback and record every request the browser makes.
	var mu sync.Mutex
	var requested []string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		requested = append(requested, req.URL.Path)
		mu.Unlock()
		for _, p := range pages {
			if req.URL.Path == "/"+p.name+".html" {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write(p.html)
				return
			}
		}
		http.NotFound(w, req)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	url := func(p page) string { return fmt.Sprintf("http://%s/%s.html", ln.Addr(), p.name) }

	doms := map[string]string{}
	for _, p := range pages {
		dom := string(reporttest.Chromium(t, "--window-size=1200,1400", "--dump-dom", url(p)))
		doms[p.name] = dom
		if !strings.Contains(dom, fmt.Sprintf(`data-charts-drawn="%d"`, len(p.charts))) {
			t.Fatalf("%s: the page's script did not finish drawing %d charts:\n%.2000s", p.name, len(p.charts), dom)
		}
		for _, c := range p.charts {
			svg := chartSVG(dom, c.ID)
			if svg == "" {
				t.Errorf("%s: chart %s not drawn", p.name, c.ID)
				continue
			}
			if got := strings.Count(svg, "data-series="); got != len(c.Series) {
				t.Errorf("%s: chart %s: %d series drawn, want %d", p.name, c.ID, got, len(c.Series))
			}
			if got := strings.Count(svg, "data-bar="); got != len(c.Bars) {
				t.Errorf("%s: chart %s: %d bars drawn, want %d", p.name, c.ID, got, len(c.Bars))
			}
			if strings.Contains(svg, "NaN") {
				t.Errorf("%s: chart %s has NaN coordinates", p.name, c.ID)
			}
		}
		if m := regexp.MustCompile(`data-texts-checked="(\d+)"`).FindStringSubmatch(dom); m == nil || m[1] == "0" {
			t.Errorf("%s: the texts were not checked", p.name)
		}
		if m := regexp.MustCompile(`data-overflow="([^"]*)"`).FindStringSubmatch(dom); m == nil || m[1] != "" {
			t.Errorf("%s: texts outside their chart: %v", p.name, m)
		}
		checkColours(t, p.name, dom)
	}

	// The counter page: latency, rate, distribution, crash losses, the bucket's cost, and lost
	// writes against it; litestream the one colour in the latency chart, where it is the second
	// backend, and in the cost chart, where it is the only one.
	ids := map[string]bool{}
	for _, c := range pages[0].charts {
		ids[c.ID] = true
	}
	for _, id := range []string{"latency", "rate", "distribution", "crash-lost", "cost", "lost-against-cost"} {
		if !ids[id] {
			t.Errorf("counter page has no chart %s: %v", id, ids)
		}
	}
	latency, cost := groupColours(chartSVG(doms["counter"], "latency")), groupColours(chartSVG(doms["counter"], "cost"))
	if len(latency["litestream"]) != 1 || len(cost["litestream"]) != 1 || len(cost) != 1 || !sameSet(latency["litestream"], cost["litestream"]) {
		t.Errorf("litestream's colours: latency chart %v, cost chart %v (all of it %v)", latency["litestream"], cost["litestream"], cost)
	}
	for _, l := range tickLabels(chartSVG(doms["counter"], "latency"), "y") {
		if !regexp.MustCompile(`^[0-9.,]+ (ms|s)$`).MatchString(l) {
			t.Errorf("latency tick %q is not a duration", l)
		}
	}
	for _, l := range tickLabels(chartSVG(doms["counter"], "cost"), "x") {
		if !strings.HasPrefix(l, "$") {
			t.Errorf("cost tick %q is not in dollars", l)
		}
	}
	// The fio page: file sizes on the x axis, in binary units.
	fioCharts := 0
	for _, c := range pages[1].charts {
		if !strings.HasPrefix(c.ID, "mib-s-") {
			continue
		}
		fioCharts++
		labels := tickLabels(chartSVG(doms["fio"], c.ID), "x")
		if len(labels) < 3 {
			t.Errorf("fio chart %s x ticks %q", c.ID, labels)
		}
		for _, l := range labels {
			if !regexp.MustCompile(`^[0-9.,]+ (B|KiB|MiB|GiB|TiB)$`).MatchString(l) {
				t.Errorf("fio chart %s: file size tick %q is not in a byte unit", c.ID, l)
			}
		}
	}
	if fioCharts != 2 {
		t.Errorf("%d fio charts, want one per rw", fioCharts)
	}

	shot := filepath.Join(t.TempDir(), "report.png")
	reporttest.Chromium(t, "--window-size=1200,1400", "--screenshot="+shot, url(pages[0]))
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// The series' colours must be on the screenshot: blue, red and green lines of the three backends.
	palette := map[string][3]uint32{"blue": {0x1f, 0x77, 0xb4}, "red": {0xd6, 0x27, 0x28}, "green": {0x2c, 0xa0, 0x2c}}
	seen := map[string]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			for name, c := range palette {
				if near(r>>8, c[0]) && near(g>>8, c[1]) && near(bl>>8, c[2]) {
					seen[name]++
				}
			}
		}
	}
	for name := range palette {
		if seen[name] < 50 {
			t.Errorf("screenshot shows %d %s pixels: a series did not draw", seen[name], name)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	for _, p := range requested {
		if p != "/counter.html" && p != "/fio.html" && p != "/favicon.ico" { // the favicon is the browser's own request
			t.Errorf("the page requested %s", p)
		}
	}
}

// checkColours asserts that each group (a backend) has one colour on the whole page, in every
// chart, legend and table swatch, and that no two backends share one.
func checkColours(t *testing.T, name, dom string) {
	t.Helper()
	colours := groupColours(dom)
	owner := map[string]string{}
	for g, cs := range colours {
		if len(cs) != 1 {
			t.Errorf("%s: %s drawn in %d colours: %v", name, g, len(cs), cs)
		}
		for c := range cs {
			if other, ok := owner[c]; ok && other != g {
				t.Errorf("%s: %s and %s share colour %s", name, g, other, c)
			}
			owner[c] = g
		}
	}
	if len(colours) < 3 {
		t.Errorf("%s: %d coloured groups: %v", name, len(colours), colours)
	}
	swatches := regexp.MustCompile(`<span class="swatch" data-group="([^"]+)"`).FindAllStringSubmatch(dom, -1)
	if len(swatches) == 0 {
		t.Errorf("%s: no table names a backend with its colour", name)
	}
}

var (
	tagPattern  = regexp.MustCompile(`<(?:path|circle|line|rect|span)\b[^>]*\bdata-group="[^"]*"[^>]*>`)
	attrPattern = regexp.MustCompile(`([\w-]+)="([^"]*)"`)
)

// groupColours reads the colour each element drawn for a group carries: its stroke, else its
// fill, else its background.
func groupColours(dom string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, tag := range tagPattern.FindAllString(dom, -1) {
		attrs := map[string]string{}
		for _, m := range attrPattern.FindAllStringSubmatch(tag, -1) {
			attrs[m[1]] = m[2]
		}
		colour := attrs["stroke"]
		if colour == "" || colour == "none" {
			colour = attrs["fill"]
		}
		if colour == "" {
			colour = strings.TrimSpace(strings.TrimPrefix(attrs["style"], "background:"))
		}
		g := attrs["data-group"]
		if out[g] == nil {
			out[g] = map[string]bool{}
		}
		out[g][colour] = true
	}
	return out
}

func chartSVG(dom, id string) string {
	return regexp.MustCompile(`(?s)<svg[^>]*data-chart="` + regexp.QuoteMeta(id) + `".*?</svg>`).FindString(dom)
}

func tickLabels(svg, axis string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<text[^>]*data-axis="`+axis+`"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		out = append(out, m[1])
	}
	return out
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func near(a, b uint32) bool { return a+12 >= b && b+12 >= a }
