package volume

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// pieces records each WriteAt it is given, into a buffer.
type pieces struct {
	buf  []byte
	cuts [][2]int64
}

func (p *pieces) WriteAt(b []byte, off int64) (int, error) {
	p.cuts = append(p.cuts, [2]int64{off, int64(len(b))})
	copy(p.buf[off:], b)
	return len(b), nil
}

func TestWriteAtPiecesEndOnChunkBoundaries(t *testing.T) {
	for _, c := range []struct{ off, n int64 }{
		{0, 1 << 20}, {4096, 4096}, {imageChunk - 512, 1024}, {12345, 3*imageChunk + 777}, {imageChunk, imageChunk},
	} {
		data := make([]byte, c.n)
		for i := range data {
			data[i] = byte(rand.IntN(256))
		}
		p := &pieces{buf: make([]byte, c.off+c.n)}
		n, err := writeAt(p, data, c.off)
		if err != nil || int64(n) != c.n {
			t.Fatalf("off %d len %d: wrote %d, %v", c.off, c.n, n, err)
		}
		if !bytes.Equal(p.buf[c.off:], data) {
			t.Errorf("off %d len %d: the bytes written differ from the data", c.off, c.n)
		}
		next := c.off
		for i, cut := range p.cuts {
			if cut[0] != next {
				t.Errorf("off %d len %d: piece %d starts at %d, want %d (contiguous)", c.off, c.n, i, cut[0], next)
			}
			end := cut[0] + cut[1]
			if cut[1] > imageChunk || (end%imageChunk != 0 && end != c.off+c.n) {
				t.Errorf("off %d len %d: piece %d is [%d, %d): longer than %d or ending off a boundary", c.off, c.n, i, cut[0], end, imageChunk)
			}
			next = end
		}
		want := (c.off+c.n+imageChunk-1)/imageChunk - c.off/imageChunk
		if int64(len(p.cuts)) != want {
			t.Errorf("off %d len %d: %d pieces, want %d (one per chunk touched)", c.off, c.n, len(p.cuts), want)
		}
	}
}

// BenchmarkSmallWriteAfterLargeWrites: 4 KiB random writes into a file first written in 1 MiB
// writes, as the image was before imageChunk (direct) and as it is now (chunked).
func BenchmarkSmallWriteAfterLargeWrites(b *testing.B) {
	for _, mode := range []string{"direct", "chunked"} {
		b.Run(mode, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "img"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			const size = 256 << 20
			big := make([]byte, 1<<20)
			for off := int64(0); off < size; off += int64(len(big)) {
				if mode == "direct" {
					_, err = f.WriteAt(big, off)
				} else {
					_, err = writeAt(f, big, off)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			small := make([]byte, 4096)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := writeAt(f, small, int64(rand.IntN(size/4096))*4096); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
