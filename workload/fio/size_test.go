package fio

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"512", 512},
		{"0", 0},
		{"512b", 512},
		{"512B", 512},
		{"4k", 4096},
		{"4K", 4096},
		{"4KB", 4096},
		{"4kb", 4096},
		{"4KiB", 4096}, // binary here, unlike fio's kb_base=1024 reading (4000)
		{"4ki", 4096},
		{"10KB", 10240},
		{"128KB", 131072},
		{"200M", 200 << 20},
		{"200MiB", 200 << 20},
		{"1G", 1 << 30},
		{"1GiB", 1 << 30},
		{"2t", 2 << 40},
		{"1PiB", 1 << 50},
		{" 8k ", 8192},
		{"9223372036854775807", 9223372036854775807},
		{"8191PiB", 8191 << 50},
	} {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestParseSizeRejects(t *testing.T) {
	for _, c := range []struct {
		in, says string
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"-4k", "negative"},
		{"k", "want digits first"},
		{"4x", `unit "x"`},
		{"4kk", `unit "kk"`},
		{"4 k", `unit " k"`},
		{"1.5G", `unit ".5G"`},
		{"0x10", `unit "x10"`},
		{"4kbit", `unit "kbit"`},
		{"8192PiB", "overflows"},
		{"9223372036854775808", "out of range"},
		{"99999999999999999999k", "out of range"},
	} {
		_, err := ParseSize(c.in)
		if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "want") {
			t.Errorf("ParseSize(%q) error %v; want one saying %q and what is allowed", c.in, err, c.says)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{
		{0, "0B"},
		{1, "1B"},
		{1000, "1000B"},
		{4096, "4KiB"},
		{10240, "10KiB"},
		{1536, "1536B"}, // 1.5 KiB: no whole unit above bytes
		{200 << 20, "200MiB"},
		{1 << 30, "1GiB"},
		{1<<30 + 4096, "1048580KiB"},
		{3 << 40, "3TiB"},
		{1 << 60, "1024PiB"},
	} {
		if got := FormatSize(c.in); got != c.want {
			t.Errorf("FormatSize(%d) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestFormatSizeRoundTrips(t *testing.T) {
	for _, n := range []int64{0, 1, 511, 4096, 10240, 1 << 20, 5 << 30, 1<<62 + 1} {
		back, err := ParseSize(FormatSize(n))
		if err != nil || back != n {
			t.Errorf("ParseSize(FormatSize(%d)=%q) = %d, %v", n, FormatSize(n), back, err)
		}
	}
}
