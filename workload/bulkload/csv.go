package bulkload

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// The rows loaded: seed 001 gives sizes only (31,017,889 lines in 31 GB, so about 1,000 bytes a
// line), no schema. This one is ours: a sequential key (so inserts append to the clustered
// index, as a dump's would), a few typed columns, and a payload that pads each line to
// RowBytes exactly. Tab-separated, LOAD DATA's default format; the payload is [0-9A-Za-z] only,
// so nothing needs escaping.

// CreateTable is the table each loader fills (%s: its name; %d: the payload's maximum length).
const CreateTable = `CREATE TABLE %s (
  id         BIGINT UNSIGNED  NOT NULL,
  user_id    INT UNSIGNED     NOT NULL,
  created_at DATETIME         NOT NULL,
  status     TINYINT UNSIGNED NOT NULL,
  amount     DECIMAL(12,2)    NOT NULL,
  payload    VARCHAR(%d)      NOT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=latin1`

// Columns are the table's columns in the file's order.
const Columns = "id, user_id, created_at, status, amount, payload"

// MinRowBytes is the shortest line: the fixed columns at their widest and one payload byte.
const MinRowBytes = 64

// rowEpoch is the first created_at: the seed's date.
var rowEpoch = time.Date(2018, 12, 16, 0, 0, 0, 0, time.UTC)

// Rows writes n lines of rowBytes each, ids from first+1, drawn from seed: one seed, one file.
func Rows(w io.Writer, seed uint64, first, n int64, rowBytes int) (int64, error) {
	if rowBytes < MinRowBytes {
		return 0, fmt.Errorf("row_bytes %d: want at least %d", rowBytes, MinRowBytes)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(first)))
	bw := bufio.NewWriterSize(w, 1<<20)
	const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	line := make([]byte, 0, rowBytes)
	var written int64
	for i := int64(1); i <= n; i++ {
		line = strconv.AppendInt(line[:0], first+i, 10)
		line = append(line, '\t')
		line = strconv.AppendUint(line, uint64(rng.Uint32N(10_000_000)), 10)
		line = append(line, '\t')
		line = rowEpoch.Add(time.Duration(first+i)*time.Second).AppendFormat(line, "2006-01-02 15:04:05")
		line = append(line, '\t')
		line = strconv.AppendUint(line, uint64(rng.UintN(8)), 10)
		line = append(line, '\t')
		cents := rng.Int64N(100_000_000)
		line = strconv.AppendInt(line, cents/100, 10)
		line = append(line, '.', byte('0'+cents/10%10), byte('0'+cents%10), '\t')
		for len(line) < rowBytes-1 {
			line = append(line, alnum[rng.IntN(len(alnum))])
		}
		line = append(line, '\n')
		if len(line) != rowBytes {
			return written, fmt.Errorf("row %d is %d bytes, want %d", first+i, len(line), rowBytes)
		}
		if _, err := bw.Write(line); err != nil {
			return written, err
		}
		written += int64(len(line))
	}
	return written, bw.Flush()
}

// PayloadMax is the payload column's width for lines of rowBytes.
func PayloadMax(rowBytes int) int { return max(1, rowBytes) }
