//go:build ignore

// favicon_gen.go draws favicon.ico (go generate in web/): the app's accent
// blue in a rounded square, three white lines for a feed and the red dot of
// the unread count, in the colours of src/styles.css, at 16, 32 and 48
// pixels (PNG images in an ICO file, which every browser reads).
package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
)

var (
	accent = color.NRGBA{0x1d, 0x6f, 0xd6, 0xff} // --accent
	red    = color.NRGBA{0xe0, 0x24, 0x5e, 0xff} // --red, the dot's
	white  = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// draw is the icon at size pixels square, as a PNG.
func draw(size int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	s := float64(size)
	corner := s * 0.22
	inside := func(x, y float64) bool {
		cx := math.Max(corner, math.Min(s-corner, x))
		cy := math.Max(corner, math.Min(s-corner, y))
		return (x-cx)*(x-cx)+(y-cy)*(y-cy) <= corner*corner
	}
	for py := range size {
		for px := range size {
			x, y := float64(px)+0.5, float64(py)+0.5
			if !inside(x, y) {
				continue
			}
			c := accent
			for i, width := range []float64{0.62, 0.46, 0.54} {
				top := s * (0.30 + 0.18*float64(i))
				if y >= top && y < top+s*0.09 && x >= s*0.2 && x < s*(0.2+width) {
					c = white
				}
			}
			if dx, dy := x-s*0.76, y-s*0.26; dx*dx+dy*dy <= s*s*0.17*0.17 {
				c = red
			}
			img.SetNRGBA(px, py, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		log.Fatal(err)
	}
	return b.Bytes()
}

func main() {
	sizes := []int{16, 32, 48}
	images := make([][]byte, len(sizes))
	for i, size := range sizes {
		images[i] = draw(size)
	}
	// The ICO header, then one directory entry per image, then the images.
	var ico bytes.Buffer
	binary.Write(&ico, binary.LittleEndian, []uint16{0, 1, uint16(len(sizes))})
	offset := 6 + 16*len(sizes)
	for i, size := range sizes {
		ico.Write([]byte{byte(size), byte(size), 0, 0})
		binary.Write(&ico, binary.LittleEndian, []uint16{1, 32})
		binary.Write(&ico, binary.LittleEndian, []uint32{uint32(len(images[i])), uint32(offset)})
		offset += len(images[i])
	}
	for _, img := range images {
		ico.Write(img)
	}
	if err := os.WriteFile("favicon.ico", ico.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
