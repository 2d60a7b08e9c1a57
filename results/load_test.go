package results

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// Load decodes a file field by field and a cell at a time into what json.Unmarshal makes of it,
// whichever field comes first: a tool that sorts the keys (jq -S) puts schema after cells.
func TestLoadReadsWhatUnmarshalReads(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "saved.json")
	if err := rich(t).Save(saved, nil); err != nil {
		t.Fatal(err)
	}
	unmarshalled := func(path string) *Results {
		data, _ := os.ReadFile(path)
		r := &Results{}
		if err := json.Unmarshal(data, r); err != nil {
			t.Fatal(err)
		}
		r.FillResolved() // as Load does
		return r
	}
	first, _ := Load(recorded)
	// Keys match fields whatever their case, as json.Unmarshal matches them ("Schema" too).
	data, _ := os.ReadFile(saved)
	capital := filepath.Join(dir, "capital.json")
	os.WriteFile(capital, bytes.Replace(data, []byte(`"schema"`), []byte(`"Schema"`), 1), 0o644)
	for path, want := range map[string]*Results{
		capital:                  unmarshalled(capital),
		saved:                    unmarshalled(saved),
		sorted(t, saved, dir):    unmarshalled(saved),
		sorted(t, recorded, dir): first, // the first format, converted
	} {
		got, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !reflect.DeepEqual(got, want) || len(got.Cells) == 0 {
			t.Errorf("%s: loaded %d cells, %d crashes, not what json.Unmarshal reads", path, len(got.Cells), len(got.Crashes))
		}
	}
}

// sorted writes path's object with its keys in alphabetical order, into dir.
func sorted(t *testing.T, path, dir string) string {
	t.Helper()
	data, _ := os.ReadFile(path)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	data, _ = json.Marshal(m) // a map's keys in order: "aggregates", "cells", ..., "schema", ...
	if bytes.Index(data, []byte(`"cells"`)) > bytes.Index(data, []byte(`"schema"`)) {
		t.Fatal("schema is not after cells")
	}
	out := filepath.Join(dir, "sorted-"+filepath.Base(path))
	os.WriteFile(out, data, 0o644)
	return out
}

func TestLoadRefusesRepeatedFieldsAndTrailingData(t *testing.T) {
	dir := t.TempDir()
	const head = `{"schema":"persistlab.results/2","scenario":{"name":"t"}`
	for name, tc := range map[string]struct{ content, want string }{
		"cells twice":            {head + `,"cells":[],"cells":[]}`, `field "cells" appears twice`},
		"cells twice, as Cells":  {head + `,"Cells":[],"cells":[]}`, `field "cells" appears twice`},
		"an unknown field twice": {head + `,"x":1,"x":[2]}`, `field "x" appears twice`},
		"schema twice":           {head + `,"schema":"persistlab.results/2"}`, `field "schema" appears twice`},
		"a second object":        {head + `} {}`, "data after the results object"},
		"garbage after":          {head + `}x`, "data after the results object"},
		"cells not a list":       {head + `,"cells":{}}`, "field cells: { where a list belongs"},
		"a cell of another kind": {head + `,"cells":[{"index":0},{"index":"one"}]}`, "field cells[1]: json: cannot unmarshal"},
		"cut short":              {head + `,"cells":[{"index":0},`, "field cells[1]"},
		"not an object":          {`["persistlab.results/2"]`, "not a results file"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		os.WriteFile(path, []byte(tc.content), 0o644)
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// Load never holds a file's bytes all at once: a file whose bytes are mostly what its results do
// not keep (a field of a later version in every cell) costs what its results decode to, not its
// size.
func TestLoadStreams(t *testing.T) {
	const cells = 256
	cell := `{"index":0,"backend":"a","metrics":{"ok":1},"later":"` + strings.Repeat("x", 64<<10) + `"}`
	content := `{"schema":"persistlab.results/2","scenario":{"name":"t"},"cells":[` + strings.Repeat(cell+",", cells-1) + cell + `]}`
	path := filepath.Join(t.TempDir(), "later.json")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := Load(path)
	runtime.ReadMemStats(&after)
	if err != nil || len(r.Cells) != cells || r.Cells[cells-1].M("ok") != 1 {
		t.Fatalf("%v, %d cells", err, len(r.Cells))
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > uint64(len(content)/4) {
		t.Errorf("reading a file of %d bytes allocated %d bytes", len(content), allocated)
	}
}

// A file is read up to 1 GiB (the first format's files, read whole, up to 128 MiB).
func TestLoadRefusesAFileOverAGiB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.json")
	if err := os.WriteFile(path, []byte(`{"schema":"persistlab.results/2"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, MaxResultsBytes+1); err != nil { // sparse: nothing is written
		t.Skip(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "larger than 1048576 KiB") {
		t.Errorf("%v", err)
	}
}

// A gzip-compressed results file (as the repository keeps them) loads as the file it holds; what
// it decompresses to is held to the same bound, and a damaged one is refused as not a results file.
func TestLoadReadsAGzippedFile(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "saved.json")
	if err := rich(t).Save(saved, nil); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(saved)
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(data)
	w.Close()
	zipped := filepath.Join(dir, "saved.json.gz")
	os.WriteFile(zipped, z.Bytes(), 0o644)
	want, err := Load(saved)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(zipped)
	if err != nil || !reflect.DeepEqual(got, want) || len(got.Cells) == 0 {
		t.Errorf("gzipped: %v, %d cells, not what the plain file loads", err, len(got.Cells))
	}
	damaged := filepath.Join(dir, "damaged.json.gz")
	os.WriteFile(damaged, z.Bytes()[:z.Len()/2], 0o644)
	if _, err := Load(damaged); err == nil || !strings.Contains(err.Error(), damaged) {
		t.Errorf("half a gzip file: %v", err)
	}
	b := &boundedReader{r: bytes.NewReader(make([]byte, 100)), left: 60}
	n, err := io.Copy(io.Discard, b)
	if n != 60 || err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("bounded at 60 of 100 bytes: read %d, %v", n, err)
	}
}
