package testrun

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// TimeScaleEnv names the setting that fixes the time scale.
const TimeScaleEnv = "TEST_TIME_SCALE"

// MaxMeasuredScale caps the scale measured from the load: past it a test
// is more likely stuck than slow.
const MaxMeasuredScale = 10

// TimeScale is the factor by which the tests stretch their deadlines: the
// number in TEST_TIME_SCALE when set (any positive number: 1 keeps every
// deadline as written, 3 triples them), otherwise the machine's load per
// CPU at this moment (the one-minute load average of /proc/loadavg over
// the CPUs this process may use), at least 1 and at most MaxMeasuredScale.
// On a quiet machine it is 1; on a 2-core machine at load 12 it is 6, as
// each runnable thread then gets a sixth of a core. Without /proc it is 1.
func TimeScale() (float64, error) {
	if v := strings.TrimSpace(os.Getenv(TimeScaleEnv)); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0) || f > 1000 {
			return 1, fmt.Errorf("%s=%q: want a positive number (a factor of every test deadline)", TimeScaleEnv, v)
		}
		return f, nil
	}
	return min(max(loadPerCPU(), 1), MaxMeasuredScale), nil
}

// loadPerCPU is the one-minute load average over the usable CPUs (0 when
// unknown).
func loadPerCPU() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return load / float64(runtime.NumCPU())
}

// Scale is d stretched by TimeScale (an invalid TEST_TIME_SCALE is an
// error).
func Scale(d time.Duration) (time.Duration, error) {
	f, err := TimeScale()
	return time.Duration(float64(d) * f), err
}
