package results

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"persistlab/lib/readfile"
)

// MaxResultsBytes bounds a results file read back. Load decodes it a cell at a time, so a file
// costs what its cells decode to, never its bytes as well.
const MaxResultsBytes = 1 << 30

// maxV1Bytes bounds a file of the first format, which is read whole: its runs were small (a
// few dozen cells), and no run writes it any more.
const maxV1Bytes = 128 << 20

// Load reads a results file, converting the first format and filling what earlier versions did
// not record (FillResolved). Its aggregates are as the file holds them: report.Load derives them
// anew with this version's code.
func Load(path string) (*Results, error) {
	r, err := load(path)
	if err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	if r.Scenario == nil {
		return nil, fmt.Errorf("results %s: no scenario: the file is incomplete", path)
	}
	r.FillResolved()
	return r, nil
}

func load(path string) (*Results, error) {
	schema, err := readSchema(path)
	if err != nil {
		return nil, err
	}
	switch schema {
	case Schema:
		return decode(path)
	case schemaV1:
		data, err := readfile.Regular(path, maxV1Bytes)
		if err != nil {
			return nil, err
		}
		return fromV1(data)
	}
	return nil, fmt.Errorf("schema %q: this persistlab reads %q and %q", schema, Schema, schemaV1)
}

// openObject opens path and reads its opening brace: a results file is one JSON object, as
// written or gzip-compressed (results kept in the repository are), read through the same bound.
func openObject(path string) (*json.Decoder, io.Closer, error) {
	f, err := readfile.Open(path, MaxResultsBytes)
	if err != nil {
		return nil, nil, err
	}
	in := bufio.NewReaderSize(f, 1<<16) // the decoder alone reads in pieces of a few hundred bytes
	var body io.Reader = in
	if magic, _ := in.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		z, err := gzip.NewReader(in)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("not a results file: gzip: %w", err)
		}
		body = bufio.NewReaderSize(&boundedReader{r: z, left: MaxResultsBytes}, 1<<16)
	}
	dec := json.NewDecoder(body)
	tok, err := dec.Token()
	switch {
	case err == io.EOF:
		err = errors.New("the file is empty")
	case err != nil:
		err = fmt.Errorf("not a results file: %w", err)
	case tok != json.Delim('{'):
		err = fmt.Errorf("not a results file: it holds %v, not a JSON object", tok)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return dec, f, nil
}

// readSchema is the file's schema, "" if it names none. Files persistlab writes name it first
// (Results declares it first), so this reads a few bytes; a file whose keys were reordered (sorted
// by a tool) is scanned up to its schema, the values before it skipped, not kept.
func readSchema(path string) (string, error) {
	dec, f, err := openObject(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for dec.More() {
		key, err := nextKey(dec)
		if err != nil {
			return "", fmt.Errorf("not a results file: %w", err)
		}
		if !strings.EqualFold(key, "schema") { // as json.Unmarshal matches a field
			if err := skipValue(dec); err != nil {
				return "", fmt.Errorf("not a results file: field %s: %w", key, err)
			}
			continue
		}
		var schema string
		if err := dec.Decode(&schema); err != nil {
			return "", fmt.Errorf("not a results file: field schema: %w", err)
		}
		return schema, nil
	}
	return "", nil
}

// decode reads a file of the current format field by field, and the elements of its lists (cells,
// crashes) one at a time, so that its bytes are never all in memory. Unknown fields are skipped,
// as json.Unmarshal does; a field given twice, or anything after the object, is refused.
func decode(path string) (*Results, error) {
	r := &Results{}
	v := reflect.ValueOf(r).Elem()
	err := walk(path, func(dec *json.Decoder, field jsonField) error {
		return decodeField(dec, v.Field(field.index), field.name)
	})
	if err != nil {
		return nil, err
	}
	if r.Schema != Schema { // changed between the reads
		return nil, fmt.Errorf("schema %q: the file changed while it was read", r.Schema)
	}
	return r, nil
}

// walk reads the results object at path a field at a time, handing each field of Results to
// read, which must consume its value. Unknown fields are skipped, as json.Unmarshal does; a field
// given twice, or anything after the object, is refused.
func walk(path string, read func(dec *json.Decoder, field jsonField) error) error {
	dec, f, err := openObject(path)
	if err != nil {
		return err
	}
	defer f.Close()
	seen := map[string]bool{}
	for dec.More() {
		key, err := nextKey(dec)
		if err != nil {
			return err
		}
		field, known := fieldNamed(key)
		name := strings.ToLower(key)
		if known {
			name = field.name
		}
		if seen[name] {
			return fmt.Errorf("field %q appears twice: a results file holds each field once", key)
		}
		seen[name] = true
		if !known {
			if err := skipValue(dec); err != nil {
				return fmt.Errorf("field %s: %w", key, err)
			}
			continue
		}
		if err := read(dec, field); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the object's '}'
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the results object: a results file holds one JSON object")
	}
	return nil
}

// decodeField decodes a field's value into v; a list's elements one by one.
func decodeField(dec *json.Decoder, v reflect.Value, name string) error {
	if v.Kind() != reflect.Slice {
		if err := dec.Decode(v.Addr().Interface()); err != nil {
			return fmt.Errorf("field %s: %w", name, err)
		}
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("field %s: %w", name, err)
	}
	switch tok {
	case nil:
		v.SetZero() // null, as json.Unmarshal reads it
		return nil
	case json.Delim('['):
	default:
		return fmt.Errorf("field %s: %v where a list belongs", name, tok)
	}
	v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	for i := 0; dec.More(); i++ {
		elem := reflect.New(v.Type().Elem())
		if err := dec.Decode(elem.Interface()); err != nil {
			return fmt.Errorf("field %s[%d]: %w", name, i, err)
		}
		v.Set(reflect.Append(v, elem.Elem()))
	}
	if _, err := dec.Token(); err != nil { // the list's ']'
		return fmt.Errorf("field %s: %w", name, err)
	}
	return nil
}

// fieldNamed finds the field a key names as json.Unmarshal does: exactly, else ignoring case.
func fieldNamed(key string) (jsonField, bool) {
	for _, f := range resultsFields() {
		if f.name == key {
			return f, true
		}
	}
	for _, f := range resultsFields() {
		if strings.EqualFold(f.name, key) {
			return f, true
		}
	}
	return jsonField{}, false
}

func nextKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("%v where a field name belongs", tok)
	}
	return key, nil
}

// skipValue reads past one value, a token at a time, keeping none of it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// boundedReader fails once more than left bytes came through: a compressed file is held to the
// bound of what it decompresses to.
type boundedReader struct {
	r    io.Reader
	left int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("decompressed, larger than %d MiB", MaxResultsBytes>>20)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}
