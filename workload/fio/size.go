package fio

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the binary multiples, largest first, so FormatSize finds the shortest exact form.
var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"PiB", 1 << 50},
	{"TiB", 1 << 40},
	{"GiB", 1 << 30},
	{"MiB", 1 << 20},
	{"KiB", 1 << 10},
}

// ParseSize reads a size the way scenarios write them: 512, 4k, 4K, 4KB, 4KiB, 200M, 1GiB.
//
// Every prefix is binary: k, K, KB and KiB all mean 1024. fio's own default (kb_base=1024) also
// reads k and KB as 1024, but it reads KiB as 1000 ("opposite from the standards ... for old
// scripts", fio's HOWTO; fio 3.33 runs size=4KiB as 4000 bytes). Job files therefore carry plain
// byte counts, never a suffix fio could read otherwise.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("size %q: empty; want a byte count with an optional unit such as 4k, 200MiB, 1G", s)
	}
	if t[0] == '-' {
		return 0, fmt.Errorf("size %q: negative; want a byte count of 0 or more", s)
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: want digits first, then an optional unit (k, m, g, t, p; KB = KiB = 1024)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w; want at most %d bytes", s, err, int64(math.MaxInt64))
	}
	factor, ok := sizeFactor(strings.ToLower(t[i:]))
	if !ok {
		return 0, fmt.Errorf("size %q: unit %q: want none, b, k, kb, kib, m, mb, mib, g, gb, gib, t, tb, tib, p, pb or pib (any case; all binary)", s, t[i:])
	}
	if n > math.MaxInt64/factor {
		return 0, fmt.Errorf("size %q: overflows; want at most %d bytes", s, int64(math.MaxInt64))
	}
	return n * factor, nil
}

func sizeFactor(unit string) (int64, bool) {
	if unit == "" || unit == "b" {
		return 1, true
	}
	letters := "kmgtp"
	at := strings.IndexByte(letters, unit[0])
	if at < 0 {
		return 0, false
	}
	switch unit[1:] {
	case "", "b", "i", "ib":
		return 1 << (10 * (at + 1)), true
	}
	return 0, false
}

// FormatSize writes the shortest exact form: 4KiB, 200MiB, 1GiB; 1000 bytes stays 1000B.
func FormatSize(n int64) string {
	if n != 0 {
		for _, u := range sizeUnits {
			if n%u.factor == 0 {
				return strconv.FormatInt(n/u.factor, 10) + u.suffix
			}
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
