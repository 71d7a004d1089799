package api

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"io"
	"net/http"
	"testing"

	"feedservice/api/settings"
)

// TestFaviconServed: /favicon.ico, which browsers ask for on every page of
// the app and GraphiQL, is an icon (an ICO file of PNG images of the sizes
// its directory states), not a 404, with GraphiQL on or off.
func TestFaviconServed(t *testing.T) {
	t.Parallel()
	for _, graphiql := range []bool{true, false} {
		s := newTestServer(t, backendEmbedded, func(c *settings.Settings) { c.GraphiQL = graphiql })
		res, err := http.Get(s.URL + "/favicon.ico")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/x-icon" {
			t.Fatalf("GraphiQL %v: GET /favicon.ico: status %d, Content-Type %q", graphiql, res.StatusCode, res.Header.Get("Content-Type"))
		}
		var header struct{ Reserved, Kind, Count uint16 }
		if err := binary.Read(bytes.NewReader(body), binary.LittleEndian, &header); err != nil || header.Kind != 1 || header.Count == 0 {
			t.Fatalf("not an ICO file: header %+v (%v)", header, err)
		}
		for i := range int(header.Count) {
			entry := body[6+16*i : 6+16*(i+1)]
			size, offset := binary.LittleEndian.Uint32(entry[8:]), binary.LittleEndian.Uint32(entry[12:])
			img, err := png.Decode(bytes.NewReader(body[offset : offset+size]))
			if err != nil {
				t.Fatalf("image %d: %v", i, err)
			}
			if b := img.Bounds(); b.Dx() != int(entry[0]) || b.Dy() != int(entry[1]) {
				t.Errorf("image %d is %v, its entry says %dx%d", i, b, entry[0], entry[1])
			}
		}
	}
}
