package provenance_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	_ "persistlab/backend/all" // ForScenario reads each backend's cloud model from its Info
	_ "persistlab/cost"        // registers its table
	"persistlab/lab/bucket"
	_ "persistlab/lab/instance" // registers its table
	_ "persistlab/lab/volume"   // registers its table
	"persistlab/provenance"
	provscenarios "persistlab/provenance/scenarios" // registers the app table
	"persistlab/scenario"
)

// outsideModel names the package-level numbers of the model packages that are not model figures,
// and why: the coverage test below asks every other one to have a row in its model's table.
var outsideModel = map[string]map[string]string{
	"bucket": {
		"maxWrites":   "how many object writes the accounting keeps for WritesSince: bookkeeping",
		"maxMetadata": "the most upload metadata the lab reads: input validation",
		"pipeDepth":   "upload pipeline buffers: the lab's own memory, not GCS's speed",
		"pipeBuffer":  "upload pipeline buffers: the lab's own memory, not GCS's speed",
	},
	"volume": {
		"MaxServiceTime": "the largest latency option a spec may set: input validation",
		"MaxMergeWindow": "the largest merge_window option a spec may set: input validation",
		"MinCreditScale": "the credit_scale option's range: input validation",
		"MaxCreditScale": "the credit_scale option's range: input validation",
		"clockTick":      "the emulator's timer granularity (its own fidelity, measured by its tests)",
		"imageChunk":     "the size of the pieces the image is written in on this machine: the emulator's own speed, not the cloud's",
		"probeBlock":     "the ceiling probe's I/O sizes: the lab's self-measurement",
		"probeSmall":     "the ceiling probe's I/O sizes: the lab's self-measurement",
		"probeParallel":  "the ceiling probe's depth: the lab's self-measurement",
		"probeSmallJobs": "the ceiling probe's depth: the lab's self-measurement",
		"probeSmallTime": "the ceiling probe's duration: the lab's self-measurement",
	},
	"instance": {
		"MinEmulatedCPUs": "the least quota the runner can give: input validation",
		"MaxEmulatedCPUs": "the most the runner's cpu_quota takes: input validation",
	},
}

var modelDirs = map[string]string{"bucket": "../lab/bucket", "volume": "../lab/volume", "prices": "../cost", "instance": "../lab/instance"}

// parsePackage parses a model package's non-test files.
func parsePackage(t *testing.T, dir string) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = f
	}
	return fset, files
}

// numericDecls lists a package's top-level constants and variables whose value is a number or a
// duration (a literal, an expression of them, or time.X), outside provenance.go.
func numericDecls(files map[string]*ast.File) []string {
	var names []string
	for name, f := range files {
		if name == "provenance.go" {
			continue
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name == "_" || i >= len(vs.Values) {
						continue
					}
					if isNumeric(vs.Values[i]) {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// isNumeric: the expression holds a number literal or a time unit and no string, composite
// literal or call (those are tables, errors, pools: not single figures).
func isNumeric(e ast.Expr) bool {
	numeric, other := false, false
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BasicLit:
			if x.Kind == token.INT || x.Kind == token.FLOAT {
				numeric = true
			} else {
				other = true
			}
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "time" {
				numeric = true
			}
		case *ast.CompositeLit, *ast.CallExpr, *ast.FuncLit:
			other = true
			return false
		}
		return true
	})
	return numeric && !other
}

// declared lists a package's top-level names: constants, variables, functions and types.
func declared(files map[string]*ast.File) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch g := d.(type) {
			case *ast.FuncDecl:
				if g.Recv == nil {
					out[g.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range g.Specs {
					switch s := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = true
						}
					case *ast.TypeSpec:
						out[s.Name.Name] = true
					}
				}
			}
		}
	}
	return out
}

var ident = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// roots are the identifiers a figure's Go names: each comma-separated part's leading one
// (DefaultModel().Write.Median -> DefaultModel), and every identifier of a plain list.
func roots(goField string) []string {
	var out []string
	for _, part := range strings.Split(goField, ",") {
		if m := ident.FindString(strings.TrimSpace(part)); m != "" {
			out = append(out, m)
		}
	}
	return out
}

func figuresOf(t *testing.T, model string) []provenance.Figure {
	t.Helper()
	m, ok := provenance.Lookup(model)
	if !ok {
		t.Fatalf("model %s is not registered", model)
	}
	return m.Figures()
}

func TestProvenanceFiguresAreComplete(t *testing.T) {
	for _, want := range []string{"app", "bucket", "instance", "volume"} {
		if _, ok := provenance.Lookup(want); !ok {
			t.Errorf("model %s not registered", want)
		}
	}
	seen := map[string]bool{}
	for _, f := range provenance.All() {
		if err := f.Check(); err != nil {
			t.Error(err)
		}
		if strings.HasPrefix(f.Value, "unset") {
			t.Errorf("%s %q: %s", f.Model, f.Name, f.Value)
		}
		key := f.Model + "/" + f.Name
		if seen[key] {
			t.Errorf("figure %s twice", key)
		}
		seen[key] = true
	}
	if len(seen) < 80 {
		t.Errorf("only %d figures: a table went missing", len(seen))
	}
}

// Every number the model packages declare has a row (or is named above as outside the model),
// and every row names code that exists.
func TestProvenanceCoversTheCode(t *testing.T) {
	for model, dir := range modelDirs {
		_, files := parsePackage(t, dir)
		decl := declared(files)
		named := map[string]bool{}
		for _, f := range figuresOf(t, model) {
			for _, r := range roots(f.Go) {
				named[r] = true
				if !decl[r] {
					t.Errorf("%s figure %q names %s, which %s does not declare", model, f.Name, r, dir)
				}
			}
		}
		nums := numericDecls(files)
		t.Logf("%s: %d numbers declared: %v", model, len(nums), nums)
		for _, n := range nums {
			if !named[n] && outsideModel[model][n] == "" {
				t.Errorf("%s: %s is a number of the model with no row in its provenance table (add one in %s/provenance.go, or say why it is outside the model in this test)", model, n, dir)
			}
		}
		for n := range outsideModel[model] {
			if !decl[n] {
				t.Errorf("%s: %s is named as outside the model but no longer declared", model, n)
			}
		}
	}
}

// The tables build each Value from the code: no number is typed into a Value's text (numbers in
// its expressions are unit conversions; "p99" and "per 1,000" are names of units).
func TestProvenanceValuesComeFromTheCode(t *testing.T) {
	verbs := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)
	units := strings.NewReplacer("p99", "", "per 1,000", "")
	for model, dir := range modelDirs {
		fset, files := parsePackage(t, dir)
		f := files["provenance.go"]
		if f == nil {
			t.Fatalf("%s has no provenance.go", dir)
		}
		found := 0
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if k, ok := kv.Key.(*ast.Ident); !ok || k.Name != "Value" {
				return true
			}
			found++
			ast.Inspect(kv.Value, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok {
					return true
				}
				if lit.Kind != token.STRING {
					return true // unit conversions: >> 20, 1e6, 1 << 20
				}
				text := units.Replace(verbs.ReplaceAllString(lit.Value, ""))
				if strings.ContainsAny(text, "0123456789") {
					t.Errorf("%s: %s: a number typed into a Value (%s): format it from the constant", model, fset.Position(lit.Pos()), lit.Value)
				}
				return true
			})
			return true
		})
		least := 10
		switch model {
		case "prices":
			least = 5 // the price lists hold five figures in all
		case "instance":
			least = 4 // three figures, and the file system calls' in one loop
		}
		if found < least {
			t.Errorf("%s: only %d Value fields found in provenance.go", model, found)
		}
	}
}

// Every field of the bucket's Model is a row of its table (DefaultModel's literals are figures
// too), and the per-object interval is the published constant.
func TestProvenanceCoversTheBucketModel(t *testing.T) {
	exempt := map[string]string{
		"Seed":                 "the latency draws' random seed: repeatability, not a figure",
		"ObjectUpdateInterval": "DefaultModel sets it to PublishedObjectUpdateInterval, whose row it is",
	}
	if bucket.DefaultModel().ObjectUpdateInterval != bucket.PublishedObjectUpdateInterval {
		t.Errorf("DefaultModel's per-object interval %v is not the published %v", bucket.DefaultModel().ObjectUpdateInterval, bucket.PublishedObjectUpdateInterval)
	}
	rows := map[string]bool{}
	for _, f := range figuresOf(t, "bucket") {
		rows[f.Go] = true
	}
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			fd := typ.Field(i)
			path := prefix + fd.Name
			if fd.Type.Kind() == reflect.Struct {
				walk(path+".", fd.Type)
				continue
			}
			if !rows["DefaultModel()."+path] && exempt[path] == "" {
				t.Errorf("bucket.Model.%s has no row DefaultModel().%s in the bucket's provenance table", path, path)
			}
		}
	}
	walk("", reflect.TypeOf(bucket.Model{}))
}

func TestProvenanceFittedFromSeeds(t *testing.T) {
	has := func(seed, goField string) bool {
		for _, f := range provenance.FittedFrom(seed) {
			if f.Go == goField {
				return true
			}
		}
		return false
	}
	if has("003", "DefaultModel().StreamBytesPerSecond") {
		t.Error("the stream bandwidth is listed as fitted from seed 003: it is published (gcsfuse's benchmark page, July 2024)")
	}
	if !has("000", "workload.cpu_per_request") {
		t.Error("cpu_per_request is not listed as fitted from seed 000")
	}
	seeds := map[string]bool{}
	for _, name := range scenario.Builtins() {
		if s, err := scenario.Load(name); err == nil && s.Seed != "" {
			seeds[s.Seed] = true
		}
	}
	for _, f := range provenance.All() {
		if f.Kind == provenance.Fitted && !seeds[f.FittedFrom] {
			t.Errorf("%s %q is fitted from seed %q, which no built-in scenario reproduces", f.Model, f.Name, f.FittedFrom)
		}
	}
}

// The CPU per request is what the seed's table gives: 20 VUs over the Litestream average at 20.
func TestProvenanceCPUFitMatchesTheSeedTable(t *testing.T) {
	vus, avg, err := provscenarios.Seed000LitestreamAt20()
	if err != nil {
		t.Fatal(err)
	}
	fit := time.Duration(avg / vus * float64(time.Millisecond))
	for _, f := range figuresOf(t, "app") {
		if f.Go != "workload.cpu_per_request" {
			continue
		}
		d, err := time.ParseDuration(f.Value)
		if err != nil {
			t.Fatal(err)
		}
		if r := float64(d) / float64(fit); math.Abs(r-1) > 0.02 {
			t.Errorf("cpu_per_request %v is not the seed's %v (20 VUs / %g ms)", d, fit, avg)
		}
		if !slices.Contains(f.Scenarios, "cloudrun-sqlite") || len(f.Scenarios) < 2 {
			t.Errorf("scenarios setting cpu_per_request: %v", f.Scenarios)
		}
		return
	}
	t.Error("no cpu_per_request figure")
}

func use(t *testing.T, uses []provenance.Use, goField string) provenance.Use {
	t.Helper()
	for _, u := range uses {
		if u.Go == goField {
			return u
		}
	}
	t.Fatalf("no use of %s among %d", goField, len(uses))
	return provenance.Use{}
}

func TestProvenanceBucketOptions(t *testing.T) {
	m, _ := provenance.Lookup("bucket")
	uses, err := m.For(map[string]string{"write_median": "20ms", "stream_mib_s": "100"})
	if err != nil {
		t.Fatal(err)
	}
	if u := use(t, uses, "DefaultModel().Write.Median"); u.Off || u.Note != "option write_median: 20ms" {
		t.Errorf("write median: %+v", u)
	}
	if u := use(t, uses, "DefaultModel().StreamBytesPerSecond"); u.Off || u.Note != "option stream_mib_s: 100" {
		t.Errorf("a replaced published figure: %+v", u)
	}
	if u := use(t, uses, "PublishedBenchSeqReadMiBps, PublishedBenchJobs"); !u.Off {
		t.Errorf("the page's read stays in effect with the bandwidth replaced: %+v", u)
	}
	if u := use(t, uses, "DefaultModel().Read.Median"); u.Off || u.Note != "" {
		t.Errorf("read median: %+v", u)
	}
	for _, u := range uses {
		if strings.HasPrefix(u.Go, "BenchModel()") || strings.HasPrefix(u.Go, "PublishedBenchFileRead") {
			t.Errorf("model gcs runs %s, a figure of model %s alone", u.Go, bucket.BenchModelName)
		}
	}
	// Model gcsfuse-bench-2024 reads with the median the page's per-file read gives, published.
	uses, err = m.For(map[string]string{"model": bucket.BenchModelName})
	if err != nil {
		t.Fatal(err)
	}
	if u := use(t, uses, "DefaultModel().Read.Median"); !u.Off {
		t.Errorf("model %s: the default read median stays in effect: %+v", bucket.BenchModelName, u)
	}
	if u := use(t, uses, "BenchModel().Read.Median"); u.Off || u.Kind != provenance.Published || u.Value != bucket.BenchModel().Read.Median.String() {
		t.Errorf("model %s: read median %+v", bucket.BenchModelName, u)
	}
	if u := use(t, uses, "PublishedBenchFileRead, PublishedBenchFileSize"); u.Off {
		t.Errorf("model %s: the page's per-file read is not in effect: %+v", bucket.BenchModelName, u)
	}
	uses, err = m.For(map[string]string{"model": "off"})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"DefaultModel().Write.Median", "DefaultModel().StreamBytesPerSecond", "PublishedObjectUpdateInterval", "gcs429", "z99"} {
		if !use(t, uses, g).Off {
			t.Errorf("model off: %s still in effect", g)
		}
	}
	if use(t, uses, "ClassA, ClassB, ClassFree").Off {
		t.Error("model off: the operations are still counted by class (and priced)")
	}
	if _, err := m.For(map[string]string{"model": "nope"}); err == nil {
		t.Error("a bad option passed")
	}
}

func TestProvenanceVolumeOptions(t *testing.T) {
	m, _ := provenance.Lookup("volume")
	uses, err := m.For(map[string]string{"type": "gp2", "size": "500GiB", "era": "2018", "instance": "c4.large", "latency": "2ms"})
	if err != nil {
		t.Fatal(err)
	}
	gos := map[string]bool{}
	for _, u := range uses {
		gos[u.Go] = true
	}
	for _, want := range []string{"GP2MaxIOPS2018", "GP2CreditBucket", "Instances[c4.large].IOPS", "PriceGP2PerGiBMonth"} {
		if !gos[want] {
			t.Errorf("gp2 of 2018 on c4.large lacks %s", want)
		}
	}
	for _, not := range []string{"GP2MaxIOPS", "GP3BaseIOPS", "ST1ServiceTime", "mb", "Instances[n1-standard-1].MemoryBytes"} {
		if gos[not] {
			t.Errorf("gp2 of 2018 on c4.large has %s", not)
		}
	}
	if u := use(t, uses, "SSDServiceTime"); !u.Off || u.Note != "option latency: 2ms" {
		t.Errorf("service time: %+v", u)
	}
	uses, err = m.For(map[string]string{"type": "st1", "size": "500GiB", "model": "off"})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range uses {
		if !u.Off {
			t.Errorf("model off: %s in effect", u.Go)
		}
	}
}

func TestProvenanceScenarios(t *testing.T) {
	for _, name := range scenario.Builtins() {
		s, err := scenario.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := provscenarios.ForScenario(s)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, tb := range p.Tables {
			if !tb.Found {
				t.Errorf("%s: table for %s has no backend entry", name, tb.Backend)
			}
			for _, u := range tb.Calibration {
				if u.FittedFrom != s.Seed {
					t.Errorf("%s: calibration from seed %s in seed %s's table", name, u.FittedFrom, s.Seed)
				}
			}
		}
		var b strings.Builder
		if err := p.Print(&b); err != nil || !strings.Contains(b.String(), "scenario "+name) {
			t.Errorf("%s: print: %v", name, err)
		}
	}
	calibration := func(name string) map[string][]string {
		s, _ := scenario.Load(name)
		p, err := provscenarios.ForScenario(s)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, tb := range p.Tables {
			for _, u := range tb.Calibration {
				out[tb.Backend] = append(out[tb.Backend], u.Go)
			}
		}
		return out
	}
	if c := calibration("cloudrun-sqlite"); !slices.Contains(c["gcsfuse"], "workload.cpu_per_request") || !slices.Contains(c["litestream"], "workload.cpu_per_request") {
		t.Errorf("cloudrun-sqlite: the Go counter's fitted CPU is not calibration for seed 000's tables: %v", c)
	}
	if c := calibration("cloudrun-sqlite-rails"); len(c) != 0 {
		t.Errorf("cloudrun-sqlite-rails (the seed's own app, nothing fitted): %v", c)
	}
	// Seed 003 runs on figures of gcsfuse's benchmark page of July 2024, none fitted from the
	// seed: its tables are predictions, on the page's per-file read and bandwidth.
	for _, name := range []string{"gcsfuse-fio", "gcsfuse-fio-depth64"} {
		if c := calibration(name); len(c) != 0 {
			t.Errorf("%s: calibration %v, want none", name, c)
		}
		s, err := scenario.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := provscenarios.ForScenario(s)
		if err != nil || len(p.Entries) == 0 {
			t.Fatalf("%s: %v %+v", name, err, p)
		}
		for _, e := range p.Entries { // the day's gcsfuse and the current one, on one model
			for _, g := range []string{"BenchModel().Read.Median", "DefaultModel().StreamBytesPerSecond"} {
				if u := use(t, e.Figures, g); u.Off || u.Kind != provenance.Published {
					t.Errorf("%s, %s: %s %+v, want published and in effect", name, e.ID, g, u)
				}
			}
		}
	}
}

// The bandwidth per request is published: gcsfuse's benchmark page of July 2024 (its commit and
// date named), 7,911 MiB/s over 128 jobs, 61.8 MiB/s each.
func TestProvenanceStreamBandwidthIsPublished(t *testing.T) {
	if got, want := bucket.DefaultModel().StreamBytesPerSecond, 7911.0/128*(1<<20); got != want {
		t.Errorf("bandwidth per request %v B/s, want the page's %v", got, want)
	}
	for _, f := range figuresOf(t, "bucket") {
		if f.Go != "DefaultModel().StreamBytesPerSecond" {
			continue
		}
		if f.Kind != provenance.Published || f.FittedFrom != "" || f.Value != "61.8 MiB/s" {
			t.Errorf("%+v", f)
		}
		for _, want := range []string{"GoogleCloudPlatform/gcsfuse", "docs/benchmarks.md", "8637ce1", "2024-07-02", "gcsfuse 2.2.0"} {
			if !strings.Contains(f.Source, want) {
				t.Errorf("source lacks %q: %s", want, f.Source)
			}
		}
		return
	}
	t.Error("no row for the bandwidth per request")
}

// docs/fidelity.md holds the tables as `persistlab lab model all --markdown`.
func TestProvenanceDocsHoldTheTables(t *testing.T) {
	data, err := os.ReadFile("../docs/fidelity.md")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := provenance.Markdown(&b, provenance.All()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), b.String()) {
		t.Error("docs/fidelity.md does not hold the current tables: paste the output of `persistlab lab model all --markdown` in place of its table")
	}
}

// A measured figure names how, on what, from which machine, when and in which profile; the
// table prints all of it; no other kind carries a measurement.
func TestProvenanceMeasuredFigureSaysWhereAndWhen(t *testing.T) {
	m := &provenance.Measurement{Target: "storage.googleapis.com/b", Machine: "vm-1 (Intel Xeon, Linux 6.1)", When: "2026-11-25T10:00:00Z", Profile: "p.yaml"}
	f := provenance.Figure{Model: "bucket", Name: "class B read latency median", Go: "DefaultModel().Read.Median", Value: "21ms",
		Kind: provenance.Measured, Source: "median of 300 GETs", Moves: "every read", Measurement: m}
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := provenance.Print(&b, []provenance.Figure{f}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"measured", "median of 300 GETs", m.Target, m.Machine, m.When, "profile p.yaml"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	noWhen := f
	noWhen.Measurement = &provenance.Measurement{Target: m.Target, Machine: m.Machine, Profile: m.Profile}
	assumed := f
	assumed.Kind, assumed.Source = provenance.Assumed, "a reason long enough to pass the check"
	for name, bad := range map[string]provenance.Figure{"no measurement": {Model: f.Model, Name: f.Name, Go: f.Go, Value: f.Value, Kind: provenance.Measured, Source: f.Source, Moves: f.Moves},
		"no time": noWhen, "assumed with a measurement": assumed} {
		if bad.Check() == nil {
			t.Errorf("%s: passes the check", name)
		}
	}
}
