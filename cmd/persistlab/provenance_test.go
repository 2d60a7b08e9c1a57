package main

import (
	"bytes"
	"strings"
	"testing"

	"persistlab/backend"
	"persistlab/provenance"
)

func TestProvenanceLabModelPrintsTheTables(t *testing.T) {
	var out bytes.Buffer
	if err := cmdLabModel([]string{"all"}, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, col := range []string{"MODEL", "FIGURE", "VALUE", "KIND", "SOURCE", "MOVES"} {
		if !strings.Contains(strings.SplitN(text, "\n", 2)[0], col) {
			t.Errorf("header lacks %s: %s", col, strings.SplitN(text, "\n", 2)[0])
		}
	}
	all := provenance.All()
	if lines := strings.Count(text, "\n"); lines != len(all)+1 {
		t.Errorf("%d lines for %d figures", lines, len(all))
	}
	for _, f := range all {
		if !strings.Contains(text, f.Name) {
			t.Errorf("no row for %s %q", f.Model, f.Name)
		}
	}
	out.Reset()
	if err := cmdLabModel([]string{"bucket"}, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\nvolume ") || !strings.Contains(out.String(), "61.8 MiB/s") {
		t.Errorf("lab model bucket:\n%s", out.String())
	}
	out.Reset()
	if err := cmdLabModel([]string{"volume", "--markdown"}, &out); err != nil || !strings.HasPrefix(out.String(), "| model | figure |") {
		t.Errorf("lab model volume --markdown: %v\n%.200s", err, out.String())
	}
	if err := cmdLabModel([]string{"disk"}, &out); err == nil || !strings.Contains(err.Error(), "bucket") {
		t.Errorf("an unknown model: %v", err)
	}
}

func TestProvenanceScenariosShow(t *testing.T) {
	var out bytes.Buffer
	if err := cmdScenariosShow([]string{"cloudrun-sqlite", "--provenance"}, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"backend gcsfuse: bucket model",
		"backend local: no cloud model",
		"calibration: app workload.cpu_per_request = 4.7ms, fitted from seed 000",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	if err := cmdScenariosShow([]string{"--provenance", "cloudrun-sqlite-rails"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "prediction: no figure fitted from seed 000 is in effect") {
		t.Errorf("the seed's own app fits nothing:\n%s", out.String())
	}
	out.Reset()
	if err := cmdScenariosShow([]string{"gcsfuse-fio", "--provenance"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"prediction: no figure fitted from seed 003 is in effect", "class B read latency median, model gcsfuse-bench-2024", "published"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("seed 003 on the page's figures: lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := cmdScenariosShow([]string{"cloudrun-sqlite"}, &out); err != nil || !strings.Contains(out.String(), "name: cloudrun-sqlite") {
		t.Errorf("show without --provenance: %v\n%.200s", err, out.String())
	}
}

// Every backend a scenario can name runs on a cloud model whose provenance table is linked, or
// says why its entries run on none.
func TestProvenanceEveryBackendHasAModel(t *testing.T) {
	for _, name := range backend.Names() {
		info, _ := backend.Lookup(name)
		switch {
		case info.CloudModel != "":
			if _, ok := provenance.Lookup(info.CloudModel); !ok {
				t.Errorf("backend %s: cloud model %q has no provenance table", name, info.CloudModel)
			}
		case info.NoModel == nil || info.NoModel(nil) == "":
			t.Errorf("backend %s: name its cloud model (backend.Info.CloudModel) or say why it has none (NoModel)", name)
		}
	}
}
