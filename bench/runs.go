package main

// Repeated runs: each mode's measured workloads run -runs times against the
// same loaded graph and server; every figure reported is the median of the
// runs, and the table shows their spread.

import (
	"math"
	"reflect"
	"slices"
	"strconv"
)

// medianResult is a ModeResult whose every number is the median of that
// number over runs (element by element in lists of the same length; a list
// whose length differs between runs is taken from the first run). Strings
// come from the first run; the counts of server log problems are summed.
func medianResult(runs []*ModeResult) *ModeResult {
	if len(runs) == 0 {
		return nil
	}
	out := &ModeResult{}
	srcs := make([]reflect.Value, len(runs))
	for i, r := range runs {
		srcs[i] = reflect.ValueOf(r).Elem()
	}
	medianInto(reflect.ValueOf(out).Elem(), srcs)
	out.Runs = runs
	return out
}

func medianInto(dst reflect.Value, srcs []reflect.Value) {
	switch dst.Kind() {
	case reflect.Struct:
		for i := range dst.NumField() {
			if dst.Type().Field(i).Name == "Runs" {
				continue
			}
			fs := make([]reflect.Value, len(srcs))
			for k, s := range srcs {
				fs[k] = s.Field(i)
			}
			medianInto(dst.Field(i), fs)
		}
	case reflect.Float64:
		v := make([]float64, len(srcs))
		for k, s := range srcs {
			v[k] = s.Float()
		}
		dst.SetFloat(median(v))
	case reflect.Int, reflect.Int64:
		v := make([]float64, len(srcs))
		for k, s := range srcs {
			v[k] = float64(s.Int())
		}
		dst.SetInt(int64(math.Round(median(v))))
	case reflect.Slice:
		n := srcs[0].Len()
		for _, s := range srcs {
			if s.Len() != n {
				dst.Set(srcs[0])
				return
			}
		}
		if n == 0 {
			dst.Set(srcs[0])
			return
		}
		dst.Set(reflect.MakeSlice(dst.Type(), n, n))
		for i := range n {
			es := make([]reflect.Value, len(srcs))
			for k, s := range srcs {
				es[k] = s.Index(i)
			}
			medianInto(dst.Index(i), es)
		}
	case reflect.Map:
		sum := reflect.MakeMap(dst.Type())
		for _, s := range srcs {
			iter := s.MapRange()
			for iter.Next() {
				old := sum.MapIndex(iter.Key())
				v := iter.Value().Int()
				if old.IsValid() {
					v += old.Int()
				}
				sum.SetMapIndex(iter.Key(), reflect.ValueOf(v).Convert(dst.Type().Elem()))
			}
		}
		if sum.Len() > 0 {
			dst.Set(sum)
		}
	default:
		dst.Set(srcs[0])
	}
}

// median of v (the mean of the middle two for an even count); 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread of a figure over a mode's runs: its lowest and highest value.
func spread(m *ModeResult, get func(*ModeResult) float64) (lo, hi float64, ok bool) {
	if m == nil || len(m.Runs) < 2 {
		return 0, 0, false
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, r := range m.Runs {
		v := get(r)
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, true
}

// withSpread prints a median as "v ±p%", p being half the runs' range
// relative to v, when there are several runs.
func withSpread(m *ModeResult, get func(*ModeResult) float64) string {
	v := get(m)
	lo, hi, ok := spread(m, get)
	if !ok || v == 0 {
		return num(v)
	}
	return num(v) + " ±" + strconv.Itoa(int(math.Round(50*(hi-lo)/math.Abs(v)))) + "%"
}
