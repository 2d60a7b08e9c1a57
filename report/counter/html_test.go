package counter

import (
	"bytes"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"persistlab/report"
)

// chromium runs Debian's headless Chromium (installed by scripts/setup) with the flags that keep
// it off the network on its own account.
func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not installed: run scripts/setup")
	}
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.Command(bin, append(base, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chromium: %v\n%s", err, errOut.String())
		}
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("chromium did not finish in 90 s")
	}
	return out.Bytes()
}

func TestHTMLReportDrawsInABrowserWithoutNetwork(t *testing.T) {
	r, err := report.Load(recorded)
	if err != nil {
		t.Fatal(err)
	}
	charts, err := report.ChartsFor(r)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if !strings.Contains(html, `content="default-src 'none';`) {
		t.Error("no Content-Security-Policy forbidding requests")
	}
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).FindString(html); m != "" {
		t.Errorf("page refers to the network: %q", m)
	}

	// Serve the page on loopback and record every request the browser makes.
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
		if req.URL.Path == "/report.html" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(page.Bytes())
			return
		}
		http.NotFound(w, req)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	url := fmt.Sprintf("http://%s/report.html", ln.Addr())

	dom := string(chromium(t, "--dump-dom", url))
	if !strings.Contains(dom, fmt.Sprintf(`data-charts-drawn="%d"`, len(charts))) {
		t.Fatalf("the page's script did not finish drawing %d charts:\n%.2000s", len(charts), dom)
	}
	for _, c := range charts {
		svg := regexp.MustCompile(`(?s)<svg[^>]*data-chart="` + c.ID + `".*?</svg>`).FindString(dom)
		if svg == "" {
			t.Errorf("chart %s not drawn", c.ID)
			continue
		}
		if got := strings.Count(svg, "data-series="); got != len(c.Series) {
			t.Errorf("chart %s: %d series drawn, want %d", c.ID, got, len(c.Series))
		}
		if strings.Contains(svg, "NaN") {
			t.Errorf("chart %s has NaN coordinates", c.ID)
		}
	}
	if len(charts) != 3 || len(charts[0].Series) != 3*3+2 { // med, avg, p95 per backend + the seed's two avg lines
		t.Errorf("charts %d, latency series %d", len(charts), len(charts[0].Series))
	}

	shot := filepath.Join(t.TempDir(), "report.png")
	chromium(t, "--window-size=1200,1400", "--screenshot="+shot, url)
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
		if p != "/report.html" && p != "/favicon.ico" { // the favicon is the browser's own request
			t.Errorf("the page requested %s", p)
		}
	}
}

func near(a, b uint32) bool { return a+12 >= b && b+12 >= a }
